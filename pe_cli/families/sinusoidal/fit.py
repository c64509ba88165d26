"""What a sinusoidal table's angles say: the layout whose (sin, cos) column pairs turn at a
steady rate per row, its base, first position and zero rows. Two readers use it: compare's
finding that two tables differ by their base (`explain`), and identification (identify.py).
Numbers only: building a table never needs it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ...core.names import few

# column pairs (sin, cos) and frequency exponents e_i (w_i = base^-e_i) of each layout
_LAYOUTS = {
    "interleaved": lambda d: ([(2 * i, 2 * i + 1) for i in range(d // 2)], lambda i: 2 * i / d),
    "concat": lambda d: (
        [(i, (d + 1) // 2 + i) for i in range(d // 2)],
        lambda i: 2 * i / d,
    ),
    "timescale": lambda d: (
        [(i, d // 2 + i) for i in range(d // 2)],
        lambda i: i / max(d // 2 - 1, 1),
    ),
    "cos-timescale": lambda d: (
        [(d // 2 + i, i) for i in range(d // 2)],
        lambda i: i / max(d // 2 - 1, 1),
    ),
    "cos-half": lambda d: ([(d // 2 + i, i) for i in range(d // 2)], lambda i: i / (d // 2)),
}
LAYOUT_CONVENTIONS = {
    "interleaved": "vaswani",
    "concat": "concat",
    "timescale": "tensor2tensor",
    "cos-timescale": "musicgen",
    "cos-half": "timestep",
}


@dataclass
class Fit:
    """What a table's angles say: its layout, base, first position and zero rows."""

    layout: str
    base: float
    offset: int
    padding: object  # the all-zero rows (numpy indices)
    residual: float  # largest deviation of any angle from a straight line in position (radians)
    amplitude: float = 1.0  # the length of every (sin, cos) pair (x-transformers' scale)
    law_error: float = 0.0  # the largest relative distance of a pair's rate from base^-e_i
    drift: float = 0.0  # radians the law's angles stray from the measured ones over the rows


# the bases of real models' sinusoidal tables lie well inside these (diffusers' max_period
# 2000 and 10000, whisper's 10000, RoPE's up to some 1e7): a fit outside is no model's base
MODEL_BASES = (10.0, 1e8)
_FIT_RESIDUAL = 1e-3  # angles of a real table lie on lines to float rounding; seed 000's do not


class Miss(NamedTuple):
    """A layout whose first pair turns at 1 radian per row but whose pairs' lengths are not one
    number: the shortest and the longest."""

    layout: str
    shortest: float
    longest: float


