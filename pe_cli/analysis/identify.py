"""Identification of an unknown table: every family proposes what it could be (`candidates`,
through the Bench below) and each proposal is scored against the exact table it names.
Bit-identical candidates come first, then by largest error; among equals an exact convention,
then a library, then a seed recipe.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import BadInput
from ..engine import build
from ..families import FAMILIES, find_variant
from ..families.base import digits
from ..spec import TableSpec
from .metrics import Difference, difference

_RANK = {None: 0, "library": 1, "recipe": 1, "seed": 2}


@dataclass
class Candidate:
    name: str  # e.g. "fairseq (padding_idx=1)", "library whisper"
    spec: TableSpec
    difference: Difference
    source: str = ""  # for library variants: the function and version matched

    @property
    def rank(self) -> int:
        variant = find_variant(self.spec)
        return _RANK[variant.kind if variant is not None else None]


def exact_reference(spec: TableSpec) -> np.ndarray:
    """The exact float64 table for a spec's family, convention, part, sizes, base and offset,
    seen as 2-D (rows, cols)."""
    exact = spec.replace(variant="exact", dtype="float64", compute_dtype=None, shape="2d", device="cpu")
    return build(exact).float64().reshape(spec.rows, spec.cols)


class Bench:
    """What a family's `candidates` works with: specs, exact references, built values, and
    candidates scored against the table being identified."""

    def __init__(self, values: np.ndarray, dtype: str, threshold: float):
        self.values, self.dtype, self.threshold = values, dtype, threshold

    @staticmethod
    def spec(**params) -> TableSpec | None:
        """A spec, or None where these parameters make no table (a library that cannot)."""
        try:
            return TableSpec(**params)
        except BadInput:
            return None

    @staticmethod
    def reference(spec: TableSpec) -> np.ndarray:
        return exact_reference(spec)

    @staticmethod
    def values_of(spec: TableSpec) -> np.ndarray:
        """A built table's values as 2-D float64."""
        return build(spec).float64().reshape(spec.rows, spec.cols)

    def candidate(self, name: str, spec: TableSpec, source: str = "", reference=None) -> Candidate | None:
        """The exact table of `spec` scored against the table (and whether it is bit-equal to
        its correctly rounded values); a variant only where it reproduces the table bit for
        bit, else None."""
        reference = exact_reference(spec) if reference is None else reference
        if reference.shape != self.values.shape:
            return None
        if find_variant(spec) is not None:
            if not np.array_equal(self.values_of(spec), self.values):
                return None
            return self.identical(name, spec, reference, source)
        rounded = self.values_of(spec.replace(dtype=self.dtype, shape="2d"))
        result = difference(self.values, reference, self.dtype, spec.offset, self.threshold)
        result.differing = int(np.count_nonzero(self.values != rounded))  # bit-equal to exact?
        return Candidate(name, spec, result, source)

    def identical(self, name: str, spec: TableSpec, reference, source: str = "") -> Candidate:
        """A candidate known to reproduce the table bit for bit (by the caller's own test),
        with its error against the exact table."""
        result = difference(self.values, reference, self.dtype, spec.offset, self.threshold)
        result.differing = 0
        return Candidate(name, spec, result, source)

    def libraries(self, spec: TableSpec, reference):
        """Each library variant of the spec's family that writes this table bit for bit."""
        if self.dtype != "float32":  # every library computes in float32
            return
        for name, found in FAMILIES[spec.family].variants.items():
            if found.kind != "library" or spec.convention not in found.conventions:
                continue
            try:
                library = spec.replace(variant=name, dtype="float32")
            except BadInput:  # the library cannot make this table
                continue
            yield self.candidate(f"library {name}", library, found.source, reference)


def identify(label: str, values: np.ndarray, dtype: str, notes: list[str], threshold: float) -> list[Candidate]:
    """Rank what every family says the table could be; an (L, D) table wider than long that
    no family explains is tried transposed."""
    found = _candidates(values, dtype, notes, threshold)
    if not found and values.shape[0] < values.shape[1]:
        values = values.T
        notes.append(f"{label} read as transposed {values.shape}")
        found = _candidates(values, dtype, notes, threshold)
    # among bit-identical candidates the one with the roundest base (two frequency laws can
    # round to the same float32 table), then the closest to exact
    found.sort(key=lambda c: (not c.difference.identical, digits(c.spec.base) if c.difference.identical else 0,
                              c.difference.max_abs, c.rank))
    return found


def _candidates(values, dtype, notes, threshold) -> list[Candidate]:
    bench = Bench(values, dtype, threshold)
    found = []
    for family in FAMILIES.values():
        try:
            found += [c for c in family.candidates(values, dtype, notes, bench) if c is not None]
        except BadInput:  # a reading the family cannot have
            continue
    return found
