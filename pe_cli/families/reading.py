"""What the families' identification shares: reading positions back from sin/cos angles,
the float32 neighbours of a reading, and the round numbers a fitted base may be. Only
identification calls these (the small families, whose reading is their `candidates` method,
import them beside their builders); building a table never does.
"""

from __future__ import annotations

import math

from ..core.names import few


def comes_near(view, spec, within: float) -> bool:
    """Whether the exact table of `spec` is within `within` of the table at the rows scored,
    or is but for a few of its columns or rows (core.names.few: a buffer overwritten there, which
    the scorer lists as the exceptions to the table named). The distance is looked at first: a
    whole table costs no more than it did."""
    import numpy as np

    if spec is None:
        return False
    if view.distance(spec) <= within:
        return True
    far = ~(np.abs(view.exact(spec) - view.seen) <= within)  # NaN is far
    return few(int(np.count_nonzero(far.any(axis=0))), view.cols) or few(
        int(np.count_nonzero(far.any(axis=1))), view.length
    )


def leading_zero_rows(values) -> int:
    """How many rows of zeros the table starts with (a class row, text rows): a row of zeros
    but in a few columns (core.names.few: columns overwritten) among them; every row where
    all are zeros."""
    import numpy as np

    nonzero = np.count_nonzero(values, axis=1)
    for row, count in enumerate(nonzero.tolist()):
        if count and not few(count, values.shape[1]):
            return row
    return len(values)


def grid_starts(values, cols: int) -> tuple[list[int], object]:
    """Where the patches may start: past the rows of zeros the table starts with, and, where
    the rows after them up to the first row of sin/cos pairs are few (core.names.few: a class
    or text row overwritten), past those too; none where every row is zeros. With the test
    of rows that passes over those overwritten (whole_rows). For tables of sin/cos pairs."""
    import numpy as np

    zeros = leading_zero_rows(values)
    whole = whole_rows(values[zeros:], cols)
    if zeros == len(values):
        return [], whole
    kept = np.flatnonzero(whole(values[zeros:]))
    after = zeros + int(kept[0]) if len(kept) else zeros
    overwritten = int(np.count_nonzero(values[zeros:after].any(axis=1)))
    if after > zeros and few(overwritten, len(values)):
        return [zeros, after], whole
    return [zeros], whole


def whole_rows(values, cols: int):
    """A test of rows (an array of them: a mask) for those of sin/cos pairs, their squares
    summing to d/2, where all but a few of the rows at hand that are not zeros are (core.names
    .few: rows overwritten, which a reading passes over); where more are not, every row passes
    (a table of another norm, read as it is)."""
    import numpy as np

    def sincos(rows):
        return np.isclose(np.sum(rows**2, axis=1), cols / 2, rtol=0.1)

    off = int(np.count_nonzero(~sincos(values) & values.any(axis=1)))
    return sincos if off and few(off, len(values)) else (lambda rows: np.ones(len(rows), bool))


def digits(value: float) -> int:
    """Significant digits needed to write a float64 exactly as it reads back."""
    return next(k for k in range(1, 18) if float(f"{value:.{k}g}") == value)


def round_numbers(value: float, digits, within: float = math.inf, common=(), around: int = 0):
    """The numbers a config may write for a value read from a table: the `common` ones, then at
    each number of significant `digits` the value rounded (with `around` decimals of as many
    digits either side, nearest first); those within `within` of it (relative), in that order;
    none for a value that is not a finite number."""
    if not math.isfinite(value):
        return []
    found = list(common)
    for k in digits if value else ():
        step = 10.0 ** (math.floor(math.log10(abs(value))) - k + 1)
        rounded = float(f"{value:.{k}g}")
        near = sorted(
            (rounded + d * step for d in range(-around, around + 1)), key=lambda n: abs(n - value)
        )
        found += [float(f"{n:.{k}g}") for n in near]
    return [v for v in dict.fromkeys(found) if abs(v - value) <= within * max(abs(v), abs(value))]


# bases models use (vision and M-RoPE's too), the most common first
BASES = (10000.0, 100.0, 1000.0, 100000.0, 500000.0, 1000000.0, 10.0)