def fit(values, misses: list | None = None, broken: bool = False) -> list[Fit]:
    """Every layout whose (sin, cos) column pairs turn at a steady rate per row; where `broken`,
    but for a few pairs (of more than 8) whose length changes and a few rows where most pairs'
    do (core.names.few), left out of the fit (columns or rows overwritten: identification
    reads the table they break); each layout whose pairs' lengths change is added to
    `misses`."""
    import numpy as np

    rows, d = values.shape
    if rows < 3 or d < 2:
        return []
    padding = np.nonzero(~values.any(axis=1))[0]
    fits, lines = [], {}  # the angles' lines, by column pairs (layouts share them)
    for layout, columns in _LAYOUTS.items():
        pairs, exponent = columns(d)
        if not pairs:
            continue
        live = np.nonzero(values.any(axis=1))[0]
        sin = values[live][:, [p[0] for p in pairs]]
        cos = values[live][:, [p[1] for p in pairs]]
        lengths = np.hypot(sin, cos)
        amplitude = float(np.median(lengths))
        close = np.isclose(lengths, amplitude, rtol=2e-2, atol=0)
        off = close.mean(axis=1) < 0.5  # rows where most pairs' length is not the table's
        if broken and few(int(off.sum()), rows):
            live, sin, cos, lengths, close = (a[~off] for a in (live, sin, cos, lengths, close))
        if len(live) < 3:  # too few rows that are not all zeros to fit a line through
            continue
        first = np.unwrap(np.arctan2(sin[:, 0], cos[:, 0]))
        if not math.isclose(np.polyfit(live, first, 1)[0], 1.0, rel_tol=1e-2):
            continue  # every layout has w_0 = 1 (a cheap look at one pair before all of them)
        # pairs whose length changes are left out of the fit where they are few; the scorer
        # says where the table is not the one read
        whole = close.all(axis=0)
        changed = len(pairs) - int(whole.sum())
        allowed = broken and len(pairs) > 8 and few(changed, d)
        if not (amplitude > 0 and whole[0] and (not changed or allowed)):
            if misses is not None:
                misses.append(Miss(layout, float(lengths.min()), float(lengths.max())))
            continue
        kept = np.flatnonzero(whole)
        key = (tuple(pairs), tuple(kept), live.tobytes())
        if key not in lines:
            angle = np.unwrap(np.arctan2(sin[:, kept], cos[:, kept]), axis=0)
            lines[key] = (angle, *np.polyfit(live, angle, 1))  # radians per row, one per pair
        angle, slope, intercept = lines[key]
        if not math.isclose(slope[0], 1.0, rel_tol=1e-2):
            continue  # every layout has w_0 = 1
        residual = float(np.max(np.abs(angle - intercept - np.outer(live, slope))))
        logs = [-math.log(w) / exponent(i) for i, w in zip(kept, slope) if i > 0 and 0 < w < 1]
        base = math.exp(float(np.median(logs))) if logs else 10000.0
        law = np.array([base ** -exponent(i) for i in kept])
        law_error = float(np.max(np.abs(slope / law - 1)))
        drift = float(np.max(np.abs(slope - law)) * (live[-1] - live[0]))
        offset = _first_position(intercept, law if law_error < 1e-3 else slope)
        fits.append(Fit(layout, base, offset, padding, residual, amplitude, law_error, drift))
    return fits


def _first_position(intercepts, frequencies) -> int:
    """The position of row 0 from each pair's angle there (its line's intercept, which every
    row's angle gives, noise averaged): from the lowest frequency up, each angle taken in the
    turn nearest the estimate so far; a reading a little below 0 is 0."""
    import numpy as np

    order = np.argsort(frequencies)
    w, angles = np.asarray(frequencies)[order], np.asarray(intercepts)[order]
    if w[0] <= 0:
        return 0
    slack = 0.1  # radians: noise may put position 0's angle just below a whole turn
    estimate = (np.mod(angles[0] + slack, 2 * math.pi) - slack) / w[0]
    for angle, rate in zip(angles[1:], w[1:]):
        estimate = (
            angle + 2 * math.pi * np.round((estimate * rate - angle) / (2 * math.pi))
        ) / rate
    return max(0, int(round(float(estimate))))


def _clean(found: Fit) -> bool:
    """Angles on lines to float rounding, at a base a model could have."""
    return found.residual < _FIT_RESIDUAL and MODEL_BASES[0] <= found.base <= MODEL_BASES[1]


def explain(va, vb, la: str, lb: str) -> list[str]:
    """compare's finding for two tables of the same shape: another base, or another frequency
    layout, where both tables' angles are clean lines."""
    fits_a = {f.layout: f for f in fit(va) if _clean(f)}
    fits_b = {f.layout: f for f in fit(vb) if _clean(f)}
    if not fits_a or not fits_b:
        return []
    for layout in fits_a.keys() & fits_b.keys():
        if math.isclose(fits_a[layout].base, fits_b[layout].base, rel_tol=1e-4):
            return []  # same frequencies: the difference is elsewhere
    shared = fits_a.keys() & fits_b.keys()
    if shared:
        layout = sorted(shared)[0]
        return [
            f"another base: with {LAYOUT_CONVENTIONS[layout]} frequencies {la} fits base "
            f"{fits_a[layout].base:.6g} and {lb} base {fits_b[layout].base:.6g}"
        ]
    return [
        f"another frequency family or layout: {la} fits {', '.join(sorted(fits_a))}, "
        f"{lb} fits {', '.join(sorted(fits_b))}"
    ]
