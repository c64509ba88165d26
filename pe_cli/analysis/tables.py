"""The tables inspection reads, a file's or a built one, seen as 2-D (rows, columns) and read in
row blocks of bounded size: `compare`, identification and `show` stream any table through
these, holding a few blocks at a time whatever its size."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from ..core.dtypes import host_bits, host_float
from ..core.errors import BadInput
from ..engine import blocks, build
from ..engine import rows as exact_rows
from ..families import FAMILIES, find_variant
from ..io.read import check_room, open_table
from ..spec import TableSpec

BLOCK_ELEMENTS = 1 << 20  # float64 elements per block read (8 MiB)
_WORK_COPIES = 8  # arrays of a block's size a pass holds at once (both sides, errors, ulps)


@dataclass
class Source:
    """One table as rows of float64: `block(start, stop)` reads any rows, `blocks` all of them
    in order, each a fresh array."""

    label: str
    rows: int
    cols: int
    dtype: str
    spec: TableSpec | None  # the parameters, for a built table or a file pe-cli wrote
    read: Callable[[int, int], np.ndarray] = field(repr=False)
    stream: Callable[[], Iterator[np.ndarray]] | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)
    # columns a..b-1 of every row, where they can be read without the rest (a file)
    columns: Callable[[int, int], np.ndarray] | None = field(default=None, repr=False)
    dims: tuple[int, ...] | None = None  # the array's own shape, where it is one read as 2-D

    @property
    def first_position(self) -> int:
        return self.spec.offset if self.spec is not None else 0

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows, self.cols

    @property
    def block_rows(self) -> int:
        return max(1, BLOCK_ELEMENTS // max(1, self.cols))

    def block(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop-1, refused first where memory is short for them and the work on them."""
        stop = min(stop, self.rows)
        check_room(self.label, _WORK_COPIES * 8 * max(0, stop - start) * self.cols)
        return self.read(start, stop)

    def blocks(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, block) over rows start..stop-1, in blocks of block_rows rows."""
        stop = self.rows if stop is None else stop
        if self.stream is not None and start == 0:
            yield from _rechunk(self.stream(), self.block_rows, stop)
            return
        for first in range(start, stop, self.block_rows):
            yield first, self.block(first, min(stop, first + self.block_rows))

    def at(self, indices) -> np.ndarray:
        """The rows at `indices`, in their order, reading each run of consecutive ones at once
        (each row once, where some repeat or come out of order)."""
        indices = np.asarray(indices, dtype=np.int64)
        wanted = np.unique(indices)  # sorted, each once
        found = [self.block(a, b) for a, b in runs(wanted)]
        rows = np.concatenate(found) if found else np.zeros((0, self.cols))
        if np.array_equal(wanted, indices):
            return rows
        return rows[np.searchsorted(wanted, indices)]

    def whole(self) -> np.ndarray:
        return self.block(0, self.rows)

    def shifted(self, first: int, rows: int) -> Source:
        """Rows first..first+rows-1 of this table, as a table of their own."""
        return replace(
            self,
            rows=rows,
            stream=None,
            columns=None,
            dims=None,
            read=lambda a, b: self.read(first + a, first + b),
        )

    def transposed(self) -> Source:
        """The table's columns as rows (each block reads a strip across every row)."""
        read = (
            (lambda a, b: self.columns(a, b).T.copy()) if self.columns is not None else self._strip
        )
        return replace(
            self, rows=self.cols, cols=self.rows, stream=None, columns=None, read=read, dims=None
        )

    def _strip(self, a: int, b: int) -> np.ndarray:
        """Columns a..b-1 as rows, from a pass over every row (a table with no column reader)."""
        out = np.empty((b - a, self.rows))
        for first in range(0, self.rows, self.block_rows):
            part = self.read(first, min(self.rows, first + self.block_rows))
            out[:, first : first + len(part)] = part[:, a:b].T
        return out


def runs(indices) -> list[tuple[int, int]]:
    """Sorted row indices as (start, stop) runs of consecutive rows."""
    indices = np.asarray(indices, dtype=np.int64)
    if len(indices) == 0:
        return []
    breaks = np.flatnonzero(np.diff(indices) != 1) + 1
    return [(int(run[0]), int(run[-1]) + 1) for run in np.split(indices, breaks)]


def _rechunk(parts, rows: int, stop: int) -> Iterator[tuple[int, np.ndarray]]:
    """Blocks of `rows` rows (the last shorter) from blocks of any size, up to row `stop`."""
    pending, held, first = [], 0, 0
    for part in parts:
        pending.append(part)
        held += len(part)
        while held >= rows or (held and first + held >= stop):
            joined = np.concatenate(pending) if len(pending) > 1 else pending[0]
            take = min(rows, stop - first)
            yield first, joined[:take]
            first += take
            if first >= stop:
                return
            pending, held = [joined[take:]], held - take
    if held and first < stop:
        yield first, np.concatenate(pending)[: stop - first]


def reading(
    shape: tuple[int, ...], label: str, spec: TableSpec | None = None
) -> tuple[int, int, list[str]]:
    """The 2-D (rows, columns) reading of an array of this shape, and notes saying how it was
    read. Every reading keeps each row's elements together in C order."""
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        raise BadInput(f"{label} is empty (shape {tuple(shape)})")
    if len(shape) == 2:
        return shape[0], shape[1], []
    if len(shape) == 1:
        return 1, shape[0], []
    for family in [FAMILIES[spec.family]] if spec is not None else FAMILIES.values():
        found = family.reading(tuple(shape), label)
        if found is not None:
            return found
    if len(shape) == 3 and 1 in shape[:2]:
        axis = 0 if shape[0] == 1 else 1
        layout = "batch-first (1, L, D)" if axis == 0 else "seq-first (L, 1, D)"
        return size // shape[2], shape[2], [f"{label} is {layout}; compared as (L, D)"]
    raise BadInput(f"{label} has shape {tuple(shape)}, which has no obvious 2-D (L, D) reading")


def from_file(source: str) -> Source:
    stored = open_table(source)
    rows, cols, notes = reading(stored.shape, stored.label, stored.spec)
    return Source(
        stored.label,
        rows,
        cols,
        stored.dtype,
        stored.spec,
        lambda a, b: stored.elements(a * cols, b * cols).reshape(b - a, cols),
        notes=notes,
        columns=lambda a, b: np.stack(
            [stored.elements(r * cols + a, r * cols + b) for r in range(rows)]
        ),
        dims=tuple(stored.shape),
    )


def from_spec(spec: TableSpec, label: str) -> Source:
    """A built table: an exact one streams from the engine and reads any rows from the exact
    kernel; a seed or library variant is computed whole once (refused first where memory is
    short), as its arithmetic needs."""
    spec = spec.replace(shape="2d")
    widen = lambda block: host_float(block, spec.dtype).astype(np.float64)  # noqa: E731
    if find_variant(spec) is not None:
        values = np.asarray(host_bits(build(spec).values)).reshape(spec.rows, spec.cols)
        return Source(
            label, spec.rows, spec.cols, spec.dtype, spec, lambda a, b: widen(values[a:b])
        )
    return Source(
        label,
        spec.rows,
        spec.cols,
        spec.dtype,
        spec,
        lambda a, b: widen(exact_rows(spec, [(a, b)])).reshape(b - a, spec.cols),
        stream=lambda: (
            widen(np.asarray(block)).reshape(-1, spec.cols)
            for block in blocks(spec, transient=True)
        ),
    )
