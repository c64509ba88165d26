"""The figures pe-cli prints about tables: a built table's summary (gathered block by block as
it streams past), how one table differs from another, and the facts `show` reports."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np

from ..core.dtypes import host_bits, host_float, ulp
from ..core.errors import BadInput
from ..engine import blocks, prepare
from ..families import FAMILIES
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
        self.tail = values[-CORNER:] if len(values) >= CORNER or self.tail is None else (
            np.concatenate([self.tail, values])[-CORNER:]
        )

    @property
    def sha256(self) -> str:
        """SHA-256 of the table's raw little-endian bytes (what `--format raw` writes)."""
        return self._sha256.hexdigest()


SUMMARY_MAX_ELEMENTS = 2**33


def summarize(spec: TableSpec) -> tuple[Summary, float, str]:
    """Build a table block by block without keeping it: its facts, seconds taken, device."""
    device = prepare(spec)
    if spec.seq_len * spec.d_model > SUMMARY_MAX_ELEMENTS:
        raise BadInput(
            f"a {spec.seq_len} x {spec.d_model} table has {spec.seq_len * spec.d_model:.3g} "
            "elements, too many to summarize; write it with -o FILE (it streams)"
        )
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


@dataclass
class Difference:
    """How a candidate table differs from a reference table of the same 2-D shape."""

    dtype: str  # whose ulps the error is counted in
    first_position: int
    max_abs: float
    mean_abs: float
    rms: float
    max_ulps: float
    worst: tuple[int, int]  # (position, dimension)
    differing: int  # elements that are not bit-equal
    size: int
    bands: list[tuple[int, int, float]]  # (first position, last position + 1, max |error|)
    first_over: int | None  # first position whose error exceeds `threshold`
    threshold: float
    within: bool | None  # within --atol/--rtol, when a tolerance was given

    @property
    def identical(self) -> bool:
        return self.differing == 0


def difference(candidate, reference, dtype, first_position=0, threshold=1e-4, atol=None, rtol=None):
    """Every metric of `compare` for two float64 arrays of the same 2-D shape."""
    error = np.abs(candidate - reference)
    # counted at the larger magnitude of the two, so that an exact zero on one side does not
    # turn an error into 2**149 ulps
    ulps = error / ulp(np.maximum(np.abs(candidate), np.abs(reference)), dtype)
    flat = int(np.argmax(error)) if error.size else 0
    rows_max = error.max(axis=1) if error.size else np.zeros(0)
    over = np.nonzero(rows_max > threshold)[0]
    within = None
    if atol is not None or rtol is not None:
        within = bool(np.all(error <= (atol or 0.0) + (rtol or 0.0) * np.abs(reference)))
    return Difference(
        dtype=dtype,
        first_position=first_position,
        max_abs=float(error.max(initial=0.0)),
        mean_abs=float(error.mean()) if error.size else 0.0,
        rms=float(np.sqrt(np.mean(error**2))) if error.size else 0.0,
        max_ulps=float(ulps.max(initial=0.0)),
        worst=(first_position + flat // error.shape[1], flat % error.shape[1]),
        differing=int(np.count_nonzero(candidate != reference)),
        size=int(error.size),
        bands=[
            (first_position + a, first_position + b, float(rows_max[a:b].max()))
            for a, b in position_bands(len(rows_max))
        ],
        first_over=int(first_position + over[0]) if len(over) else None,
        threshold=threshold,
        within=within,
    )


def facts(values: np.ndarray, dtype: str, spec: TableSpec | None = None) -> dict:
    """What `show` reports about a 2-D table: size, range, row norms, and for a built table
    what its family adds (frequencies with their columns, positions)."""
    import math

    rows, d = values.shape
    norms = np.sqrt(np.sum(values**2, axis=1))
    zero_rows = np.nonzero(norms == 0)[0]
    report = {
        "shape": list(spec.dims if spec else values.shape),
        "dtype": dtype,
        "min": float(values.min()),
        "max": float(values.max()),
        "mean": float(values.mean()),
        "row_norms": {"min": float(norms.min()), "max": float(norms.max()),
                      "zero_rows": zero_rows[:20].tolist()},
    }
    if d % 2 == 0 and (spec is None or FAMILIES[spec.family].paired_columns):
        # every sin/cos pair adds sin^2 + cos^2 = 1: an ideal row has norm sqrt(d/2)
        expected = math.sqrt(d / 2)
        live = np.ones(rows, bool)
        live[zero_rows] = False
        deviation = np.abs(norms[live] - expected)
        report["row_norms"].update({
            "expected": expected,
            "max_deviation": float(deviation.max(initial=0.0)),
            "rows_off_by_1e-3": int(np.count_nonzero(deviation > 1e-3)),
        })
    if spec is not None:
        report.update(FAMILIES[spec.family].facts(spec))
    return report
