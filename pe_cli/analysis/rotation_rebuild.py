"""Bit for bit: a library's cos and sin, applied to BEFORE as the rotate_half form computes in
the dump's dtype, against AFTER (rotation_report's claim that AFTER is BEFORE rotated by a
library's table, and where it is not, how far and where). `found` is rotation_report's Report:
its table spec, its reading (the pairing, the scale, the direction) and the dump's rows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import PeError
from .rotation import planes


@dataclass(frozen=True)
class Rebuilt:
    """A library's cos and sin applied to BEFORE in the dump's dtype, against AFTER."""

    variant: str
    identical: bool
    max_abs: float
    where: str  # the element where it is largest: "position 7, dim 3, head 2"


def rebuild(found) -> Rebuilt | None:
    """Each library variant of the named spec, its cos and sin applied to BEFORE as the
    rotate_half form computes (x cos + rotate(x) sin, each product and the sum rounded to the
    dump's dtype), against AFTER; the first that gives it bit for bit, else the nearest. A pass
    of its own over the dump: Rebuilding is what the reading's pass feeds block by block."""
    rebuilding = Rebuilding(found)
    if not rebuilding.possible:
        return None
    for block in found.reading.act.blocks(native=True):
        rebuilding.add(*block)
    return rebuilding.result()


class Rebuilding:
    """The rebuild, a block at a time, in order from the first. Each library is set against
    the first block's rows alone, and only those bit for bit there (else the nearest there)
    against the rest, their planes built a window of positions at a time (_Planes): a long
    dump's whole planes would take hundreds of MiB a library."""

    def __init__(self, found):
        self.found, self.spec = found, found.table_spec
        act = found.reading.act
        self.possible = self.spec is not None and act.dtype in ("float32", "float16", "bfloat16")
        self.kept = None  # (library, its planes, its gap) of those set against every block

    def add(self, start: int, x: np.ndarray, y: np.ndarray) -> None:
        """The next block's rows from `start`, BEFORE and AFTER in the dump's computing dtype."""
        if not self.possible:
            return
        act, pairing = self.found.reading.act, self.found.reading.fit.pairing
        if self.kept is None:
            self.kept = self._first(x, y)
            if self.kept is None:
                self.possible = False
            return
        for _, made, measured in self.kept:
            planes_here = made.rows(start, start + len(x))
            if planes_here is None:  # not built past the first block: no claim of the rest
                measured.equal, measured.largest = False, np.inf
                continue
            measured.add(act, pairing, start, x, y, *planes_here)

    def _first(self, x: np.ndarray, y: np.ndarray):
        """The libraries bit for bit on the first block, or the nearest there; None where no
        library builds this table's planes."""
        import hashlib

        from ..families import FAMILIES

        found, spec = self.found, self.spec
        act, pairing = found.reading.act, found.reading.fit.pairing
        seen, kept, first = set(), [], []
        for name, variant in FAMILIES[spec.family].variants.items():
            if variant.kind != "library":
                continue
            made = _Planes(found, spec, name, window=0).rows(0, len(x))
            if made is None:
                continue
            digest = hashlib.sha1(made[0].tobytes() + made[1].tobytes()).digest()
            if digest in seen:
                continue  # the same planes as a library tried before it
            seen.add(digest)
            measured = _Gap()
            measured.add(act, pairing, 0, x, y, *made)
            first.append((measured.largest, name, measured))
            if measured.equal:
                kept.append((name, _Planes(found, spec, name), measured))
        if not first:
            return None
        if not kept:  # none is bit for bit on the first block: the nearest there, on every block
            largest, name, measured = min(first, key=lambda f: (f[0], f[1]))
            kept = [(name, _Planes(found, spec, name), measured)]
        return kept

    def result(self) -> Rebuilt | None:
        if not self.possible or not self.kept:
            return None
        act = self.found.reading.act
        done = [measured.said(act, name) for name, _, measured in self.kept]
        return next((r for r in done if r.identical), None) or min(done, key=lambda r: r.max_abs)


class _Planes:
    """A library's cos and sin at the dump's rows, as the reading applies them (turned
    backwards, scaled), float32 where they are float32 values: built WINDOW positions at a
    time where the family's rows are the same numbers in a window of the table (a 1-D table
    that does not choose its frequencies by its length), else whole, once; `window` 0 builds
    only the positions each call asks for."""

    WINDOW = 16384

    def __init__(self, found, spec, name: str, window: int = WINDOW):
        from ..families import FAMILIES

        self.found, self.spec, self.name, self.window = found, spec, name, window
        family = FAMILIES[spec.family]
        # a table whose frequencies do not depend on its length (prefix), and whose rows a
        # window of it builds alike (window): dynamic NTK, LongRoPE and M-RoPE are built whole
        self.windowed = family.prefix(spec, 1) is not None and family.window(spec, 1, 2) is not None
        self.lo, self.hi, self.made = 0, 0, None

    def rows(self, start: int, stop: int):
        """The planes at the dump's rows start..stop-1; None where they cannot be built."""
        act = self.found.reading.act
        positions = act.positions[start:stop] + self.found.offset
        lo, hi = int(positions.min()), int(positions.max()) + 1
        if self.made is None or not (self.lo <= lo and hi <= self.hi):
            if self.windowed:
                self.lo, self.hi = lo, max(hi, lo + self.window)
            else:  # the whole table, once
                self.lo, self.hi = 0, int(act.positions.max()) + self.found.offset + 1
            self.made = _library_planes(self.found, self.spec, self.lo, self.hi, self.name)
        if self.made is None:
            return None
        return tuple(plane[positions - self.lo] for plane in self.made)


def _library_planes(found, spec, lo: int, hi: int, name: str):
    """A library's cos and sin at positions lo..hi-1, as the reading applies them; None where
    it cannot build them or they have another number of pairs."""
    reading = found.reading
    act = reading.act
    try:
        made = planes(spec, hi - lo, name, None, lo)
    except (PeError, ValueError, IndexError):
        return None
    if made is None:
        return None
    cos, sin = made
    if cos.shape[1] != reading.fit.pairing.pairs:
        return None
    cos, sin = (
        t.astype(np.float32) if np.array_equal(t.astype(np.float32), t) else t for t in (cos, sin)
    )
    if reading.line is not None and np.all(reading.line.rates < 0):
        sin = -sin
    rest = reading.fit.scale / factor_of(spec)  # the scale the table does not hold itself
    if abs(rest - 1) > 8 * act.unit:
        cos, sin = cos * rest, sin * rest
    return cos, sin


def factor_of(spec) -> float:
    """The attention factor a table's cos and sin hold (YaRN's), 1 for none."""
    from ..families import FAMILIES

    exact = FAMILIES[spec.family].frequencies(spec)
    return 1.0 if exact is None else float(exact.factor)


class _Gap:
    """The largest |AFTER - rebuilt| over the blocks added, where, and whether all are equal."""

    def __init__(self):
        self.largest, self.at, self.equal = 0.0, (0, 0, 0), True

    def add(self, act, pairing, start, x, y, cos, sin) -> None:
        """A block's rows from `start`, with the planes at its rows: each part of the pairs,
        and the dims past the rotary dim, set against AFTER (the gap measured only where a
        part is not AFTER's bits)."""
        from .rotation import view

        width = pairing.width
        if act.dtype == "float32" and _swept(self, pairing, start, x, y, cos, sin):
            return
        parts = zip(_turned(x, cos, sin, pairing, act.dtype), pairing.out)
        parts = [(got, dims, y[..., view(dims)]) for got, dims in parts]
        if width < x.shape[-1]:
            dims = np.arange(width, x.shape[-1])
            parts.append((x[..., width:], dims, y[..., width:]))
        for got, dims, want in parts:
            if np.array_equal(got, want):
                continue
            self.equal = False
            gap = np.abs(got.astype(np.float64) - want.astype(np.float64))
            at = np.unravel_index(int(np.argmax(gap)), gap.shape)
            if gap[at] > self.largest:
                self.largest = float(gap[at])
                self.at = (start + int(at[0]), int(at[1]), int(dims[at[2]]))

    def said(self, act, name: str) -> Rebuilt:
        row, vector, dim = self.at
        where = f"position {int(act.positions[row])}, dim {dim}" + (
            f", {act.vectors[vector]}" if act.vectors[vector] else ""
        )
        return Rebuilt(name, self.equal, self.largest, where)


def _swept(gap: _Gap, pairing, start: int, x, y, cos, sin) -> bool:
    """_Gap.add of a float32 block in one sweep (numerics/_pairs.c: numpy's float32 arithmetic,
    each part's first largest difference as numpy's argmax finds it); False where the C
    comparison is not built or the block is not float32."""
    from .rotation import _pairs

    if _pairs is None or x.dtype != np.float32 or y.dtype != np.float32:
        return False
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    cos, sin = (np.ascontiguousarray(t, np.float32) for t in (cos, sin))
    indices = [np.ascontiguousarray(d, np.int64) for d in (pairing.first, pairing.second)]
    indices += [np.ascontiguousarray(d, np.int64) for d in pairing.out]
    rows, vectors, dim = x.shape
    found = _pairs.turned_gaps(x, y, cos, sin, rows, vectors, dim, *indices, pairing.width)
    tail = np.arange(pairing.width, dim)
    for (largest, row, vector, index), dims in zip(found, (*pairing.out, tail)):
        if largest < 0:
            continue
        gap.equal = False
        if largest > gap.largest:
            gap.largest, gap.at = largest, (start + row, vector, int(dims[index]))
    return True


def apply(before: np.ndarray, cos: np.ndarray, sin: np.ndarray, p, dtype: str) -> np.ndarray:
    """x cos + rotate(x) sin on the pairing's dims, each product and the sum rounded to `dtype`
    (numpy for float32 and float16, which round each operation; torch for bfloat16), cos and
    sin rounded to it first; the dims past the rotary dim as they are. Returns float64."""
    from .rotation import view

    out = before.copy()
    real, imag = _turned(before, cos, sin, p, dtype)
    first, second = (view(dims) for dims in p.out)
    out[..., first], out[..., second] = real, imag
    return out


def _turned(before: np.ndarray, cos: np.ndarray, sin: np.ndarray, p, dtype: str):
    """apply's two parts of each pair, (x cos - y sin, y cos + x sin) in `dtype`'s rounding,
    as float32 or float16 arrays (bfloat16's as float64, which holds them exactly)."""
    from .rotation import view

    x, y = before[..., view(p.first)], before[..., view(p.second)]
    c, s = cos[:, None, :], sin[:, None, :]
    if dtype == "bfloat16":
        import torch

        def t(a):
            return torch.from_numpy(np.ascontiguousarray(a)).to(torch.bfloat16)

        tx, ty, tc, ts = t(x), t(y), t(c), t(s)
        return (tx * tc + (-ty) * ts).double().numpy(), (ty * tc + tx * ts).double().numpy()
    kind = np.dtype(dtype)
    nx, ny, nc, ns = (a.astype(kind, copy=False) for a in (x, y, c, s))
    # x cos + (-y) sin is x cos - y sin bit for bit: negation is exact
    real = nx * nc
    real -= ny * ns
    imag = ny * nc
    imag += nx * ns
    return real, imag
