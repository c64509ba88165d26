"""The figures pe-cli prints about tables: a built table's summary (gathered block by block as
it streams past), how one table differs from another, and the facts `show` reports."""

from __future__ import annotations

import hashlib
import math
import threading
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ..core.dtypes import FORMATS, host_bits, host_float, ulp
from ..core.errors import BadInput
from ..engine import blocks, prepare
from ..families import FAMILIES
from ..families.base import Norm
from ..spec import TableSpec

CORNER = 4  # rows and columns of each corner kept for the summary


class Summary:
    """Shape-independent facts of a 2-D table seen as a sequence of row blocks."""

    def __init__(self, dtype: str):
        self.dtype = dtype
        self.minimum = np.inf
        self.maximum = -np.inf
        self._sha256 = hashlib.sha256()
        self.head: np.ndarray | None = None  # first rows
        self.tail: np.ndarray | None = None  # last rows

    def update(self, block) -> None:
        """Take the next row block (numpy or torch)."""
        bits = np.ascontiguousarray(host_bits(block))
        values = host_float(bits, self.dtype)
        self._sha256.update(memoryview(bits.astype(bits.dtype.newbyteorder("<"), copy=False)))
        if values.size:
            self.minimum = min(self.minimum, float(values.min()))
            self.maximum = max(self.maximum, float(values.max()))
        if self.head is None or len(self.head) < CORNER:
            head = values[:CORNER] if self.head is None else np.concatenate([self.head, values])
            self.head = head[:CORNER]
        self.tail = (
            values[-CORNER:]
            if len(values) >= CORNER or self.tail is None
            else (np.concatenate([self.tail, values])[-CORNER:])
        )

    @property
    def sha256(self) -> str:
        """SHA-256 of the table's raw little-endian bytes (what `--format raw` writes)."""
        return self._sha256.hexdigest()


SUMMARY_MAX_ELEMENTS = 2**33


def summarizable(rows: int, cols: int, instead: str) -> None:
    """Refuse, before any work, a table whose every element a summary would go through and
    that has more than SUMMARY_MAX_ELEMENTS (minutes of work, said as one line)."""
    if rows * cols > SUMMARY_MAX_ELEMENTS:
        raise BadInput(
            f"a {rows} x {cols} table has {rows * cols:.3g} elements, too many to summarize; "
            f"{instead}"
        )


def summarize(spec: TableSpec) -> tuple[Summary, float, str]:
    """Build a table block by block without keeping it: its facts, seconds taken, device."""
    device = prepare(spec)
    summarizable(spec.seq_len, spec.d_model, "write it with -o FILE (it streams)")
    facts = Summary(spec.dtype)
    started = time.perf_counter()
    for block in blocks(spec, transient=True):
        facts.update(block)
    return facts, time.perf_counter() - started, device


def position_bands(length: int) -> list[tuple[int, int]]:
    """Row ranges [0, 1), [1, 4), [4, 16), ... growing by 4: error growth at a glance."""
    edges = [0, 1]
    while edges[-1] < length:
        edges.append(edges[-1] * 4)
    edges[-1] = length
    return [(a, b) for a, b in zip(edges, edges[1:]) if a < b]


ERROR_BINS = 512  # bins of positions a Difference's error profile has at most


def error_bins(length: int, count: int = ERROR_BINS) -> np.ndarray:
    """Edges of bins of rows 0..length for an error against position on a log axis: one row
    each while they fit, then growing geometrically."""
    if length <= count:
        return np.arange(length + 1)
    return np.concatenate(
        [[0], np.unique(np.round(np.geomspace(1, length, count)).astype(np.int64))]
    )


def fold_bins(
    into: np.ndarray, edges: np.ndarray, first: int, values: np.ndarray, ufunc=np.maximum
) -> None:
    """Fold rows first.. of `values` into the bins of rows [edges[k], edges[k + 1]) that
    `into` holds one row each (ufunc np.maximum or np.minimum), a block at a time."""
    if not len(values):
        return
    lo, hi = np.searchsorted(edges, [first, first + len(values) - 1], side="right") - 1
    starts = np.maximum(edges[lo : hi + 1], first) - first
    into[lo : hi + 1] = ufunc(into[lo : hi + 1], ufunc.reduceat(values, starts, axis=0))


