"""`show --precision DTYPE`: what serving a table in a lower dtype does to it, figure by figure,
and from which position on.

- Positions held in the dtype (precision.positions): how many values are left, the first pair
  held as one, the share of adjacent pairs held as one; counted exactly.
- inv_freq held in the dtype: each frequency w rounded to the dtype's nearest value w~ turns
  position p's angle by p * |w~ - w|, wrapped to [0, pi]. Its largest value over the table and
  by band, and the first positions where it passes 0.1 rad and a quarter turn, are worked out
  in Decimal (70 digits) from the exact frequencies: a band's largest is at its ends or at a
  whole position next to an odd multiple of pi / |w~ - w|, so no position is sampled.
- The cos/sin cache held in the dtype: |round(a cos(p w)) - a cos(p w)| (and sin), every
  element, each angle reduced from p * w / 2pi split exactly (its error is about 1e-16 rad);
  the float64 cos and sin make each figure good to 1e-15.
- Where the family gives a library's own float32 frequencies (rope's --variant hf-rope:
  transformers', which torch computes), that library's angles fl32(fl32(p) * w32) against the
  exact p * w, every element, the difference taken exactly.

Everything is reduced by position band (metrics.position_bands) and, for the figure, by bin of
positions and band of frequencies; a table is gone through in blocks of rows, never held whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..core.errors import BadInput
from ..numerics.exact import grid_error, round_fraction
from ..numerics.frequencies import PI, context
from .metrics import error_bins, fold_bins, position_bands
from .precision import Positions, positions

THRESHOLDS = {"0.1": Decimal("0.1"), "pi/2": PI / 2}  # drifts whose first position is named
FREQUENCY_BANDS = 4  # the figure's curves: the frequencies in this many bands, fastest first
_ELEMENTS = 1 << 14  # elements a block: its float64 planes stay in the CPU's cache
_SPLIT = 26  # bits of the first part of a split frequency: p * part is exact below 2**27
LAST_POSITION = 1 << 26


@dataclass
class Drift:
    """inv_freq held in the dtype: the angle p * |w~ - w|, wrapped to [0, pi]."""

    max: float
    index: int  # the frequency where it is largest
    frequency: float
    held: float  # that frequency in the dtype
    position: int  # and a position where it is
    passes: dict  # threshold name -> the least position past it (None: no frequency moves)
    bands: list[float]


@dataclass
class Serving:
    dtype: str
    first: int
    length: int
    positions: Positions
    drift: Drift
    cache: list[float]  # by band: |cos, sin in the dtype - exact|
    library: str | None
    angles: list[float] | None  # by band: |the library's float32 angle - exact|
    verdict: list[str] = field(default_factory=list)
    curves: dict = field(default_factory=dict)  # the figure's: edges, frequency bands, series

    @property
    def last(self) -> int:
        return self.first + self.length - 1

    @property
    def library_own(self) -> str:
        """The library's name, possessive: "transformers'"."""
        name = self.library or ""
        return f"{name}'" if name.endswith("s") else f"{name}'s"

    def to_json(self) -> dict:
        p = self.positions
        return {
            "dtype": self.dtype,
            "positions": [self.first, self.last],
            **p.to_json(),
            "inv_freq_phase_error": self.drift.max,
            "inv_freq_phase_error_at": {
                "index": self.drift.index,
                "frequency": self.drift.frequency,
                "held": self.drift.held,
                "position": self.drift.position,
            },
            "inv_freq_phase_error_passes": self.drift.passes,
            "cache_error": max(self.cache),
            "float32_arithmetic": self.library,
            "float32_angle_error": None if self.angles is None else max(self.angles),
            "bands": [
                {
                    "positions": [b.first, b.stop - 1],
                    "distinct_positions": b.distinct,
                    "adjacent_equal_share": b.merged,
                    "inv_freq_phase_error": self.drift.bands[k],
                    "cache_error": self.cache[k],
                    "float32_angle_error": None if self.angles is None else self.angles[k],
                }
                for k, b in enumerate(p.bands)
            ],
            "verdict": self.verdict,
        }


def serving(served, dtype: str, figure: bool = False) -> Serving:
    """The view of a table the family describes as `served` (families.base.Served), held in
    `dtype`; with `figure`, the curves of the precision figure too."""
    first, length = served.first, served.length
    if first + length > LAST_POSITION:
        raise BadInput(
            f"--precision works out positions below 2**26 = {LAST_POSITION:,}; this table's "
            f"run to {first + length - 1:,}"
        )
    edges = np.array([0, *(stop for _, stop in position_bands(length))])
    deltas = _deltas(served.frequencies, dtype)
    drift = _drift(served.frequencies, deltas, first, edges)
    found = Serving(
        dtype, first, length, positions(dtype, first, length), drift, [], served.library, None
    )
    bins = error_bins(length) if figure else None
    _elements(served, dtype, edges, bins, found)
    found.verdict = _verdict(found)
    if figure:
        found.curves["drift"] = _drift_curves(deltas, first, bins)
        found.curves["edges"] = first + bins
    return found


