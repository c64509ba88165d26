"""`compare` as a library: a family's formulas against the exact table (an audit), any two
tables against each other with a diagnosis of how they differ, and identification of an
unknown table; `run` picks the mode from what it is given and applies the tolerance policy.

Nothing here prints; render.py shows the results, and each result's `to_json` is what
`--json` prints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..core.dtypes import DTYPE_NAMES, FORMATS, ulp
from ..core.errors import BadInput
from ..engine import build
from ..families import (
    CONVENTION_NAMES, DEFAULT_FAMILY, FAMILIES, PART_NAMES, VARIANT_NAMES, families_of_variant,
)
from ..io.read import looks_like_file, read
from ..spec import TableSpec, params_from_options
from .identify import Candidate, exact_reference, identify
from .metrics import Difference, difference

DEFAULT_THRESHOLD = 1e-4  # "first position with |err| above" when no --atol is given


@dataclass
class Side:
    """One table of a comparison, as 2-D float64 values with where they came from."""

    label: str
    values: np.ndarray  # (positions, dimensions)
    dtype: str
    spec: TableSpec | None
    notes: list[str] = field(default_factory=list)

    @property
    def first_position(self) -> int:
        return self.spec.offset if self.spec is not None else 0


def two_d(values: np.ndarray, label: str, spec: TableSpec | None = None) -> tuple[np.ndarray, list[str]]:
    """The 2-D (rows, columns) reading of an array, and notes saying how it was read."""
    if values.size == 0:
        raise BadInput(f"{label} is empty (shape {values.shape})")
    if values.ndim == 2:
        return values, []
    if values.ndim == 1:
        return values[None, :], []
    for family in [FAMILIES[spec.family]] if spec is not None else FAMILIES.values():
        reading = family.reading(values, label)
        if reading is not None:
            return reading
    if values.ndim == 3 and 1 in values.shape[:2]:
        axis = 0 if values.shape[0] == 1 else 1
        layout = "batch-first (1, L, D)" if axis == 0 else "seq-first (L, 1, D)"
        return values.squeeze(axis), [f"{label} is {layout}; compared as (L, D)"]
    raise BadInput(f"{label} has shape {values.shape}, which has no obvious 2-D (L, D) reading")


def parse_spec(text: str, defaults: dict) -> TableSpec:
    """'VARIANT[:CONVENTION][:DTYPE][:PART]' in any order after the variant, over the defaults;
    a variant of another family brings its family."""
    params = dict(defaults)
    for k, token in enumerate(text.split(":")):
        if token in VARIANT_NAMES and (k == 0 or token not in CONVENTION_NAMES):
            params["variant"] = token
            owners = families_of_variant(token)
            if owners and params.get("family", DEFAULT_FAMILY) not in owners:
                params["family"] = owners[0]
        elif token in CONVENTION_NAMES:
            params["convention"] = token
        elif token in DTYPE_NAMES:
            params["dtype"] = token
        elif token in PART_NAMES:
            params["part"] = token
        else:
            raise BadInput(
                f"{text!r} is neither a file nor a table spec (VARIANT[:CONVENTION][:DTYPE][:PART]); "
                f"{token!r} is not a variant, convention, dtype or part"
            )
    variant = FAMILIES[params.get("family", DEFAULT_FAMILY)].variants.get(params.get("variant"))
    if variant is not None and variant.kind == "seed":  # a seed computes in the dtype it is shown in
        params["compute_dtype"] = params.get("compute_dtype") or params.get("dtype", "float32")
        params["dtype"] = params["compute_dtype"]
    return TableSpec(**params)


def side(source: str, defaults: dict) -> Side:
    """A file ('x.npy', 'x.safetensors:NAME', '-') or a built table ('exp-log:float16')."""
    if looks_like_file(source):
        loaded = read(source)
        values, notes = two_d(loaded.values, loaded.label, loaded.spec)
        return Side(loaded.label, values, loaded.dtype, loaded.spec, notes)
    spec = parse_spec(source, defaults)
    values = build(spec.replace(shape="2d")).float64().reshape(spec.rows, spec.cols)
    return Side(source, values, spec.dtype, spec)


def _narrower(a: str, b: str) -> str:
    return a if FORMATS[a].precision <= FORMATS[b].precision else b


# ---------------------------------------------------------------------------------------------
# A family's formulas against the exact table


@dataclass
class Audit:
    title: str
    ulps: str  # the dtype errors are counted in
    rows: list[tuple[str, Difference]]  # worst first

    def to_json(self):
        return [{"variant": name, **asdict(d)} for name, d in self.rows]


def audit(defaults: dict, threshold: float, atol=None, rtol=None) -> Audit:
    """What the family audits (the seed formulas; for the other families their libraries and
    precision recipes) against the exact table, worst first."""
    base = TableSpec(**{**defaults, "variant": "exact", "compute_dtype": None, "dtype": "float64"})
    title, ulps, recipes = FAMILIES[base.family].audit(base, defaults.get("compute_dtype"))
    rows, references = [], {}
    for name, spec in recipes:
        key = (spec.convention, spec.part)
        if key not in references:
            references[key] = exact_reference(spec)
        values = build(spec).float64().reshape(spec.rows, spec.cols)
        rows.append((name, difference(values, references[key], ulps, spec.offset, threshold, atol, rtol)))
    return Audit(title, ulps, sorted(rows, key=lambda row: (-row[1].max_abs, row[0])))


# ---------------------------------------------------------------------------------------------
# Two tables


@dataclass
class Comparison:
    a: Side
    b: Side
    difference: Difference
    findings: list[str]

    def to_json(self):
        return {"a": self.a.label, "b": self.b.label, "findings": self.findings, **asdict(self.difference)}


def compare(a: Side, b: Side, threshold: float, atol=None, rtol=None) -> Comparison:
    notes = a.notes + b.notes
    va, vb = a.values, b.values
    if va.shape != vb.shape and va.shape == vb.shape[::-1]:
        notes.append(f"{a.label} is {b.label} transposed ({va.shape} vs {vb.shape}); compared as {vb.shape}")
        va = va.T
    if va.shape[1] != vb.shape[1]:
        raise BadInput(
            f"cannot compare {a.label} {va.shape} with {b.label} {vb.shape}: widths differ"
        )
    if abs(len(va) - len(vb)) == 1:  # a class-token row (MAE) on one side only?
        longer, label = (va, a.label) if len(va) > len(vb) else (vb, b.label)
        if not longer[0].any():
            notes.append(f"{label} has an all-zero first row (a class token); compared without it")
            va, vb = (va[1:], vb) if longer is va else (va, vb[1:])
    if len(va) != len(vb):
        rows = min(len(va), len(vb))
        notes.append(
            f"{a.label} has {len(va)} positions and {b.label} {len(vb)}; compared the first {rows}"
        )
        va, vb = va[:rows], vb[:rows]
    dtype = _narrower(a.dtype, b.dtype)
    result = difference(va, vb, dtype, b.first_position, threshold, atol, rtol)
    if result.max_ulps > 1:
        notes += diagnose(va, vb, dtype, a.label, b.label)
        specs = [side.spec for side in (a, b) if side.spec is not None]
        if len(specs) == 2 and specs[0].family == specs[1].family and specs[0].convention != specs[1].convention:
            described = FAMILIES[specs[0].family].conventions
            notes += [f"{side.label} is {side.spec.convention}: {described[side.spec.convention]}" for side in (a, b)]
    return Comparison(a, b, result, notes)


def diagnose(va: np.ndarray, vb: np.ndarray, dtype: str, la: str, lb: str) -> list[str]:
    """Say what kind of difference two same-shape tables have: each family says what it
    recognizes (another layout, a padding row, shifted rows, another base); then where the
    tables stop agreeing."""
    findings = []
    for family in FAMILIES.values():
        said = family.explain(va, vb, dtype, la, lb)
        if said is not None:
            findings += said[0]
            if said[1]:
                return findings
    error = np.abs(va - vb) > ulp(vb, dtype)
    flat = np.flatnonzero(error)
    p, j = divmod(int(flat[0]), va.shape[1])
    findings.append(
        f"they agree up to position {p}, dimension {j} and differ from there on "
        f"({len(flat)} of {error.size} elements by more than 1 ulp of {dtype})"
    )
    return findings


# ---------------------------------------------------------------------------------------------
# Identification


@dataclass
class Identification:
    target: Side
    candidates: list[Candidate]

    def to_json(self):
        return {"source": self.target.label, "notes": self.target.notes, "candidates": [
            {"name": c.name, "spec": asdict(c.spec), **asdict(c.difference)} for c in self.candidates
        ]}


# ---------------------------------------------------------------------------------------------
# The command: which mode, and whether it failed


@dataclass
class Report:
    result: Audit | Identification | Comparison
    failed: bool  # outside --atol/--rtol (the command exits 1)


def run(a: str | None, b: str | None, options: dict, atol: float | None = None,
        rtol: float | None = None) -> Report:
    """`pe-cli compare [A [B]]`: with no tables the family's audit; with one file, its
    identification; else A against B (B by default the exact table of A's convention and
    part). Built tables take their sizes from `options`, or from a file on the other side
    (the first file's shape, else 1024 x 512)."""
    files = {s: side(s, {}) for s in (a, b) if s is not None and looks_like_file(s)}
    rows, cols = next(iter(files.values())).values.shape if files else (1024, 512)
    defaults = {"d_model": cols, "seq_len": rows, **params_from_options(options)}
    threshold = atol if atol is not None else DEFAULT_THRESHOLD
    tolerance = atol is not None or rtol is not None
    if a is None:
        result = audit(defaults, threshold, atol, rtol)
        return Report(result, any(d.within is False for _, d in result.rows))
    if b is None and a in files:
        target = files[a]
        candidates = identify(target.label, target.values, target.dtype, target.notes, threshold)
        best = candidates[0].difference if candidates else None
        failed = tolerance and (best is None or not (best.max_abs <= (atol or 0) + (rtol or 0)))
        return Report(Identification(target, candidates), failed)
    first = files.get(a) or side(a, defaults)
    if b is None:  # a built table against the exact table of its convention and part
        b = f"exact:{first.spec.convention}:float64:{first.spec.part}"
    second = files.get(b) or side(b, defaults)
    result = compare(first, second, threshold, atol, rtol)
    return Report(result, result.difference.within is False)
