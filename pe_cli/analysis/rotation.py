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

from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from ..core.dtypes import FORMATS
from ..core.errors import BadInput
from ..families import ROTARY_PAIRINGS, rotary_pairs

# The angle error of a rotation computed in a dtype of unit roundoff u, read back: each output
# component carries up to about 3u |z| (two products and a sum, rounded), so |w - c z| is at most
# 3 sqrt(2) u |z|; the cos and sin it applied were themselves rounded (sqrt(2) u). 6u is over both.
ANGLE_ULPS = 6


BLOCK_ELEMENTS = 1 << 19  # the elements of each side read at once (2 MiB of float32)


@dataclass(frozen=True)
class Activations:
    """BEFORE and AFTER, read in blocks of rows as (rows, vectors, head_dim) float64, and what
    each vector is. `read(start, stop)` gives rows start..stop-1 of both."""

    read: Callable[[int, int], tuple[np.ndarray, np.ndarray]]
    shape: tuple[int, int, int]  # (positions, vectors, head_dim)
    dtype: str  # the narrower of the two files' dtypes: the rounding the rotation carries
    positions: np.ndarray  # the position of each row (int64); its index where `ids` differ
    vectors: list[str]  # "head 3", "batch 0 head 3", or "" where there is one vector
    # (axes, rows) int64: each row's position on each axis (M-RoPE's t, h, w), where given so
    ids: np.ndarray | None = None
    # the same rows in the dtype numpy computes the dump's values in (float32 for bfloat16),
    # where they are read from files: the reading's one pass reads these (the sums widen
    # each value where they use it), and the rebuild, which rounds to that dtype
    read_native: Callable[[int, int], tuple[np.ndarray, np.ndarray]] | None = None
    labels: tuple[str, str] = ("BEFORE", "AFTER")  # what the two are called, in refusals

    @property
    def axes_differ(self) -> bool:
        """Whether the rows' positions differ between axes: only then can a pair's axis be
        read (text tokens sit at (p, p, p), where M-RoPE turns as plain RoPE does)."""
        return self.ids is not None and bool(np.any(self.ids != self.ids[:1]))

    @property
    def head_dim(self) -> int:
        return self.shape[2]

    @property
    def block_rows(self) -> int:
        return max(1, BLOCK_ELEMENTS // (self.shape[1] * self.shape[2]))

    def blocks(self, native: bool = False) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(first row, BEFORE's rows, AFTER's rows) of each block, in order: float64, or with
        `native` in the dump's own computing dtype where the rows are read so."""
        rows = self.shape[0]
        read = self.read_native if native and self.read_native is not None else self.read
        for start in range(0, rows, self.block_rows):
            x, y = read(start, min(rows, start + self.block_rows))
            yield start, x, y

    @property
    def unit(self) -> float:
        """The unit roundoff of the dtype the rotation was rounded to."""
        return FORMATS[self.dtype].epsilon / 2

    @property
    def bound(self) -> float:
        """How far (radians) a recovered angle may be from the angle of the cos and sin the op
        applied, from the rounding of its output and table alone."""
        return ANGLE_ULPS * self.unit


def layout(shape: tuple[int, ...], label: str) -> tuple[tuple[int, int, int], list[str]]:
    """The (positions, vectors, head_dim) an activation of this shape is read as, and each
    vector's name: (positions, head_dim), (positions, heads, head_dim), or torch's (batch,
    heads, positions, head_dim)."""
    if len(shape) == 2:
        return (shape[0], 1, shape[1]), [""]
    if len(shape) == 3:
        return tuple(shape), [f"head {h}" for h in range(shape[1])]
    if len(shape) == 4:
        batch, heads, positions, dim = shape
        names = [
            f"batch {b} head {h}" if batch > 1 else f"head {h}"
            for b in range(batch)
            for h in range(heads)
        ]
        return (positions, batch * heads, dim), names
    raise BadInput(
        f"{label} has shape {tuple(shape)}: activations are (positions, head_dim), "
        "(positions, heads, head_dim) or (batch, heads, positions, head_dim)"
    )


def as_vectors(values: np.ndarray, label: str) -> tuple[np.ndarray, list[str]]:
    """An activation as (positions, vectors, head_dim), and each vector's name."""
    shape, names = layout(values.shape, label)
    if values.ndim == 4:
        values = np.moveaxis(values, 2, 0)
    return values.reshape(shape), names


def check_pair(first: tuple[int, ...], second: tuple[int, ...], labels) -> None:
    """Two activations' shapes, refused where no rotation takes one to the other."""
    for shape, label in zip((first, second), labels):
        if len(shape) < 2:
            raise BadInput(f"{label} has shape {tuple(shape)}: it needs a head_dim axis")
    if tuple(first) != tuple(second):
        raise BadInput(
            f"{labels[0]} has shape {tuple(first)} and {labels[1]} {tuple(second)}: "
            "a rotation keeps the shape"
        )


def activations(
    before: np.ndarray,
    after: np.ndarray,
    dtype: str,
    positions=None,
    labels=("BEFORE", "AFTER"),
) -> Activations:
    """Check and reshape a pair of dumps (any of layout's, the same shape)."""
    check_pair(np.shape(before), np.shape(after), labels)
    x, names = as_vectors(np.asarray(before, np.float64), labels[0])
    y, _ = as_vectors(np.asarray(after, np.float64), labels[1])
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise BadInput(f"{labels[0]} or {labels[1]} holds inf or nan")
    return checked(lambda a, b: (x[a:b], y[a:b]), x.shape, dtype, positions, names)


def checked(read, shape, dtype: str, positions, names: list[str]) -> Activations:
    """Activations of this (positions, vectors, head_dim) shape, their positions checked."""
    if shape[2] % 2:
        raise BadInput(f"head_dim {shape[2]} is odd: a rotation turns pairs of dims")
    count = shape[0]
    if positions is None:
        positions = np.arange(count)
    positions = np.asarray(positions, dtype=np.int64)
    ids = None
    if positions.ndim == 2:  # (axes, rows): several position axes
        if positions.shape[1] != count or not 2 <= positions.shape[0] <= 4:
            raise BadInput(
                f"positions of shape {positions.shape} for {count} rows of activations: "
                f"several axes are (axes, {count}), e.g. M-RoPE's (3, {count})"
            )
        ids = positions
        # where every axis agrees the rows are read as 1-D positions (plain RoPE), else by
        # their index, each pair's axis read in rotation_axes
        positions = ids[0] if not np.any(ids != ids[:1]) else np.arange(count)
    if positions.shape != (count,):
        raise BadInput(f"{len(positions)} positions given for {count} rows of activations")
    return Activations(read, tuple(shape), dtype, positions, names, ids)


# ---------------------------------------------------------------------------------------------
# Pairings and the fit of each


@dataclass(frozen=True, eq=False)
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


def view(indices: np.ndarray):
    """Evenly spaced dims as a slice, so that reading them makes no copy."""
    if len(indices) > 1 and np.all(np.diff(indices) == indices[1] - indices[0]):
        return slice(int(indices[0]), int(indices[-1]) + 1, int(indices[1] - indices[0]))
    return indices


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
    c: np.ndarray | None  # (positions, pairs) complex: each pair's rotation, common to the
    #                      vectors (None: not kept, for a pairing the first block ruled out)
    spread: float  # rms of w - c z over rms |w|: 0 where every vector turns alike
    tail: float  # largest |after - before| of the dims past the rotary dim, over rms |x|

    @property
    def angles(self) -> np.ndarray:
        """Each (position, pair)'s angle, float64, a slice of rows at a time (a long dump's
        rotations are kept in complex64: widened whole they would double)."""
        angles = np.empty(self.c.shape)
        for start in range(0, len(self.c), 8192):
            angles[start : start + 8192] = np.angle(self.c[start : start + 8192].astype(complex))
        return angles


def _complex(values: np.ndarray, p: Pairing) -> np.ndarray:
    return values[..., view(p.first)] + 1j * values[..., view(p.second)]


def _written(values: np.ndarray, p: Pairing) -> np.ndarray:
    first, second = p.out
    return values[..., view(first)] + 1j * values[..., view(second)]


try:  # the sums in one sweep of a block (setup.py builds it where a compiler is present)
    from ..numerics import _pairs
except ImportError:  # pragma: no cover - exercised by the fallback test
    _pairs = None

_KERNEL_KINDS = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}


