"""`compare` as a library: seed formulas against the exact table, any two tables against each
other with a diagnosis of how they differ, and identification of an unknown table.

Nothing here prints; render.py shows the results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .conventions import CONVENTIONS
from .dtypes import DTYPE_NAMES, FORMATS
from .engine import build
from .errors import BadInput
from .io import Loaded, looks_like_file, read
from .metrics import Difference, difference, ulp
from .spec import VARIANT_NAMES, TableSpec
from .variants import LIBRARY_VARIANTS, SEED_VARIANTS


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


def _two_d(values: np.ndarray, label: str, spec: TableSpec | None = None) -> tuple[np.ndarray, list[str]]:
    if values.size == 0:
        raise BadInput(f"{label} is empty (shape {values.shape})")
    if values.ndim == 2:
        return values, []
    if values.ndim == 1:
        return values[None, :], []
    if values.ndim == 3 and values.shape[1] == values.shape[2] and (
        spec is None or spec.family == "alibi"
    ):
        heads, length, _ = values.shape
        return values.reshape(heads * length, length), [
            f"{label} is {heads} square (L, L) matrices (ALiBi heads); compared as rows of {length}"
        ]
    if values.ndim == 3 and 1 in values.shape[:2]:
        axis = 0 if values.shape[0] == 1 else 1
        layout = "batch-first (1, L, D)" if axis == 0 else "seq-first (L, 1, D)"
        return values.squeeze(axis), [f"{label} is {layout}; compared as (L, D)"]
    raise BadInput(f"{label} has shape {values.shape}, which has no obvious 2-D (L, D) reading")


def parse_spec(text: str, defaults: dict) -> TableSpec:
    """'VARIANT[:CONVENTION][:DTYPE]' in any order after the variant, over the defaults."""
    params = dict(defaults)
    for token in text.split(":"):
        if token in VARIANT_NAMES:
            params["variant"] = token
        elif token in CONVENTIONS:
            params["convention"] = token
        elif token in DTYPE_NAMES:
            params["dtype"] = token
        else:
            raise BadInput(
                f"{text!r} is neither a file nor a table spec (VARIANT[:CONVENTION][:DTYPE]); "
                f"{token!r} is not a variant, convention or dtype"
            )
    if params.get("variant") in SEED_VARIANTS:
        params["compute_dtype"] = params.get("compute_dtype") or params.get("dtype", "float32")
        params["dtype"] = params["compute_dtype"]
    return TableSpec(**params)


def side(source: str, defaults: dict) -> Side:
    """A file ('x.npy', 'x.safetensors:NAME', '-') or a built table ('exp-log:float16')."""
    if looks_like_file(source):
        loaded: Loaded = read(source)
        values, notes = _two_d(loaded.values, loaded.label, loaded.spec)
        return Side(loaded.label, values, loaded.dtype, loaded.spec, notes)
    spec = parse_spec(source, defaults)
    values = build(replace(spec, shape="2d")).float64().reshape(spec.rows, spec.cols)
    return Side(source, values, spec.dtype, spec)


def _narrower(a: str, b: str) -> str:
    return a if FORMATS[a].precision <= FORMATS[b].precision else b


def exact_reference(spec: TableSpec) -> np.ndarray:
    """The exact float64 table for a spec's convention, sizes, base and offset."""
    return build(
        replace(spec, variant="exact", dtype="float64", compute_dtype=None, shape="2d", device="cpu")
    ).float64()


# ---------------------------------------------------------------------------------------------
# Seed formulas against the exact table


def seed_report(defaults: dict, threshold: float, atol=None, rtol=None) -> list[tuple[str, Difference]]:
    """Every seed variant against the exact table, worst first."""
    compute = defaults.get("compute_dtype") or "float32"
    base_spec = TableSpec(**{**defaults, "variant": "exact", "compute_dtype": None, "dtype": "float64"})
    reference = exact_reference(base_spec)
    rows = []
    for name in SEED_VARIANTS:
        spec = replace(base_spec, variant=name, compute_dtype=compute, dtype=compute)
        values = build(spec).float64()
        rows.append(
            (name, difference(values, reference, compute, spec.offset, threshold, atol, rtol))
        )
    return sorted(rows, key=lambda row: (-row[1].max_abs, row[0]))


# ---------------------------------------------------------------------------------------------
# Two tables


@dataclass
class Comparison:
    a: Side
    b: Side
    difference: Difference
    findings: list[str]


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
    return Comparison(a, b, result, notes)


def _close(x: np.ndarray, y: np.ndarray, dtype: str) -> bool:
    return x.shape == y.shape and x.size > 0 and bool(np.all(np.abs(x - y) <= ulp(y, dtype)))