LISTED = 8  # differing positions and dimensions a Difference names


@dataclass
class Difference:
    """How a candidate table differs from a reference table of the same 2-D shape."""

    dtype: str  # whose ulps the error is counted in
    first_position: int
    max_abs: float
    mean_abs: float
    rms: float
    # the largest error in ulps of `dtype` at its column's magnitude (the largest |value| of
    # that column in either table): ulps near a zero of sin say nothing, those of the values'
    # own size do
    max_ulps: float
    worst: tuple[int, int]  # (position, dimension) of the largest |error|
    differing: int  # elements that are not bit-equal
    size: int
    bands: list[tuple[int, int, float]]  # (first position, last position + 1, max |error|)
    first_over: int | None  # first position whose error exceeds `threshold`
    threshold: float
    within: bool | None  # within --atol/--rtol, when a tolerance was given
    # where the elements that are not bit-equal lie: (position, dimension) of the first in row
    # order, how many positions and dimensions hold any, the first LISTED of those positions,
    # and the first LISTED such dimensions as (dimension, first position, last position, count)
    size_of_values: float = 0.0  # the largest |value| in either table
    first_differing: tuple[int, int] | None = None
    differing_rows: int = 0
    differing_columns: int = 0
    rows_listed: list[int] = field(default_factory=list)
    columns_listed: list[tuple[int, int, int, int]] = field(default_factory=list)
    # (bin edges over rows, each bin's max |error|; NaN where no row of it was measured): the
    # error against position that `compare --plot` draws
    profile: tuple[np.ndarray, np.ndarray] | None = None
    # the largest |error| / p over the positions p > 0 measured: the error is at most this
    # times p at every one of them
    max_rate: float = 0.0

    @property
    def identical(self) -> bool:
        return self.differing == 0

    @property
    def counted_in_ulps(self) -> bool:
        """Whether counting the largest error in ulps says something: it is small beside the
        values (at most 1% of their size), a matter of arithmetic; a difference as large as
        the values is another table, and millions of ulps say nothing more."""
        return self.max_abs <= 1e-2 * self.size_of_values

    def figures(self) -> dict:
        """The figures `--json` prints (the profile is for plots)."""
        return {k: v for k, v in asdict(self).items() if k != "profile"}


_local = threading.local()


def _work(shape) -> tuple[np.ndarray, np.ndarray]:
    """This thread's work arrays for a block of `shape`: one float64 and one bool."""
    found = getattr(_local, "arrays", None)
    if found is None or found[0].shape != shape:
        found = _local.arrays = (np.empty(shape), np.empty(shape, bool))
    return found


def _magnitude(values: np.ndarray) -> np.ndarray:
    """Each column's largest |value| (without a temporary of the block's size)."""
    return np.maximum(values.max(axis=0), -values.min(axis=0))


