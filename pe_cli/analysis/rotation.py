"""Reading a rotation back: what a rotary op did to activations, from BEFORE and AFTER.

A rotary op turns each pair of dims (i, j) of every query or key vector by an angle a(p, k) of
its position p and pair k. Written as complex numbers, z = x_i + i x_j before and w = y_i + i y_j
after, the op is w = c z with c = s exp(i a): one complex number per (position, pair), the same
for every vector (batch and head) at that position. Least squares over the vectors gives it:

    c(p, k) = sum_v w conj(z) / sum_v |z|^2

Which dims pair up is the first question. A rotation keeps each pair's length (times the one
scale s it may carry), and a wrong pairing does not: |w| = s |z| for every vector is the test,
and the pairing that passes it is the one the op applied:

    half         (i, i + R/2)   GPT-NeoX, Hugging Face's rotate_half
    interleaved  (2i, 2i + 1)   GPT-J, Meta's llama, ggml's NORM

R is the rotary dim: the dims after it pass through (a partial-rotary tail). Pairs inside R whose
angle is 0 at every position also pass through: proportional RoPE's zero-frequency pairs.

Nothing here names a table or prints; rotation_report.py names the angles and says what differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.dtypes import FORMATS
from ..core.errors import BadInput
from ..families import ROTARY_PAIRINGS, rotary_pairs

# The angle error of a rotation computed in a dtype of unit roundoff u, read back: each output
# component carries up to about 3u |z| (two products and a sum, rounded), so |w - c z| is at most
# 3 sqrt(2) u |z|; the cos and sin it applied were themselves rounded (sqrt(2) u). 6u is over both.
ANGLE_ULPS = 6


@dataclass(frozen=True)
class Activations:
    """BEFORE and AFTER as (positions, vectors, head_dim) float64, and what each vector is."""

    before: np.ndarray
    after: np.ndarray
    dtype: str  # the narrower of the two files' dtypes: the rounding the rotation carries
    positions: np.ndarray  # the position of each row (int64)
    vectors: list[str]  # "head 3", "batch 0 head 3", or "" where there is one vector

    @property
    def head_dim(self) -> int:
        return self.before.shape[2]

    @property
    def unit(self) -> float:
        """The unit roundoff of the dtype the rotation was rounded to."""
        return FORMATS[self.dtype].epsilon / 2

    @property
    def bound(self) -> float:
        """How far (radians) a recovered angle may be from the angle of the cos and sin the op
        applied, from the rounding of its output and table alone."""
        return ANGLE_ULPS * self.unit


def as_vectors(values: np.ndarray, label: str) -> tuple[np.ndarray, list[str]]:
    """An activation in one of the layouts people dump as (positions, vectors, head_dim):
    (positions, head_dim), (positions, heads, head_dim), or torch's (batch, heads, positions,
    head_dim)."""
    if values.ndim == 2:
        return values[:, None, :], [""]
    if values.ndim == 3:
        return values, [f"head {h}" for h in range(values.shape[1])]
    if values.ndim == 4:
        batch, heads, positions, dim = values.shape
        moved = np.moveaxis(values, 2, 0).reshape(positions, batch * heads, dim)
        names = [
            f"batch {b} head {h}" if batch > 1 else f"head {h}"
            for b in range(batch)
            for h in range(heads)
        ]
        return moved, names
    raise BadInput(
        f"{label} has shape {values.shape}: activations are (positions, head_dim), "
        "(positions, heads, head_dim) or (batch, heads, positions, head_dim)"
    )


def activations(
    before: np.ndarray,
    after: np.ndarray,
    dtype: str,
    positions=None,
    labels=("BEFORE", "AFTER"),
) -> Activations:
    """Check and reshape a pair of dumps (any of as_vectors' layouts, the same shape)."""
    for values, label in zip((before, after), labels):
        if values.ndim < 2:
            raise BadInput(f"{label} has shape {values.shape}: it needs a head_dim axis")
    if before.shape != after.shape:
        raise BadInput(
            f"{labels[0]} has shape {before.shape} and {labels[1]} {after.shape}: "
            "a rotation keeps the shape"
        )
    x, names = as_vectors(np.asarray(before, np.float64), labels[0])
    y, _ = as_vectors(np.asarray(after, np.float64), labels[1])
    if x.shape[2] % 2:
        raise BadInput(f"head_dim {x.shape[2]} is odd: a rotation turns pairs of dims")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise BadInput(f"{labels[0]} or {labels[1]} holds inf or nan")
    count = x.shape[0]
    if positions is None:
        positions = np.arange(count)
    positions = np.asarray(positions, dtype=np.int64)
    if positions.shape != (count,):
        raise BadInput(f"{len(positions)} positions given for {count} rows of activations")
    return Activations(x, y, dtype, positions, names)


# ---------------------------------------------------------------------------------------------
# Pairings and the fit of each


@dataclass(frozen=True)
class Pairing:
    name: str  # ROTARY_PAIRINGS: the pairs the op turns
    width: int  # the rotary dim R: dims 0..R-1 pair up, the rest pass through
    first: np.ndarray  # the dim of each pair's real part
    second: np.ndarray  # and of its imaginary part
    written: str = ""  # the pairing its output is laid out in, where another (DeepSeek's)

    @property
    def pairs(self) -> int:
        return len(self.first)

    @property
    def out(self) -> tuple[np.ndarray, np.ndarray]:
        """The dims each pair is written to."""
        return rotary_pairs(self.width, self.written) if self.written else (self.first, self.second)


def pairing(name: str, width: int, written: str = "") -> Pairing:
    return Pairing(name, width, *rotary_pairs(width, name), written)


def _hypotheses(width: int) -> list[Pairing]:
    """Each pairing written back in place, then each read in one pairing and written in another
    (transformers' DeepSeek-V3 turns interleaved pairs and writes them de-interleaved, in half
    order: q and k alike, so q.k is unchanged)."""
    found = [pairing(name, width) for name in ROTARY_PAIRINGS]
    found += [
        pairing(name, width, other)
        for name in ROTARY_PAIRINGS
        for other in ROTARY_PAIRINGS
        if other != name
    ]
    return found


@dataclass
class Fit:
    """One pairing's reading of the rotation."""

    pairing: Pairing
    misfit: float  # rms of |w| - s|z| over rms |z|: 0 for a rotation in this pairing
    scale: float  # s, the one length factor of every pair (1: a pure rotation)
    c: np.ndarray  # (positions, pairs) complex: each pair's rotation, common to the vectors
    spread: float  # rms of w - c z over rms |w|: 0 where every vector turns alike
    tail: float  # largest |after - before| of the dims past the rotary dim, over rms |x|

    @property
    def angles(self) -> np.ndarray:
        return np.angle(self.c)


def _complex(values: np.ndarray, p: Pairing) -> np.ndarray:
    return values[..., p.first] + 1j * values[..., p.second]


def _written(values: np.ndarray, p: Pairing) -> np.ndarray:
    first, second = p.out
    return values[..., first] + 1j * values[..., second]


def fit(act: Activations, p: Pairing) -> Fit:
    z, w = _complex(act.before, p), _written(act.after, p)
    power = np.sum(np.abs(z) ** 2, axis=1)  # (positions, pairs)
    c = np.divide(
        np.sum(w * np.conj(z), axis=1), power, out=np.zeros(power.shape, complex), where=power > 0
    )
    lengths = np.abs(z)
    total = float(np.sum(lengths**2)) or 1.0
    scale = float(np.sqrt(np.sum(np.abs(w) ** 2) / total))
    misfit = float(np.sqrt(np.sum((np.abs(w) - scale * lengths) ** 2) / total))
    spread = float(np.sqrt(np.sum(np.abs(w - c[:, None, :] * z) ** 2) / total))
    rest = act.after[..., p.width :] - act.before[..., p.width :]
    size = float(np.sqrt(np.mean(act.before**2))) or 1.0
    tail = float(np.max(np.abs(rest), initial=0.0)) / size
    return Fit(p, misfit, scale, c, spread, tail)


def _changed_dims(act: Activations) -> np.ndarray:
    """The dims AFTER differs from BEFORE in, anywhere, by more than one rounding of the dtype:
    a dim passed through (a partial-rotary tail, a zero-frequency pair: x cos 0 + r sin 0 is x)
    is BEFORE's own, while the slowest pair that turns moves by its sine times its partner."""
    moved = np.abs(act.after - act.before) > act.unit * (np.abs(act.before) + np.abs(act.after))
    return np.flatnonzero(np.any(moved, axis=(0, 1)))


def fits(act: Activations) -> list[Fit]:
    """Each pairing's fit, over the whole head_dim and over the dims up to the last one that
    changes (a partial-rotary tail), best first."""
    changed = _changed_dims(act)
    widths = {act.head_dim}
    if len(changed):
        last = int(changed[-1]) + 1
        widths.add(last + last % 2)
    found = [fit(act, p) for width in sorted(widths) for p in _hypotheses(width)]
    tolerance = _tolerance(act)
    # a fit within the rounding is as good as any other; among those the narrowest rotary dim
    # (the dims past it are seen unchanged) and the pairing tried first
    return sorted(
        found,
        key=lambda f: (
            max(f.misfit, f.tail) > tolerance,
            max(f.misfit, f.tail) if max(f.misfit, f.tail) > tolerance else 0.0,
            f.pairing.width,
            bool(f.pairing.written),
            ROTARY_PAIRINGS.index(f.pairing.name),
        ),
    )


def _tolerance(act: Activations) -> float:
    """How far from a rotation (relative) rounding alone takes a dump of this dtype."""
    return 8 * act.unit


# ---------------------------------------------------------------------------------------------
# What the fit says


@dataclass
class Line:
    """Each pair's angle as a line in position, a(p) = w_k p + phase_k (mod 2 pi)."""

    rates: np.ndarray  # w_k, radians per position
    phases: np.ndarray  # phase_k at position 0
    worst: float  # largest |a - line| over every position and pair (radians)


def line(angles: np.ndarray, positions: np.ndarray) -> Line | None:
    """The lines through each pair's angles, read from consecutive differences (each pair
    turning less than pi between rows); None where fewer than two positions or not increasing."""
    if len(positions) < 2 or np.any(np.diff(positions) <= 0):
        return None
    steps = np.diff(positions).astype(np.float64)[:, None]
    turns = np.angle(np.exp(1j * np.diff(angles, axis=0))) / steps  # wrapped to (-pi, pi]
    unwrapped = angles[0] + np.concatenate(
        [np.zeros((1, angles.shape[1])), np.cumsum(turns * steps, axis=0)]
    )
    p = positions.astype(np.float64)
    centred = p - p.mean()
    rates = (centred @ (unwrapped - unwrapped.mean(axis=0))) / float(centred @ centred)
    phases = unwrapped.mean(axis=0) - rates * p.mean()
    predicted = phases + np.outer(p, rates)
    worst = float(np.max(np.abs(np.angle(np.exp(1j * (angles - predicted))))))
    return Line(rates, phases, worst)


@dataclass
class Reading:
    """What the activations say of the rotation, before any table is named."""

    act: Activations
    fit: Fit | None  # None: no pairing fits
    tried: list[Fit]  # every pairing's fit, best first
    angles: np.ndarray | None  # (positions, pairs), radians
    turning: np.ndarray | None  # the pairs whose angle is not 0 at every position
    line: Line | None
    heads: list[str] = field(default_factory=list)  # vectors that turn otherwise than the rest
    head_worst: float = 0.0  # the largest angle (radians) between one of them and the rest

    @property
    def pairing(self) -> str | None:
        return None if self.fit is None else self.fit.pairing.name

    @property
    def rotary_dims(self) -> list[int]:
        """The dims that turn."""
        if self.fit is None or self.turning is None:
            return []
        p = self.fit.pairing
        return sorted(int(d) for k in self.turning for d in (p.first[k], p.second[k]))


def read_rotation(act: Activations) -> Reading:
    tried = fits(act)
    best = tried[0]
    tolerance = _tolerance(act)
    if max(best.misfit, best.tail) > tolerance:
        return Reading(act, None, tried, None, None, None)
    angles = best.angles
    changed = set(_changed_dims(act).tolist())
    p = best.pairing
    turning = np.array(
        [k for k in range(p.pairs) if {int(p.first[k]), int(p.second[k])} & changed], dtype=int
    )
    found = Reading(act, best, tried, angles, turning, line(angles, act.positions))
    if best.spread > tolerance:
        found.heads, found.head_worst = _odd_vectors(act, best)
    return found


def _odd_vectors(act: Activations, f: Fit) -> tuple[list[str], float]:
    """The vectors whose own rotation is not the common one: those that disagree with most of
    the others (each vector's angles, where its pairs are not too short to read)."""
    z, w = _complex(act.before, f.pairing), _written(act.after, f.pairing)
    lengths = np.abs(z)
    readable = lengths > 0.1 * np.sqrt(np.mean(lengths**2))
    own = np.angle(w * np.conj(z))  # (positions, vectors, pairs)
    count = own.shape[1]
    apart = np.zeros((count, count))
    for v in range(count):
        both = readable & readable[:, v : v + 1, :]
        gap = np.abs(np.angle(np.exp(1j * (own - own[:, v : v + 1, :]))))
        apart[v] = np.max(np.where(both, gap, 0.0), axis=(0, 2))
    limit = 4 * act.bound
    agree = (apart <= limit).sum(axis=1)
    centre = int(np.argmax(agree))
    odd = np.flatnonzero(apart[centre] > limit)
    return [act.vectors[v] or f"vector {v}" for v in odd], float(apart[centre].max())