def _concat_order(d: int) -> np.ndarray:
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def diagnose(va: np.ndarray, vb: np.ndarray, dtype: str, la: str, lb: str) -> list[str]:
    """Say what kind of difference two same-shape tables have, where it can be told."""
    d = va.shape[1]
    order = _concat_order(d)
    if _close(va[:, order], vb, dtype):
        return [f"same values in another layout: {la} is interleaved, {lb} is [sin | cos] (concat)"]
    if _close(va, vb[:, order], dtype):
        return [f"same values in another layout: {la} is [sin | cos] (concat), {lb} is interleaved"]
    findings = []
    zero_a = ~va.any(axis=1)
    zero_b = ~vb.any(axis=1)
    for rows, who, other in ((zero_a & ~zero_b, la, lb), (zero_b & ~zero_a, lb, la)):
        for r in np.nonzero(rows)[0][:3]:
            findings.append(f"row {r} is all zeros in {who} and not in {other} (a padding row?)")
    keep = ~(zero_a | zero_b)
    if findings and _close(va[keep], vb[keep], dtype):
        return findings + ["apart from those rows the tables agree within 1 ulp"]
    for k in range(1, min(len(va) - 1, 64) + 1):
        for x, y, sign in ((va[k:], vb[:-k], 1), (va[:-k], vb[k:], -1)):
            rows = ~(~x.any(axis=1) | ~y.any(axis=1))
            if rows.sum() > 1 and _close(x[rows], y[rows], dtype):
                first, second = (la, lb) if sign == 1 else (lb, la)
                return findings + [
                    f"rows shifted by {k}: row p of {second} is row p+{k} of {first} "
                    f"(another --offset, or positions starting at padding_idx+1)"
                ]
    findings += _frequency_findings(va, vb, la, lb)
    error = np.abs(va - vb) > ulp(vb, dtype)
    flat = np.flatnonzero(error)
    p, j = divmod(int(flat[0]), d)
    findings.append(
        f"they agree up to position {p}, dimension {j} and differ from there on "
        f"({len(flat)} of {error.size} elements by more than 1 ulp of {dtype})"
    )
    return findings


def _frequency_findings(va, vb, la, lb) -> list[str]:
    """Another base, or another frequency family, where both tables' angles are clean lines."""
    fits_a = {f.family: f for f in fit(va) if f.residual < _FIT_RESIDUAL}
    fits_b = {f.family: f for f in fit(vb) if f.residual < _FIT_RESIDUAL}
    if not fits_a or not fits_b:
        return []
    for family in fits_a.keys() & fits_b.keys():
        base_a, base_b = fits_a[family].base, fits_b[family].base
        if math.isclose(base_a, base_b, rel_tol=1e-4):
            return []  # same frequencies: the difference is elsewhere
    shared = fits_a.keys() & fits_b.keys()
    if shared:
        family = sorted(shared)[0]
        return [
            f"another base: with {_FAMILY_CONVENTIONS[family]} frequencies {la} fits base "
            f"{fits_a[family].base:.6g} and {lb} base {fits_b[family].base:.6g}"
        ]
    return [
        f"another frequency family or layout: {la} fits {', '.join(sorted(fits_a))}, "
        f"{lb} fits {', '.join(sorted(fits_b))}"
    ]


# ---------------------------------------------------------------------------------------------
# Identification of an unknown table