class Tally:
    """Every figure of a Difference, gathered over row blocks in order (one pass, whatever
    the tables' size, holding a few numbers per column): the errors, and where the elements
    that are not bit-equal lie."""

    def __init__(
        self,
        rows: int,
        cols: int,
        dtype: str,
        first_position: int = 0,
        threshold: float = 1e-4,
        atol=None,
        rtol=None,
    ):
        self.rows, self.cols, self.dtype = rows, cols, dtype
        self.first_position, self.threshold, self.atol, self.rtol = (
            first_position,
            threshold,
            atol,
            rtol,
        )
        self.bands = position_bands(rows)
        self.band_max = [0.0] * len(self.bands)
        self.edges = error_bins(rows)
        self.profile = np.full(len(self.edges) - 1, -np.inf)  # -inf: no row of the bin measured
        self.max_abs, self.worst_flat = 0.0, 0
        self.sum_abs = self.sum_squares = 0.0
        self.differing = self.size = 0
        self.first_over: int | None = None  # row
        self.within = True
        self.column_error = np.zeros(cols)  # each column's largest |error|
        self.max_rate = 0.0
        self.column_size = np.zeros(cols)  # each column's largest |value|, either table
        self.column_count = np.zeros(cols, np.int64)  # elements not bit-equal
        self.column_first = np.full(cols, -1, np.int64)  # rows of the first and last of them
        self.column_last = np.full(cols, -1, np.int64)
        self.first_differing: int | None = None  # flat index
        self.differing_rows = 0
        self.rows_listed: list[int] = []

    def add(self, first: int, candidate: np.ndarray, reference: np.ndarray) -> None:
        """The next rows (from row `first`) of both tables, float64 (rows, cols)."""
        self.merge(first, self.measure(candidate, reference))

    def measure(self, candidate: np.ndarray, reference: np.ndarray) -> dict | None:
        """One block's figures (no state is touched: blocks may be measured in threads; each
        thread reuses its own work arrays)."""
        if candidate.size == 0:
            return None
        error, unequal = _work(candidate.shape)
        np.abs(np.subtract(candidate, reference, out=error), out=error)
        line = error.ravel()
        flat = int(np.argmax(line))
        rows_max = error.max(axis=1)
        above = np.flatnonzero(rows_max > self.threshold)
        within = True
        if self.atol is not None or self.rtol is not None:
            within = bool(
                np.all(error <= (self.atol or 0.0) + (self.rtol or 0.0) * np.abs(reference))
            )
        # not bit-equal: a nonzero error, but for equal infinities (whose difference is NaN)
        if np.isnan(line[flat]):
            np.not_equal(candidate, reference, out=unequal)
        else:
            np.not_equal(error, 0, out=unequal)
        differing = int(np.count_nonzero(unequal))
        found = {
            "top": float(line[flat]),
            "flat": flat,
            "sum": float(line.sum()),
            "squares": float(np.dot(line, line)),
            "differing": differing,
            "size": error.size,
            "rows_max": rows_max,
            "above": int(above[0]) if len(above) else None,
            "within": within,
            "column_error": error.max(axis=0),
            "column_size": np.maximum(_magnitude(candidate), _magnitude(reference)),
        }
        if differing:
            rows = np.flatnonzero(unequal.any(axis=1))
            found.update(
                first_differing=int(np.argmax(unequal.ravel())),
                rows=rows[:LISTED],
                row_count=len(rows),
                column_count=np.count_nonzero(unequal, axis=0),
                column_first=np.argmax(unequal, axis=0),
                column_last=len(unequal) - 1 - np.argmax(unequal[::-1], axis=0),
            )
        return found

    def merge(self, first: int, found: dict | None) -> None:
        """Take a block's figures, blocks in order of their rows."""
        if found is None:
            return
        top = found["top"]
        if top > self.max_abs or (np.isnan(top) and not np.isnan(self.max_abs)):
            self.max_abs, self.worst_flat = top, first * self.cols + found["flat"]
        self.sum_abs += found["sum"]
        self.sum_squares += found["squares"]
        self.differing += found["differing"]
        self.size += found["size"]
        rows_max = found["rows_max"]
        for k, (a, b) in enumerate(self.bands):
            lo, hi = max(a, first), min(b, first + len(rows_max))
            if lo < hi:
                self.band_max[k] = float(
                    np.max([self.band_max[k], rows_max[lo - first : hi - first].max()])
                )
        fold_bins(self.profile, self.edges, first, rows_max)
        positions = self.first_position + first + np.arange(len(rows_max), dtype=np.float64)
        moving = positions > 0
        if moving.any():
            with np.errstate(invalid="ignore"):
                rate = np.nanmax(rows_max[moving] / positions[moving], initial=0.0)
            self.max_rate = max(self.max_rate, float(rate))
        if self.first_over is None and found["above"] is not None:
            self.first_over = first + found["above"]
        self.within = self.within and found["within"]
        np.fmax(self.column_error, found["column_error"], out=self.column_error)
        np.fmax(self.column_size, found["column_size"], out=self.column_size)
        if found["differing"]:
            if self.first_differing is None:
                self.first_differing = first * self.cols + found["first_differing"]
            self.differing_rows += found["row_count"]
            room = LISTED - len(self.rows_listed)
            self.rows_listed += (first + found["rows"][:room]).tolist()
            count = found["column_count"]
            new = (self.column_count == 0) & (count > 0)
            self.column_first[new] = first + found["column_first"][new]
            self.column_last[count > 0] = first + found["column_last"][count > 0]
            self.column_count += count

    def result(self) -> Difference:
        p0, size = self.first_position, self.size
        # NaN where a column's error is NaN (a NaN on one side): it stays the largest
        spacing = ulp(np.nan_to_num(self.column_size, nan=0.0, posinf=0.0), self.dtype)
        ulps = self.column_error / spacing
        columns = np.flatnonzero(self.column_count)
        listed = [
            (
                int(j),
                p0 + int(self.column_first[j]),
                p0 + int(self.column_last[j]),
                int(self.column_count[j]),
            )
            for j in columns[:LISTED]
        ]
        first = self.first_differing
        return Difference(
            dtype=self.dtype,
            first_position=p0,
            max_abs=self.max_abs,
            mean_abs=self.sum_abs / size if size else 0.0,
            rms=float(np.sqrt(self.sum_squares / size)) if size else 0.0,
            max_ulps=float(np.max(ulps, initial=0.0)),
            worst=(p0 + self.worst_flat // self.cols, self.worst_flat % self.cols),
            differing=self.differing,
            size=size,
            bands=[(p0 + a, p0 + b, m) for (a, b), m in zip(self.bands, self.band_max)],
            first_over=None if self.first_over is None else p0 + self.first_over,
            threshold=self.threshold,
            within=None if self.atol is None and self.rtol is None else self.within,
            size_of_values=float(np.max(self.column_size, initial=0.0)),
            first_differing=None if first is None else (p0 + first // self.cols, first % self.cols),
            differing_rows=self.differing_rows,
            differing_columns=len(columns),
            rows_listed=[p0 + r for r in self.rows_listed],
            columns_listed=listed,
            profile=(self.edges, np.where(self.profile == -np.inf, np.nan, self.profile)),
            max_rate=self.max_rate,
        )


def gather(tally: Tally, pairs) -> Difference:
    """Measure (first row, candidate block, reference block) pairs into `tally`: blocks are
    measured in threads (numpy works outside the GIL), a few ahead of the reader, and merged
    in order."""
    import os
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(4, os.cpu_count() or 1))
    pending = deque()
    with ThreadPoolExecutor(workers) as pool:
        for first, candidate, reference in pairs:
            pending.append((first, pool.submit(tally.measure, candidate, reference)))
            if len(pending) > workers:
                first, job = pending.popleft()
                tally.merge(first, job.result())
        while pending:
            first, job = pending.popleft()
            tally.merge(first, job.result())
    return tally.result()


def difference(candidate, reference, dtype, first_position=0, threshold=1e-4, atol=None, rtol=None):
    """Every metric of `compare` for two float64 arrays of the same 2-D shape."""
    tally = Tally(*candidate.shape, dtype, first_position, threshold, atol, rtol)
    tally.add(0, candidate, reference)
    return tally.result()


# The layouts a file of unknown origin is tried in, each (first columns, their partners) for an
# even d: the paper's interleaved pairs, sin and cos halves, and 2-D tables' sin/cos quarters
def _pairings(d: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    found = [("2i and 2i+1", np.arange(0, d, 2), np.arange(1, d, 2))]
    if d >= 4:
        found.append(("i and i+d/2", np.arange(d // 2), np.arange(d // 2, d)))
    if d % 4 == 0 and d >= 8:
        first = np.concatenate([np.arange(d // 4), np.arange(d // 2, 3 * d // 4)])
        found.append(("i and i+d/4 of each half", first, first + d // 4))
    return found


class Facts:
    """What `show` reports about a 2-D table, gathered over row blocks in order: size, range,
    row norms, and for a built table what its family adds (frequencies with their columns,
    positions).

    Every row's norm is checked where the table's columns give it one: for a table pe-cli
    built (or wrote with its parameters) where its family says so (row_norm); for a file of
    unknown origin only where its first rows show sin/cos pairs in one of the common layouts,
    and then the report says what was assumed. A row is off where its norm is further from
    the expected one than rounding every element to the table's dtype can move it."""

    ZERO_ROWS_LISTED = 20
    EVIDENCE_ROWS = 16  # first non-zero rows a file's layout is read from

    def __init__(self, rows: int, cols: int, dtype: str, spec: TableSpec | None = None):
        self.rows, self.cols, self.dtype, self.spec = rows, cols, dtype, spec
        self.minimum, self.maximum, self.total = np.inf, -np.inf, 0.0
        self.norm_min, self.norm_max = np.inf, -np.inf
        self.zero_rows: list[int] = []
        # every non-zero row's norm, where one is known, and what was assumed to know it
        self.norm: Norm | None = None if spec is None else FAMILIES[spec.family].row_norm(spec)
        self.assumed = ""
        self.deviation, self.off = 0.0, 0

    @property
    def tolerance(self) -> float:
        """How far rounding each element to the dtype (within one ulp, as a library's own sin
        and cos are) can move a row's norm, with float64's error in summing d squares."""
        return (FORMATS[self.dtype].epsilon + self.cols * 2.0**-53) * self.norm.value

    def _layout(self, block: np.ndarray) -> None:
        """Where a file's first rows are sin/cos pairs in a common layout: expect sqrt(d/2),
        and say so. A table of one row (frequencies, slopes) or of odd width shows none."""
        live = block[np.any(block != 0, axis=1)][: self.EVIDENCE_ROWS]
        if self.cols % 2 or self.rows < 2 or len(live) < 2:
            return
        allowed = 4 * FORMATS[self.dtype].epsilon  # sin^2 + cos^2 of values rounded to dtype
        for name, first, second in _pairings(self.cols):
            if np.all(np.abs(live[:, first] ** 2 + live[:, second] ** 2 - 1) <= allowed):
                self.norm = Norm(math.sqrt(self.cols / 2), "sqrt(d/2)", "d/2 sin/cos pairs")
                self.assumed = (
                    f"columns {name} are sin/cos pairs, as they are in its first "
                    f"{len(live)} non-zero rows"
                )
                return

    def add(self, first: int, block: np.ndarray) -> None:
        if first == 0 and self.spec is None:
            self._layout(block)
        self.minimum = min(self.minimum, float(block.min()))
        self.maximum = max(self.maximum, float(block.max()))
        self.total += float(block.sum())
        norms = np.sqrt(np.sum(block**2, axis=1))
        self.norm_min = min(self.norm_min, float(norms.min()))
        self.norm_max = max(self.norm_max, float(norms.max()))
        zero = norms == 0
        room = self.ZERO_ROWS_LISTED - len(self.zero_rows)
        self.zero_rows += (first + np.flatnonzero(zero)[:room]).tolist()
        if self.norm is not None:
            deviation = np.abs(norms[~zero] - self.norm.value)
            self.deviation = max(self.deviation, float(deviation.max(initial=0.0)))
            self.off += int(np.count_nonzero(deviation > self.tolerance))

    def report(self) -> dict:
        spec = self.spec
        report = {
            "shape": list(spec.dims if spec else (self.rows, self.cols)),
            "dtype": self.dtype,
            "min": self.minimum,
            "max": self.maximum,
            "mean": self.total / (self.rows * self.cols),
            "row_norms": {"min": self.norm_min, "max": self.norm_max, "zero_rows": self.zero_rows},
        }
        if self.norm is not None:
            report["row_norms"].update(
                {
                    "expected": self.norm.value,
                    "formula": self.norm.formula,
                    "because": self.norm.reason,
                    "max_deviation": self.deviation,
                    "tolerance": self.tolerance,
                    "rows_off": self.off,
                }
            )
            if self.assumed:
                report["row_norms"]["assumed"] = self.assumed
        if spec is not None:
            report.update(FAMILIES[spec.family].facts(spec))
        return report