def _kernel_ready(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether the C sums take this block: float32 or float64, C-contiguous, both alike."""
    return (
        _pairs is not None
        and x.dtype == y.dtype
        and x.dtype in _KERNEL_KINDS
        and x.flags.c_contiguous
        and y.flags.c_contiguous
    )


def _computable(values: np.ndarray) -> np.ndarray:
    """A block's values as the sums read them: float32 and float64 as they are (each widened
    to float64 where it is used), narrower ones widened exactly to float32."""
    if values.dtype in _KERNEL_KINDS:
        return values
    return values.astype(np.float32)


class _Sums:
    """One pairing's sums over the blocks: what its Fit is made of. The lengths' misfit is
    summed about a scale s0 read from the first block, so that nothing cancels when the true
    scale is found: sum (|w| - s|z|)^2 = A - 2 (s - s0) B + (s - s0)^2 sum |z|^2."""

    def __init__(self, p: Pairing, keep: bool, s0: float, rows: int = 0, kind=np.complex64):
        self.pairing, self.keep, self.s0 = p, keep, s0
        self.z2 = self.w2 = self.a = self.b = self.spread = 0.0
        # each row's rotations, kept in complex64 for dumps of float32 or narrower: that
        # holds their float32 cos and sin exactly (probe's) and any estimate to well within
        # the bound of the dump's rounding, in half complex128's memory
        self.c = np.empty((rows, p.pairs), kind) if keep else None
        self.filled = 0
        first, second = p.out
        self._dims = [np.ascontiguousarray(d, np.int64) for d in (p.first, p.second, first, second)]

    def add(self, x: np.ndarray, y: np.ndarray) -> bool:
        """A block's rows, (rows, vectors, head_dim): float32 or float64 (any dtype where the
        C sums are not built). Whether the sums are finite: every value of the pairs' dims is,
        where they are (a float64 dump's squares may overflow where its values do not)."""
        if _kernel_ready(x, y):
            power, wpower, cross = self._swept(x, y)
        else:
            power, wpower, cross = self._summed(x, y)
        z2, w2 = float(power.sum()), float(wpower.sum())
        finite = bool(np.isfinite(z2) and np.isfinite(w2))
        self.z2 += z2
        self.w2 += w2
        # a block that is not finite is refused by the pass (or, where a float64 dump's squares
        # overflow, its sums are inf): no warning of the arithmetic on it
        with np.errstate(invalid="ignore", over="ignore") if not finite else nullcontext():
            c = np.divide(cross, power, out=np.zeros(power.shape, complex), where=power > 0)
            # what the common rotation leaves of each (row, pair), over its vectors: sum |w|^2
            # less |sum w conj z|^2 / sum |z|^2 (in float64 the difference keeps what a float32
            # or half dump's rounding leaves, about 1e-14 of the sums, where 1e-16 cancels)
            left = wpower - np.divide(
                cross.real**2 + cross.imag**2, power, out=np.zeros(power.shape), where=power > 0
            )
            self.spread += float(np.sum(np.maximum(left, 0.0)))
        if self.keep:
            self.c[self.filled : self.filled + len(c)] = c
            self.filled += len(c)
        return finite

    def _swept(self, x: np.ndarray, y: np.ndarray):
        """The sums of a block in one sweep of its elements (_pairs.c), each value widened to
        float64 where it is used."""
        rows, vectors, dim = x.shape
        power, wpower, real, imag = (np.empty((rows, self.pairing.pairs)) for _ in range(4))
        a, b = _pairs.pair_sums(
            x, y, _KERNEL_KINDS[x.dtype], rows, vectors, dim, *self._dims, self.s0,
            power, wpower, real, imag,
        )  # fmt: skip
        self.a += a
        self.b += b
        cross = np.empty(power.shape, complex)
        cross.real, cross.imag = real, imag
        return power, wpower, cross

    def _summed(self, x: np.ndarray, y: np.ndarray):
        """The same sums with numpy, over float64 copies of the block."""
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        p = self.pairing
        # each pair's real and imaginary parts as views of the block (no copies), the sums
        # over the vectors as einsums
        zr, zi = x[..., view(p.first)], x[..., view(p.second)]
        first, second = p.out
        wr, wi = y[..., view(first)], y[..., view(second)]

        def dot(a, b):  # (rows, pairs): the sum over the vectors of a b
            return np.einsum("rvk,rvk->rk", a, b)

        lz2, lw2 = zr * zr, wr * wr
        lz2 += zi * zi
        lw2 += wi * wi
        power, wpower = lz2.sum(axis=1), lw2.sum(axis=1)  # (rows, pairs)
        lz, lw = np.sqrt(lz2, out=lz2), np.sqrt(lw2, out=lw2)
        off = lz * -self.s0
        off += lw
        self.b += float(np.einsum("rvk,rvk->", lz, off))
        self.a += float(np.einsum("rvk,rvk->", off, off))
        cross = np.empty(power.shape, complex)
        cross.real = dot(wr, zr) + dot(wi, zi)
        cross.imag = dot(wi, zr) - dot(wr, zi)
        return power, wpower, cross

    def fit(self, size: float, tail: float) -> Fit:
        """The fit, with `size` the rms of BEFORE's values and `tail` the largest |after -
        before| of the dims past this pairing's rotary dim."""
        total = self.z2 or 1.0
        scale = float(np.sqrt(self.w2 / total))
        step = scale - self.s0
        misfit = float(np.sqrt(max(self.a - 2 * step * self.b + step**2 * self.z2, 0.0) / total))
        c = self.c[: self.filled] if self.keep else None
        return Fit(self.pairing, misfit, scale, c, float(np.sqrt(self.spread / total)), tail / size)


class _Dims:
    """What each dim watched does over the blocks: whether it differs from BEFORE anywhere (by
    more than one rounding of the dtype), its largest |after - before|, and the sum of BEFORE's
    squares; and whether every value watched is finite. A dim that turns is watched until it is
    seen to move (its values are in the pair sums after that); the dims past a rotary dim, to
    the end: a partial-rotary tail must stay BEFORE's."""

    def __init__(self, head_dim: int, unit: float):
        self.unit = unit
        self.moved = np.zeros(head_dim, np.uint8)
        self.largest = np.zeros(head_dim)
        self.squares = np.zeros(head_dim)  # of the dims watched from the first block on
        self.count = 0  # the vectors added

    def add(self, x: np.ndarray, y: np.ndarray, past: int = 0) -> bool:
        """A block's rows; watched: every dim from `past` on, and those not yet seen to move.
        Whether every value watched is finite."""
        head_dim = x.shape[-1]
        watch = np.flatnonzero((self.moved == 0) | (np.arange(head_dim) >= past))
        self.count += x.shape[0] * x.shape[1]
        if not len(watch):
            return True
        if _kernel_ready(x, y):
            rows, vectors, dim = x.shape
            return _pairs.dim_stats(
                x, y, _KERNEL_KINDS[x.dtype], rows * vectors, dim, watch, self.unit,
                self.moved, self.largest, self.squares,
            )  # fmt: skip
        x, y = np.asarray(x[..., watch], np.float64), np.asarray(y[..., watch], np.float64)
        self.moved[watch] |= _moved(x, y, self.unit)
        gap = np.abs(y - x).max(axis=(0, 1), initial=0.0)
        self.largest[watch] = np.maximum(self.largest[watch], gap)
        self.squares[watch] += np.einsum("rvd,rvd->d", x, x)
        return bool(np.isfinite(x).all() and np.isfinite(y).all())

    def size(self, z2: float, width: int) -> float:
        """The rms of BEFORE's values, from a pairing's sum of squares over its rotary dims
        (`z2`, dims 0..width-1) and the dims past it (watched from the first block on)."""
        total = z2 + float(self.squares[width:].sum())
        return float(np.sqrt(total / max(self.count * len(self.squares), 1))) or 1.0

    def tail(self, width: int) -> float:
        """The largest |after - before| past the rotary dim `width`."""
        return float(self.largest[width:].max(initial=0.0))


def _moved(x: np.ndarray, y: np.ndarray, unit: float) -> np.ndarray:
    """Whether each dim differs from BEFORE anywhere in a block, by more than one rounding of
    the dtype: a dim passed through (a partial-rotary tail, a zero-frequency pair: x cos 0 +
    r sin 0 is x) is BEFORE's own, while the slowest pair that turns moves by its sine times
    its partner."""
    return np.any(np.abs(y - x) > unit * (np.abs(x) + np.abs(y)), axis=(0, 1))


def _widths(moved: np.ndarray, head_dim: int) -> list[int]:
    """The rotary dims to try: the head dim, and up to the last dim that changes (a
    partial-rotary tail past it)."""
    widths = {head_dim}
    changed = np.flatnonzero(moved)
    if len(changed):
        last = int(changed[-1]) + 1
        widths.add(last + last % 2)
    return sorted(widths)


@dataclass
class _Pass:
    fits: list[Fit]
    moved: np.ndarray  # each dim: whether it changes anywhere
    first: tuple[np.ndarray, np.ndarray]  # the first block (BEFORE, AFTER), for the heads


def _measure(
    act: Activations, pairings: list[Pairing], keep: set[int], s0: float, blocks, tap=None
) -> _Pass:
    """One pass over the blocks (act.blocks(native=True)), in the dump's own computing dtype:
    each pairing's sums (its rotations kept where `keep` has its index), what each dim does,
    the first block; refused where a value is inf or nan. `tap(start, x, y)`, where given, is
    handed each block as read, once it is summed (the rebuild that rides on this pass)."""
    kind = np.complex128 if act.dtype == "float64" else np.complex64
    sums = [_Sums(p, k in keep, s0, act.shape[0], kind) for k, p in enumerate(pairings)]
    dims, first = _Dims(act.head_dim, act.unit), None
    past = min(p.width for p in pairings)  # the dims past a rotary dim, watched throughout
    for start, stored, stored_after in blocks:
        x, y = _computable(stored), _computable(stored_after)
        if first is None:
            first = (x, y)
        finite = dims.add(x, y, past)
        for each in sums:
            finite = each.add(x, y) and finite
        if not finite:
            _check_finite(act, x, y)
        if tap is not None:
            tap(start, stored, stored_after)
    fits = [
        each.fit(dims.size(each.z2, each.pairing.width), dims.tail(each.pairing.width))
        for each in sums
    ]
    return _Pass(fits, dims.moved.astype(bool), first)


def _check_finite(act: Activations, x: np.ndarray, y: np.ndarray) -> None:
    """Refuse a block that holds inf or nan (looked at element by element: a sum of squares
    may overflow where no value is infinite)."""
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise BadInput(f"{act.labels[0]} or {act.labels[1]} holds inf or nan")


def _order(found: list[Fit], tolerance: float) -> list[Fit]:
    """Best first: a fit within the rounding is as good as any other; among those the
    narrowest rotary dim (the dims past it are seen unchanged), in place before written
    elsewhere, and the pairing tried first."""

    def key(f: Fit):
        off = max(f.misfit, f.tail)
        return (
            off > tolerance,
            off if off > tolerance else 0.0,
            f.pairing.width,
            bool(f.pairing.written),
            ROTARY_PAIRINGS.index(f.pairing.name),
        )

    return sorted(found, key=key)


def fits(act: Activations, tap=None) -> tuple[list[Fit], _Pass]:
    """Each pairing's fit, over the whole head_dim and over the dims up to the last one that
    changes, best first; read in one pass: the first block says which pairings to sum and keep
    each pair's rotation of, and is the first the pass sums."""
    from itertools import chain

    blocks = act.blocks(native=True)
    first = next(blocks)
    x, y = (np.asarray(v, np.float64) for v in first[1:])
    _check_finite(act, x, y)
    tolerance = _tolerance(act)
    pairings = [
        p for width in _widths(_moved(x, y, act.unit), act.head_dim) for p in _hypotheses(width)
    ]
    lz = float(np.sum(x**2)) or 1.0
    s0 = float(np.sqrt(np.sum(y**2) / lz))
    dims, sample = _Dims(act.head_dim, act.unit), []
    dims.add(x, y)
    for p in pairings:
        each = _Sums(p, False, s0)
        each.add(x, y)
        sample.append(each.fit(1.0, dims.tail(p.width)))
    ranked = _order(sample, tolerance)
    # a pairing that is no rotation of the first block's rows is none of the whole: every
    # block is summed for the others only (for the best of the first block where none is)
    kept = [f for f in sample if max(f.misfit, f.tail) <= tolerance] or ranked[:1]
    chosen = [f.pairing for f in kept]
    done = _measure(act, chosen, set(range(len(kept))), s0, chain([first], blocks), tap)
    ruled_out = [f for f in ranked if not any(f is k for k in kept)]
    return _order(done.fits, tolerance) + ruled_out, done


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


def wrapped(angles: np.ndarray) -> np.ndarray:
    """Angles taken to [-pi, pi] by whole turns: a - 2 pi rint(a / 2 pi), three passes where
    angle(exp(i a)) takes a complex exp and an atan2 an element. 2 pi in float64 is 2.4e-16
    off, so k turns removed carry k times that: 5e-12 rad at a long dump's 20,000 turns,
    far below any angle's error bound (float64's 6 units of roundoff is 6.7e-16 of a turn,
    but angles read back from a dump carry its own dtype's rounding, 2^-24 at the least)."""
    turns = np.rint(angles * (1 / (2 * np.pi)))
    turns *= -2 * np.pi
    turns += angles
    return turns


def line(angles: np.ndarray, positions: np.ndarray) -> Line | None:
    """The lines through each pair's angles, read from consecutive differences (each pair
    turning less than pi between rows); None where fewer than two positions or not increasing.
    In blocks of rows, twice (the sums the lines are fitted from, then what they leave), so
    that a long dump's temporaries stay small and in cache."""
    if len(positions) < 2 or np.any(np.diff(positions) <= 0):
        return None
    p = positions.astype(np.float64)
    centred = p - p.mean()
    sums, dots = np.zeros(angles.shape[1]), np.zeros(angles.shape[1])
    for start, unwrapped in _unwrapped(angles):
        sums += unwrapped.sum(axis=0)
        dots += centred[start : start + len(unwrapped)] @ unwrapped
    mean = sums / len(p)
    rates = (dots - mean * centred.sum()) / float(centred @ centred)  # centred @ (a - mean)
    phases = mean - rates * p.mean()
    worst = 0.0
    for start, unwrapped in _unwrapped(angles):
        unwrapped -= phases
        unwrapped -= np.outer(p[start : start + len(unwrapped)], rates)  # what the line leaves
        worst = max(worst, float(np.max(np.abs(wrapped(unwrapped)))))
    return Line(rates, phases, worst)


def _unwrapped(angles: np.ndarray, rows: int = 2048):
    """(first row, each pair's angle unwrapped: the first row's plus the turns since) of each
    block of rows, in order."""
    carry, last = angles[0], angles[:1]
    for start in range(0, len(angles), rows):
        block = angles[start : start + rows]
        turns = wrapped(np.diff(block, axis=0, prepend=last))
        np.cumsum(turns, axis=0, out=turns)
        turns += carry
        carry, last = turns[-1].copy(), block[-1:]
        yield start, turns


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
    axes: object | None = None  # rotation_axes.AxesReading, where the rows' axes differ

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


def read_rotation(act: Activations, tap=None) -> Reading:
    """The reading of the rotation, in one pass over the dump (each block handed to `tap` as
    it is read, where given: _measure)."""
    tried, done = fits(act, tap)
    best = tried[0]
    tolerance = _tolerance(act)
    if max(best.misfit, best.tail) > tolerance:
        return Reading(act, None, tried, None, None, None)
    angles = best.angles
    changed = set(np.flatnonzero(done.moved).tolist())
    p = best.pairing
    turning = np.array(
        [k for k in range(p.pairs) if {int(p.first[k]), int(p.second[k])} & changed], dtype=int
    )
    found = Reading(act, best, tried, angles, turning, line(angles, act.positions))
    if best.spread > tolerance:  # read from the first block's rows
        x, y = (np.asarray(v, np.float64) for v in done.first)
        found.heads, found.head_worst = _odd_vectors(act, best, x, y)
    return found


def _odd_vectors(act: Activations, f: Fit, x: np.ndarray, y: np.ndarray) -> tuple[list[str], float]:
    """The vectors whose own rotation is not the common one: those that disagree with most of
    the others (each vector's angles, where its pairs are not too short to read)."""
    z, w = _complex(x, f.pairing), _written(y, f.pairing)
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


def whole_offset(rates: np.ndarray, phases: np.ndarray, rows: int) -> int:
    """The whole number of positions o whose angles o w_k are nearest every pair's phase
    (the largest miss over the pairs smallest), among |o| up to 16 times the rows and 4096."""
    reach = min(max(16 * rows, 4096), 1 << 17)
    best, miss = 0, np.inf
    for start in range(-reach, reach + 1, 8192):  # in slices: 8192 x pairs at a time
        tried = np.arange(start, min(start + 8192, reach + 1))
        gaps = np.abs(np.angle(np.exp(1j * (phases[None, :] - np.outer(tried, rates)))))
        worst = gaps.max(axis=1)
        k = int(np.argmin(worst))
        if worst[k] < miss:
            best, miss = int(tried[k]), float(worst[k])
    return best


@dataclass(frozen=True)
class Finding:
    code: str  # what kind: twice, negated, none, pairing, offset, scale, heads, nope, ...
    text: str  # one plain sentence

    def to_json(self):
        return {"finding": self.code, "says": self.text}


def planes(spec, rows: int, variant: str | None, positions=None, start: int = 0):
    """A table's cos and sin planes as `variant` builds them, one column a pair, at `positions`
    (every row where None), in the dtype they are built in: rows start..start+rows-1 of the
    table from position 0 (a window of them, where the family builds one; None where not)."""
    from ..engine import build
    from ..families import FAMILIES

    family = FAMILIES[spec.family]
    cos, sin, columns = family.rotation_planes(spec, start + rows, variant)
    if start:
        cos, sin = (family.window(made, start, start + rows) for made in (cos, sin))
        if cos is None or sin is None:
            return None
    picked = []
    for made in (cos, sin):
        table = build(made)  # float32 as it is (a long table's float64 copy is large)
        values = table.float64() if made.dtype == "bfloat16" else table.numpy()
        values = values if columns is None else values[:, columns]
        picked.append(values if positions is None else values[positions])
    return picked