# column pairs (sin, cos) and frequency exponents e_i (w_i = base^-e_i) of each layout family
_FAMILIES = {
    "interleaved": lambda d: ([(2 * i, 2 * i + 1) for i in range(d // 2)], lambda i: 2 * i / d),
    "concat": lambda d: (
        [(i, (d + 1) // 2 + i) for i in range(d // 2)],
        lambda i: 2 * i / d,
    ),
    "timescale": lambda d: (
        [(i, d // 2 + i) for i in range(d // 2)],
        lambda i: i / max(d // 2 - 1, 1),
    ),
}
_FAMILY_CONVENTIONS = {"interleaved": "vaswani", "concat": "concat", "timescale": "tensor2tensor"}


@dataclass
class Fit:
    """What a table's angles say: its layout family, base, first position and zero rows."""

    family: str
    base: float
    offset: int
    padding: np.ndarray
    residual: float  # largest deviation of any angle from a straight line in position (radians)


_FIT_RESIDUAL = 1e-3  # angles of a real table lie on lines to float rounding; seed 000's do not


def fit(values: np.ndarray) -> list[Fit]:
    """Every layout family whose (sin, cos) column pairs turn at a steady rate per row."""
    rows, d = values.shape
    if rows < 3 or d < 2:
        return []
    padding = np.nonzero(~values.any(axis=1))[0]
    live = np.nonzero(values.any(axis=1))[0]
    fits = []
    for family, layout in _FAMILIES.items():
        pairs, exponent = layout(d)
        if not pairs:
            continue
        sin = values[live][:, [p[0] for p in pairs]]
        cos = values[live][:, [p[1] for p in pairs]]
        if not np.allclose(np.hypot(sin, cos), 1, atol=2e-2):
            continue
        angle = np.unwrap(np.arctan2(sin, cos), axis=0)
        slope, intercept = np.polyfit(live, angle, 1)  # radians per row, one per pair
        if not math.isclose(slope[0], 1.0, rel_tol=1e-2):
            continue  # every family has w_0 = 1
        residual = float(np.max(np.abs(angle - intercept - np.outer(live, slope))))
        logs = [-math.log(w) / exponent(i) for i, w in enumerate(slope) if i > 0 and 0 < w < 1]
        base = math.exp(float(np.median(logs))) if logs else 10000.0
        lowest = slope[-1] if slope[-1] > 0 else 1.0
        start = float(np.mod(np.arctan2(sin[0, -1], cos[0, -1]), 2 * math.pi))
        offset = max(0, round(start / lowest - live[0]))
        fits.append(Fit(family, base, offset, padding, residual))
    return fits


def _digits(value: float) -> int:
    return next(k for k in range(1, 18) if float(f"{value:.{k}g}") == value)


def _plausible_bases(base: float) -> list[float]:
    candidates = {base, 10000.0, 500000.0, 1000000.0, 100000.0, 1000.0, 10.0}
    for digits in (2, 3, 4, 6):
        candidates.add(float(f"{base:.{digits}g}"))
    return sorted(b for b in candidates if b > 1 and math.isclose(b, base, rel_tol=0.05))


def _choose_base(values: np.ndarray, spec: TableSpec, dtype: str) -> TableSpec:
    """The base the fit suggests, or the roundest number near it that explains the first rows
    as well (within float rounding): a cheap look before the whole table is built."""
    head = min(len(values), 64)
    scored = [
        (float(np.abs(values[:head] - exact_reference(replace(spec, base=b, seq_len=head))).max()), b)
        for b in _plausible_bases(spec.base)
    ]
    best = min(error for error, _ in scored)
    allowed = 2 * best + 4 * FORMATS[dtype].epsilon
    base = min((b for error, b in scored if error <= allowed), key=lambda b: (_digits(b), b))
    return replace(spec, base=base)


@dataclass
class Candidate:
    name: str  # e.g. "fairseq (padding_idx=1)", "library whisper"
    spec: TableSpec
    difference: Difference
    source: str = ""  # for library variants: the function and version matched


def identify(target: Side, threshold: float) -> list[Candidate]:
    """Rank the built-in conventions (with a plausible base, offset and padding) by fit:
    bit-identical tables first, then by largest absolute error."""
    values = target.values
    fits = fit(values)
    if not fits and values.shape[0] < values.shape[1]:
        values = values.T
        target.notes.append(f"{target.label} read as transposed {values.shape}")
        fits = fit(values)
    rows, d = values.shape
    candidates = []
    for found in fits:
        names = [_FAMILY_CONVENTIONS[found.family]]
        if found.family == "timescale":
            names = ["fairseq"] if len(found.padding) else ["tensor2tensor", "whisper", "fairseq"]
        for name in names:
            try:
                CONVENTIONS[name].check(d)
            except BadInput:
                continue
            pad = int(found.offset + found.padding[0]) if name == "fairseq" and len(found.padding) else None
            spec = TableSpec(
                d_model=d, seq_len=rows, convention=name, base=found.base, offset=found.offset,
                padding_idx=pad, dtype="float64",
            )
            spec = _choose_base(values, spec, target.dtype)
            reference = exact_reference(spec)
            label = name + (f" (padding_idx={pad})" if pad is not None else "")
            candidates.append(
                Candidate(label, spec, _score(values, spec, reference, target.dtype, threshold))
            )
            for label, formula, source in _formulas(spec, target.dtype):
                if np.array_equal(build(formula).float64(), values):
                    result = difference(values, reference, target.dtype, spec.offset, threshold)
                    result.differing = 0
                    candidates.append(Candidate(label, formula, result, source))
    # bit-identical first, then by error; among equals a convention, then a library, then a
    # seed recipe (the ties are all reported)
    kind = lambda c: 2 if c.name.startswith("seed") else 1 if c.name.startswith("library") else 0  # noqa: E731
    candidates.sort(key=lambda c: (not c.difference.identical, c.difference.max_abs, kind(c)))
    return candidates


def _score(values, spec, reference, dtype, threshold) -> Difference:
    rounded = build(replace(spec, dtype=dtype, shape="2d")).float64()
    result = difference(values, reference, dtype, spec.offset, threshold)
    result.differing = int(np.count_nonzero(values != rounded))  # bit-equal to the exact table?
    return result


def _formulas(spec, dtype):
    """(label, spec, source) for each seed recipe and library that could have written a
    `dtype` table of this convention, size, base and offset."""
    if spec.convention == "vaswani" and dtype in ("float32", "float16", "bfloat16"):
        for name in SEED_VARIANTS:
            seed = replace(spec, variant=name, compute_dtype=dtype, dtype=dtype)
            yield f"seed variant {name} in {dtype}", seed, ""
    if dtype != "float32":  # every library computes in float32
        return
    for name, library in LIBRARY_VARIANTS.items():
        if library.family != spec.family or spec.convention not in library.conventions:
            continue
        try:
            candidate = TableSpec(
                d_model=spec.d_model, seq_len=spec.seq_len, variant=name, base=spec.base,
                offset=spec.offset, padding_idx=spec.padding_idx, shape="2d",
            )
        except BadInput:  # the library cannot make this table (its base, offset, width)
            continue
        yield f"library {name}", candidate, library.source
