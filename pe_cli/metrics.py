"""Facts about a table, gathered block by block as it streams past."""

from __future__ import annotations

import hashlib
import time

import numpy as np

from .dtypes import host_bits, host_float
from .engine import blocks, prepare
from .spec import TableSpec

CORNER = 4  # rows and columns of each corner kept for the summary


class Summary:
    """Shape-independent facts of a 2-D table seen as a sequence of row blocks."""

    def __init__(self, dtype: str):
        self.dtype = dtype
        self.rows = 0
        self.minimum = np.inf
        self.maximum = -np.inf
        self.finite = True
        self._sha256 = hashlib.sha256()
        self.head: np.ndarray | None = None  # first rows
        self.tail: np.ndarray | None = None  # last rows

    def update(self, block) -> np.ndarray:
        """Take one block (numpy or torch); return it as host storage bits, ready to write."""
        bits = np.ascontiguousarray(host_bits(block))
        values = host_float(bits, self.dtype)
        self._sha256.update(bits.astype(bits.dtype.newbyteorder("<"), copy=False).tobytes())
        if values.size:
            self.finite = self.finite and bool(np.isfinite(values).all())
            self.minimum = min(self.minimum, float(values.min()))
            self.maximum = max(self.maximum, float(values.max()))
        if self.head is None or len(self.head) < CORNER:
            head = values[:CORNER] if self.head is None else np.concatenate([self.head, values])
            self.head = head[:CORNER]
        self.tail = values[-CORNER:] if len(values) >= CORNER or self.tail is None else (
            np.concatenate([self.tail, values])[-CORNER:]
        )
        self.rows += len(values)
        return bits

    @property
    def sha256(self) -> str:
        """SHA-256 of the table's raw little-endian bytes (what `--format raw` writes)."""
        return self._sha256.hexdigest()


def summarize(spec: TableSpec) -> tuple[Summary, float, str]:
    """Build a table block by block without keeping it: its facts, seconds taken, device."""
    device = prepare(spec)
    facts = Summary(spec.dtype)
    started = time.perf_counter()
    for block in blocks(spec):
        facts.update(block)
    return facts, time.perf_counter() - started, device