def plausible_bases(base: float, noise: float = 0.0) -> list[float]:
    """Round numbers within 5% of a fitted base, the fit itself, and the bases models use; the
    fit left out where a round one is within `noise` of it (relative: a least-squares fit is
    near 1e-7, its digits past that noise, its table a copy of the round one's)."""
    found = sorted(b for b in round_numbers(base, (2, 3, 4, 6), 0.05, (base, *BASES)) if b > 1)
    noisy = any(b != base and math.isclose(b, base, rel_tol=noise) for b in found)
    return [b for b in found if b != base or not noisy]


def joined(items, last: str = "and") -> str:
    """Items said in a sentence: a, b and c (or `last`)."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def read_positions(angles, frequencies, turns: int = 0):
    """Each row's position from the angles of its sin/cos pairs (atan2, known up to whole turns)
    at these frequencies: from the lowest frequency up, each angle taken in the turn nearest
    the estimate so far. Exact for positions below pi / the lowest frequency; past it (up to
    `turns` more whole turns of the lowest frequency's angle), each row keeps the number of
    turns whose reading its angles agree with best."""
    import numpy as np

    order = np.argsort(frequencies)
    w = np.asarray(frequencies, dtype=np.float64)[order]
    angles = np.asarray(angles)[:, order]
    estimate = (angles[:, :1] + 2 * np.pi * np.arange(turns + 1)) / w[0]  # (rows, turns)
    for i in range(1, len(w)):
        angle = angles[:, i : i + 1]
        estimate = (angle + 2 * np.pi * np.round((estimate * w[i] - angle) / (2 * np.pi))) / w[i]
    if not turns:
        return estimate[:, 0]
    misfit = np.zeros(estimate.shape)
    for i in np.unique(
        np.linspace(0, len(w) - 1, _MISFIT_FREQUENCIES).astype(int)
    ):  # spread from low to high
        misfit += np.abs(np.exp(1j * estimate * w[i]) - np.exp(1j * angles[:, i : i + 1]))
    return estimate[np.arange(len(estimate)), np.argmin(misfit, axis=1)]


_MISFIT_FREQUENCIES = 16  # frequencies that say which number of turns a row's angles agree with


def float32_near(values, steps: int = 3):
    """Each value as float32 and its `steps` float32 neighbours on either side: (..., 2 steps + 1),
    in order (a position read back from a float32 table is off by an ulp or two of its own).
    Those below 2^-32 are 0: exact positions take no finer binary places (binary_fractions)."""
    import numpy as np

    down, up = [np.asarray(values, dtype=np.float32)], [np.asarray(values, dtype=np.float32)]
    for _ in range(steps):
        down.append(np.nextafter(down[-1], np.float32(-np.inf)))
        up.append(np.nextafter(up[-1], np.float32(np.inf)))
    near = np.stack(down[:0:-1] + up, axis=-1)
    near[np.abs(near) < 2.0**-32] = 0
    return near


_PROBE = 16  # rows, spread over the table, that a builder must make before it builds all


def picked_per_row(view, values, tried, make, builders, groups=(slice(None),)) -> list:
    """Each row's values read back as the numbers a builder makes that row from: for each
    builder, the one among each row's `tried` (rows, len(groups), k) whose table (`make(builder,
    tried rows)`: a spec of one row per tried value, in turn) has that row's `groups` columns
    bit for bit, where every row has one: a (rows, len(groups)) array per builder, each once.
    Each builder is tried on a few rows first."""
    import numpy as np

    rows, cols = values.shape
    probe = np.unique(np.linspace(0, rows - 1, min(rows, _PROBE)).astype(int))
    found = []
    for built_by in builders:
        for taken in (probe, slice(None)) if len(probe) < rows else (slice(None),):
            spec = make(built_by, tried[taken])
            if spec is None:
                break
            made = view.built(spec).reshape(-1, tried.shape[2], cols)
            sames = [np.all(made[..., c] == values[taken][:, None, c], axis=2) for c in groups]
            if not all(same.any(axis=1).all() for same in sames):
                break
        else:
            at = np.arange(rows)
            picked = np.stack([tried[at, g, np.argmax(s, axis=1)] for g, s in enumerate(sames)], 1)
            if not any(np.array_equal(picked, other) for other in found):
                found.append(picked)
    return found


def divisors(count: int) -> list[int]:
    """count's divisors, in order: where a grid's next row (of patches, of frames) may start."""
    small = [d for d in range(1, math.isqrt(count) + 1) if count % d == 0]
    return sorted({*small, *(count // d for d in small)})