# ---------------------------------------------------------------------------------------------
# inv_freq held in the dtype, in Decimal


def _deltas(frequencies, dtype: str) -> list[tuple[Decimal, float]]:
    """|w~ - w| of each frequency, and w~."""
    with context():
        found = []
        for w in frequencies:
            held = round_fraction(Fraction(w), dtype)
            found.append((abs(Decimal(held) - w), held))
        return found


def _wrapped(x: Decimal) -> Decimal:
    turn = 2 * PI
    rest = x % turn
    return min(rest, turn - rest)


def _wrapped_float(x: np.ndarray) -> np.ndarray:
    rest = np.mod(x, 2 * math.pi)
    return np.minimum(rest, 2 * math.pi - rest)


def _near_peaks(d: float, a: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
    """Whole positions in [a, c] where p * d, wrapped, may be largest: the ends, and those
    beside the first odd multiple of pi / d past a (each bin holds at most one peak's worth
    where it is asked per bin; a band is asked per peak by _largest)."""
    k = np.maximum(np.ceil((a * d / math.pi - 1) / 2), 0)
    centre = (2 * k + 1) * math.pi / d
    return [a, c, np.clip(np.floor(centre), a, c), np.clip(np.ceil(centre), a, c)]


def _largest(delta: Decimal, a: int, c: int) -> tuple[Decimal, int]:
    """The largest p * delta wrapped over whole p in a .. c, and a p where it is. The wrapped
    line rises to pi at each odd multiple of pi / delta and falls after: the candidates are the
    ends and the positions either side of each peak, ranked in float64 and the best few
    evaluated in Decimal."""
    if delta == 0:
        return Decimal(0), a
    d = float(delta)
    low = max(0, math.floor((a * d / math.pi - 1) / 2) - 1)
    high = math.floor((c * d / math.pi - 1) / 2) + 1
    candidates = {a, c}
    if high >= low:
        centre = (2 * np.arange(low, high + 1, dtype=np.float64) + 1) * math.pi / d
        near = np.clip(np.concatenate([np.floor(centre), np.ceil(centre)]), a, c)
        best = near[np.argsort(_wrapped_float(near * d))[-4:]]
        candidates.update(int(p) for p in best)
    with context():
        return max((_wrapped(p * delta), p) for p in sorted(candidates))


def _drift(frequencies, deltas, first: int, edges: np.ndarray) -> Drift:
    bands = []
    top = (Decimal(-1), 0, 0)
    for start, stop in zip(edges, edges[1:]):
        band = Decimal(0)
        for i, (delta, _) in enumerate(deltas):
            value, p = _largest(delta, first + int(start), first + int(stop) - 1)
            band = max(band, value)
            top = max(top, (value, -i, p))  # the fastest frequency where several tie
        bands.append(float(band))
    value, i, p = top
    moving = [delta for delta, _ in deltas if delta]
    with context():
        passes = {
            name: min(int(t / delta) + 1 for delta in moving) if moving else None
            for name, t in THRESHOLDS.items()
        }
    return Drift(float(value), -i, float(frequencies[-i]), deltas[-i][1], p, passes, bands)


def _drift_curves(deltas, first: int, bins: np.ndarray) -> list[np.ndarray]:
    """Each frequency band's largest drift in each bin of positions (float64: a drawing)."""
    a, c = first + bins[:-1].astype(np.float64), first + bins[1:].astype(np.float64) - 1
    curves = []
    for band in _frequency_bands(len(deltas)):
        worst = np.zeros(len(a))
        for d in (float(deltas[i][0]) for i in band):
            for p in _near_peaks(d, a, c) if d else []:
                worst = np.maximum(worst, _wrapped_float(p * d))
        curves.append(worst)
    return curves


def _frequency_bands(n: int) -> list[range]:
    count = min(FREQUENCY_BANDS, n)
    cuts = [round(k * n / count) for k in range(count + 1)]
    return [range(a, b) for a, b in zip(cuts, cuts[1:])]


# ---------------------------------------------------------------------------------------------
# The cache and the library's float32 angles, element by element


def _split(values: list[Decimal]) -> tuple[np.ndarray, np.ndarray]:
    """Each value as a float64 of _SPLIT significant bits and the float64 nearest the rest."""
    with context():
        heads, tails = [], []
        for v in values:
            m, e = math.frexp(float(v))
            head = math.ldexp(round(m * (1 << _SPLIT)), e - _SPLIT)
            heads.append(head)
            tails.append(float(v - Decimal(head)))
        return np.array(heads), np.array(tails)


def _elements(served, dtype: str, edges: np.ndarray, bins, found: Serving) -> None:
    with context():
        turns = [w / (2 * PI) for w in served.frequencies]
    t1, t2 = _split(turns)
    w1, w2 = _split(served.frequencies)
    factor = float(served.factor)
    library = served.float32 is not None
    w32 = np.asarray(served.float32, np.float32).astype(np.float64) if library else None
    groups = _frequency_bands(len(served.frequencies))
    bands = np.zeros((len(edges) - 1, 2))
    curves = None if bins is None else np.zeros((len(bins) - 1, 2, len(groups)))
    rows = max(1, _ELEMENTS // len(served.frequencies))
    for start in range(0, served.length, rows):
        stop = min(start + rows, served.length)
        p = np.arange(served.first + start, served.first + stop, dtype=np.float64)[:, None]
        angle = p * t1  # exact: p < 2**27 and t1 has 26 bits
        angle -= np.rint(angle)
        angle += p * t2
        angle -= np.rint(angle)
        angle *= 2 * math.pi
        cos, sin = np.cos(angle), np.sin(angle)
        if factor != 1:
            cos *= factor
            sin *= factor
        both = np.empty((stop - start, 2, len(t1)))
        np.maximum(grid_error(np, cos, dtype), grid_error(np, sin, dtype), out=both[:, 0])
        if library:  # fl32(fl32(p) * w32) less p * w1 is exact (Sterbenz), then less p * w2
            ours = (p.astype(np.float32).astype(np.float64) * w32).astype(np.float32)
            off = np.abs((ours - p * w1) - p * w2)
            both[:, 1] = _wrapped_float(off) if off.max(initial=0.0) > math.pi else off
        else:
            both[:, 1] = 0.0
        fold_bins(bands, edges, start, both.max(axis=2))
        if curves is not None:
            grouped = np.stack([both[:, :, g].max(axis=2) for g in groups], axis=2)
            fold_bins(curves, bins, start, grouped)
    found.cache = [float(x) for x in bands[:, 0]]
    found.angles = [float(x) for x in bands[:, 1]] if library else None
    if curves is not None:
        found.curves["cache"] = [curves[:, 0, k] for k in range(len(groups))]
        found.curves["groups"] = groups


# ---------------------------------------------------------------------------------------------
# In words


def _verdict(found: Serving) -> list[str]:
    dtype, last, drift = found.dtype, found.last, found.drift
    lines = []
    quarter = drift.passes["pi/2"]
    if quarter is None:
        lines.append(f"inv_freq held in {dtype} is inv_freq: {dtype} holds every frequency")
    elif quarter <= last:
        lines.append(
            f"served in {dtype} with inv_freq in {dtype}, this table is off by a quarter turn "
            f"from position {quarter:,}"
        )
    else:
        lines.append(
            f"served in {dtype} with inv_freq in {dtype}, this table is off by up to "
            f"{drift.max:.3g} rad; a quarter turn comes at position {quarter:,}, past its last "
            f"({last:,})"
        )
    cache = f"a {dtype} cos/sin cache is off by up to {max(found.cache):.3g}"
    if found.angles is not None:
        cache += f"; {found.library_own} float32 angles by up to {max(found.angles):.3g} rad"
    lines.append(cache)
    p = found.positions
    if p.first_collapse is None:
        lines.append(f"positions held in {dtype} stay apart up to {last:,}")
    else:
        lines.append(
            f"positions held in {dtype} run together from {p.first_collapse:,} "
            f"({p.first_collapse:,} and {p.first_collapse + 1:,} are one value): "
            f"{p.distinct:,} values for {found.length:,} positions"
            + (f"; from {p.lost:,} on they are inf" if p.lost is not None else "")
        )
    return lines


def of_spec(spec, dtype: str, figure: bool = False) -> Serving:
    """The view of a built table (a TableSpec) served in `dtype`."""
    from ..core.dtypes import DTYPE_ALIASES, FORMATS
    from ..families import FAMILIES

    name = DTYPE_ALIASES.get(dtype, dtype)
    if name not in FORMATS or name == "float64":
        raise BadInput(
            f"--precision {dtype}: the dtype a table is served in, bfloat16, float16 or float32"
        )
    return serving(FAMILIES[spec.family].served(spec), name, figure)
