"""The fast path of the exact engine: rows of sines and cosines of consecutive positions, times
a factor below 2 when the table has one, filled by the C kernel (`_rotate.c`, built at install
where a compiler is present) by angle addition from exactly computed rows, in slices of about
1 MiB.

A table is cut into groups of GROUP rows, each anchored at an exactly computed row and reached
from it in coarse steps of FINE rows, then fine steps of one row, both from exactly computed
tables. The kernel rounds each element once to a narrow dtype and keeps it when everything
within its error bound rounds the same way; the rare element it cannot decide is recomputed
here in decimal. The caller says where each frequency's sin and cos go (`columns`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core.dtypes import FORMATS, cast_exact
from . import exact
from .sinusoids import Sinusoids

try:  # the C fast path (setup.py builds it where a compiler is present)
    from . import _rotate
except ImportError:  # pragma: no cover - exercised by the fallback test
    _rotate = None

FINE = 64
COARSE = 64
GROUP = FINE * COARSE
ANCHORS = 16  # group anchors computed at once (numpy's cost is per call, not per row)
SLICE_BYTES = 1 << 20
# The kernel's error bounds (_rotate.c) assume terms of magnitude at most 1, with room for a
# factor of 2: a table whose values are scaled by a factor below 2 (RoPE's attention factor:
# YaRN's 0.1 ln(s) + 1, LongRoPE's) is rotated from scaled anchors with the same bounds.
MAX_SCALE = 2
KINDS = {"float32": 0, "float16": 1, "bfloat16": 2}

# Where the kernel puts each frequency: its sin column and cos column (-1: none) in a row of
# `width` columns, and the columns it leaves zero. Each of sin and cos columns must be an
# arithmetic progression (the kernel writes float32 rows as two strided loops).
Columns = namedtuple("Columns", "width sin cos zero")


def available(dtype: str) -> bool:
    """Whether the C kernel is built here and serves this output dtype."""
    return _rotate is not None and dtype in KINDS


def preallocate(fd: int, nbytes: int) -> None:
    """Reserve a new file's blocks in one call (fallocate, through the C extension where it is
    built): writes then skip the file system's block reservation page by page, about 10%
    faster on this project's machine."""
    if _rotate is not None:
        _rotate.preallocate(fd, nbytes)


class Rotation:
    """Slices of `rows` consecutive positions from `first`, sines and cosines of `sinusoids`
    placed by `columns`, each element correctly rounded to `dtype`."""

    def __init__(self, sinusoids: Sinusoids, first: int, rows: int, columns: Columns, dtype: str):
        self.sinusoids, self.first, self.rows, self.columns, self.dtype = (
            sinusoids,
            first,
            rows,
            columns,
            dtype,
        )
        assert sinusoids.scale is None or sinusoids.scale < MAX_SCALE, (
            "the kernel's bounds hold below 2"
        )
        for col in (columns.sin, columns.cos[columns.cos >= 0]):
            assert len(col) < 2 or np.all(np.diff(col) == col[1] - col[0]), "layout not affine"
        self.n = len(sinusoids.turns)
        self.fine = sinusoids.steps_dd(1, FINE)
        self.coarse = sinusoids.steps_dd(FINE, -(-min(rows, GROUP) // FINE))
        self.anchors = {}  # batches of ANCHORS group anchors in progress, by batch number
        fmt = FORMATS[dtype]
        self.host = fmt.host
        self.kind, self.precision, self.min_exponent = KINDS[dtype], fmt.precision, fmt.min_exponent
        per_slice = SLICE_BYTES // (columns.width * np.dtype(fmt.host).itemsize)
        self.slice_rows = 1 << (min(max(per_slice, FINE), GROUP).bit_length() - 1)  # divides GROUP
        self.starts = range(0, rows, self.slice_rows)  # the first row of each slice

    def buffer(self) -> np.ndarray:
        """Room for one slice, to hand to `block` again and again."""
        return np.empty((self.slice_rows, self.columns.width), self.host)

    def _anchor(self, row: int) -> np.ndarray:
        """The anchor of the group starting at `row`: (4, n) double-double planes."""
        batch, index = divmod(row // GROUP, ANCHORS)
        anchors = self.anchors.get(batch)
        if anchors is None:
            first = batch * ANCHORS * GROUP
            rows = range(first, min(first + ANCHORS * GROUP, self.rows), GROUP)
            anchors = self.sinusoids.sin_cos_dd([self.first + r for r in rows])
            if self.sinusoids.scale is not None:  # RoPE's attention factor, on the anchors
                anchors = exact.scale_dd(anchors, self.sinusoids.scale_dd)
            self.anchors[batch] = anchors
            for old in list(self.anchors):  # list(): another thread may add one meanwhile
                if old < batch - 1:
                    self.anchors.pop(old, None)
        return np.ascontiguousarray(anchors[:, index])

    def block(self, start: int, out=None) -> np.ndarray | None:
        """The slice starting at row `start` (one of self.starts), in `out` when given; None
        when too many of its elements are undecided to list (the caller computes it another
        way)."""
        stop = min(start + self.slice_rows, self.rows)
        rows, group = stop - start, start - start % GROUP
        columns = self.columns
        out = np.empty((rows, columns.width), dtype=self.host) if out is None else out[:rows]
        scratch = np.empty(4 * self.n)  # the coarse step's sin and cos, one row of narrow results
        suspects = np.empty(4 * self.n + 1024, dtype=np.int64)
        count = _rotate.rotate_block(
            out,
            self.kind,
            self.precision,
            self.min_exponent,
            rows,
            columns.width,
            self.n,
            FINE,
            self.coarse.shape[1],
            (start - group) // FINE,
            self._anchor(group),
            self.coarse,
            self.fine,
            columns.sin,
            columns.cos,
            columns.zero,
            scratch,
            suspects,
        )
        if count > len(suspects):
            return None
        if count:
            self._resolve(out, suspects[:count], self.first + start)
        return out

    def _resolve(self, out, suspects, first):
        index, plane = suspects // 2, suspects % 2
        row, freq = index // self.n, index % self.n
        values = [
            exact.round_fraction(self.sinusoids.true_value(first + r, f, p), self.dtype)
            for r, f, p in zip(row.tolist(), freq.tolist(), plane.tolist())
        ]
        columns = np.where(plane == 0, self.columns.sin[freq], self.columns.cos[freq])
        out[row, columns] = cast_exact(np.array(values), self.dtype)
