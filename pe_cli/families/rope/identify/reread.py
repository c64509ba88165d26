"""A column's frequency read again and again from a table of cos or sin values: a value
rounded to 8 or 11 bits (or 24) tells the angle at about 1 rad only to its rounding, but an
estimate good to e predicts the angle at row 0.3 / e to within 0.3 rad, which tells the turn it
is in; read there, the angle's error is the same, the frequency's 0.3 / e times smaller."""

from __future__ import annotations

_AHEAD = 0.3  # radians a read may be off at the next row tried (well within a quarter turn)


def reread(unit, part: str, dtype: str):
    """Frequencies of a plane of cos or sin values of angles p * w (p = 0, 1, ..., w below
    pi - 1): (w, a bound on each one's error). First read where the angle passes 1 rad (cos)
    or 0.5 rad (sin), where its inverse is unambiguous, or at the last row if it never does;
    then again and again further on."""
    import numpy as np

    from ....core.dtypes import ulp

    rows, n = unit.shape
    columns = np.arange(n)
    unit = np.clip(unit, -1, 1)
    slack = ulp(np.abs(unit), dtype) / 2 + 2e-7  # rounding to the dtype, and float32's before it
    inverse = np.arccos if part == "cos" else np.arcsin

    def read(rows_at, angle):  # w and its error bound from angles read at rows
        value, bound = unit[rows_at, columns], slack[rows_at, columns]
        run = np.sqrt(np.maximum(1 - value**2, 0))  # |d value / d angle|
        return angle / rows_at, np.minimum(
            bound / np.maximum(run, 1e-300), np.sqrt(2 * bound)
        ) / rows_at

    passed = unit[1:] <= np.cos(1.0) if part == "cos" else np.abs(unit[1:]) >= np.sin(0.5)
    at = np.where(passed.any(axis=0), np.argmax(passed, axis=0) + 1, rows - 1)
    w, error = read(at, inverse(np.abs(unit[at, columns]) if part == "sin" else unit[at, columns]))
    for _ in range(64):
        moving = w > 0
        reach = np.floor(_AHEAD / np.maximum(error, 1e-300))
        last = np.minimum(rows - 1, np.maximum(reach, 1)).astype(np.int64)
        if not np.any((last > at) & moving):
            break
        # a few rows back from the furthest: angles over half of it, one well conditioned
        tried = np.maximum(1, (last[None, :] * (1 - np.arange(5)[:, None] / 8)).astype(np.int64))
        predicted = tried * w[None, :]
        steep = np.abs(np.sin(predicted) if part == "cos" else np.cos(predicted))
        pick = tried[np.argmax(steep, axis=0), columns]
        guess, a = pick * w, inverse(unit[pick, columns])
        if part == "cos":  # 2 pi k +- a
            options = [a, -a]
        else:  # 2 pi k + a, 2 pi k + pi - a
            options = [a, np.pi - a]
        options = np.stack([o + 2 * np.pi * np.round((guess - o) / (2 * np.pi)) for o in options])
        angle = options[np.argmin(np.abs(options - guess), axis=0), columns]
        better = (pick > at) & moving
        found, bound = read(pick, angle)
        w, error = np.where(better, found, w), np.where(better, bound, error)
        at = np.where(better, pick, at)
    return w, error
