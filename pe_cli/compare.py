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
from .families import CONVENTION_NAMES, PART_NAMES
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
    """'VARIANT[:CONVENTION][:DTYPE][:PART]' in any order after the variant, over the defaults;
    a library variant of another family brings its family."""
    params = dict(defaults)
    for k, token in enumerate(text.split(":")):
        if token in VARIANT_NAMES and (k == 0 or token not in CONVENTION_NAMES):
            params["variant"] = token
            if token in LIBRARY_VARIANTS:
                params["family"] = LIBRARY_VARIANTS[token].family
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
    """The exact float64 table for a spec's family, convention, part, sizes, base and offset,
    seen as 2-D (rows, cols)."""
    exact = replace(spec, variant="exact", dtype="float64", compute_dtype=None, shape="2d", device="cpu")
    return build(exact).float64().reshape(spec.rows, spec.cols)


# ---------------------------------------------------------------------------------------------
# Seed formulas against the exact table


def recipes(base_spec: TableSpec, compute: str | None):
    """(label, spec, ulp dtype) of every formula `compare` checks for the spec's family: the
    seed notebooks' (in `compute`, default float32) for sinusoidal tables; the libraries' and,
    for RoPE, the precision recipes (one stage in `compute`, default bfloat16) for the others."""
    if base_spec.family == "sinusoidal":
        compute = compute or "float32"
        for name in SEED_VARIANTS:
            yield name, replace(base_spec, variant=name, compute_dtype=compute, dtype=compute), compute
        return
    for name, library in LIBRARY_VARIANTS.items():
        if library.family != base_spec.family:
            continue
        try:
            spec = replace(
                base_spec, variant=name, dtype="float32", shape="2d",
                convention=base_spec.convention if base_spec.convention in library.conventions else None,
                compute_dtype=compute if library.lowered else None,
                part=base_spec.part if library.part is None else library.part,
            )
        except BadInput:  # the library cannot make this table
            continue
        label = f"{name} ({compute or 'bfloat16'})" if library.lowered else name
        yield label, spec, "float32"


def seed_report(defaults: dict, threshold: float, atol=None, rtol=None) -> list[tuple[str, Difference]]:
    """Every seed variant (or the family's library and precision recipes) against the exact
    table, worst first."""
    base_spec = TableSpec(**{**defaults, "variant": "exact", "compute_dtype": None, "dtype": "float64"})
    rows, references = [], {}
    for name, spec, dtype in recipes(base_spec, defaults.get("compute_dtype")):
        key = (spec.convention, spec.part)
        if key not in references:
            references[key] = exact_reference(spec)
        values = build(spec).float64().reshape(spec.rows, spec.cols)
        rows.append((name, difference(values, references[key], dtype, spec.offset, threshold, atol, rtol)))
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
        layouts = [side.spec for side in (a, b) if side.spec is not None and side.spec.family == "sincos2d"]
        if len(layouts) == 2 and layouts[0].convention != layouts[1].convention:
            from .families import FAMILIES

            described = FAMILIES["sincos2d"].conventions
            notes += [f"{side.label} is {side.spec.convention}: {described[side.spec.convention]}" for side in (a, b)]
    return Comparison(a, b, result, notes)


def _close(x: np.ndarray, y: np.ndarray, dtype: str) -> bool:
    return x.shape == y.shape and x.size > 0 and bool(np.all(np.abs(x - y) <= ulp(y, dtype)))


def _concat_order(d: int) -> np.ndarray:
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def diagnose(va: np.ndarray, vb: np.ndarray, dtype: str, la: str, lb: str) -> list[str]:
    """Say what kind of difference two same-shape tables have, where it can be told."""
    d = va.shape[1]
    if d % 4 == 0 and d >= 8:  # 2-D tables: four blocks (sin/cos of two coordinates) reordered
        from itertools import permutations

        quarter = d // 4
        for blocks in permutations(range(4)):
            order = np.concatenate([np.arange(k * quarter, (k + 1) * quarter) for k in blocks])
            # within 1e-3: a library's rounding may differ, another layout differs by O(1)
            if blocks != (0, 1, 2, 3) and np.max(np.abs(va[:, order] - vb)) < 1e-3:
                moved = ", ".join(f"{lb} block {k} = {la} block {j}" for k, j in enumerate(blocks) if k != j)
                return [
                    f"same values with column blocks of {quarter} (d/4) reordered: {moved} "
                    f"(another 2-D layout: which coordinate, sin/cos grouping)"
                ]
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
    candidates = family_candidates(values, target.dtype, threshold, target.notes)
    fits = fit(values)
    if not fits and not candidates and values.shape[0] < values.shape[1]:
        values = values.T
        target.notes.append(f"{target.label} read as transposed {values.shape}")
        fits = fit(values)
    rows, d = values.shape
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
    rounded = build(replace(spec, dtype=dtype, shape="2d")).float64().reshape(values.shape)
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


# ---------------------------------------------------------------------------------------------
# Identification of RoPE, ALiBi and 2-D tables


def _candidate(name: str, spec: TableSpec, values: np.ndarray, dtype: str, threshold: float,
               source="", reference: np.ndarray | None = None):
    """A candidate scored against the exact table (given, or built here); a library variant
    only where it reproduces the values bit for bit, else None."""
    reference = exact_reference(spec) if reference is None else reference
    if reference.shape != values.shape:
        return None
    if spec.variant == "exact":
        return Candidate(name, spec, _score(values, spec, reference, dtype, threshold), source)
    if not np.array_equal(build(spec).float64().reshape(spec.rows, spec.cols), values):
        return None
    result = difference(values, reference, dtype, spec.offset, threshold)
    result.differing = 0
    return Candidate(name, spec, result, source)


def family_candidates(values: np.ndarray, dtype: str, threshold: float, notes: list[str]) -> list[Candidate]:
    """Candidates from the RoPE, ALiBi and 2-D families for a 2-D reading of a table."""
    found = []
    for finder in (_alibi_candidates, _rope_candidates, _sincos2d_candidates):
        try:
            found += [c for c in finder(values, dtype, threshold, notes) if c is not None]
        except BadInput:  # a reading the family cannot have
            continue
    return found


def _library_candidates(spec: TableSpec, values, dtype, threshold, reference):
    for name, library in LIBRARY_VARIANTS.items():
        if (library.family != spec.family or library.lowered or dtype != "float32"
                or spec.convention not in library.conventions):
            continue
        try:
            candidate = replace(spec, variant=name, dtype="float32")
        except BadInput:  # the library cannot make this table
            continue
        yield _candidate(f"library {name}", candidate, values, dtype, threshold, library.source, reference)


def _alibi_candidates(values, dtype, threshold, notes):
    rows, cols = values.shape
    if rows == 1:  # a vector: ALiBi slopes for that many heads?
        spec = TableSpec(family="alibi", heads=cols, part="slopes", dtype="float64")
        reference = exact_reference(spec)
        if np.allclose(values[0], reference[0], rtol=1e-2):
            yield _candidate("alibi slopes (Press et al.)", spec, values, dtype, threshold, reference=reference)
            yield from _library_candidates(spec, values, dtype, threshold, reference)
        return
    if cols < 2 or rows % cols:
        return
    heads, length = rows // cols, cols
    cube = values.reshape(heads, length, length)
    upper = np.triu(np.ones((length, length), bool), 1)
    if np.all(cube[:, upper] == 0) and np.any(cube):
        part = "causal"
    elif np.array_equal(cube, cube.transpose(0, 2, 1)) and np.all(np.diagonal(cube, axis1=1, axis2=2) == 0):
        part = "symmetric"
    else:
        return
    spec = TableSpec(family="alibi", heads=heads, seq_len=length, part=part, dtype="float64")
    reference = exact_reference(spec)
    yield _candidate(f"alibi {part} (Press et al. slopes)", spec, values, dtype, threshold, reference=reference)
    # a library's float32 slopes times the distances, in float32
    distance = np.arange(length)[:, None] - np.arange(length)[None, :]
    distance = np.abs(distance) if part == "symmetric" else np.maximum(distance, 0)
    for name in ("bloom", "mpt"):
        slopes = build(TableSpec(family="alibi", heads=heads, variant=name)).numpy()
        table = -(slopes[:, None, None] * distance.astype(np.float32)[None]) + np.float32(0)
        if dtype == "float32" and np.array_equal(table.reshape(rows, cols), values):
            result = difference(values, reference, dtype, 0, threshold)
            result.differing = 0
            yield Candidate(f"alibi {part} with {name}'s float32 slopes", spec, result, LIBRARY_VARIANTS[name].source)


def _rope_candidates(values, dtype, threshold, notes):
    rows, cols = values.shape
    if cols % 2 or rows < 3:
        return
    n = cols // 2
    pairings = {"half": (values[:, :n], values[:, n:]), "interleaved": (values[:, 0::2], values[:, 1::2])}
    for convention, (plane, twin) in pairings.items():
        if not np.array_equal(plane, twin):
            continue
        first = plane[0]
        if np.all(first == first[0]) and first[0] > 0:
            part, attention = "cos", float(first[0])
        elif not np.any(first):
            part, attention = "sin", float(np.max(np.abs(plane[:, 0])))
        else:
            continue  # not starting at position 0: the fit below assumes it does
        inverse = np.arccos if part == "cos" else np.arcsin
        rough = inverse(np.clip(plane[1] / attention, -1, 1))
        at = np.clip(np.round(1 / np.maximum(rough, 1e-12)), 1, rows - 1).astype(int)
        w = inverse(np.clip(plane[at, np.arange(n)] / attention, -1, 1)) / at
        if n >= 2 and w[1] > 0 and w[0] > w[1]:
            base = float((w[0] / w[1]) ** n)  # w_1 / w_0 = base**(-2/dim), dim = 2n
        else:
            base = 10000.0
        plain = w[0] * base ** (-2 * np.arange(n) / (2 * n))
        ratio = w / plain
        if not np.allclose(ratio, 1, rtol=1e-3):
            notes.append(
                f"rotary frequencies follow base {base:.6g} at the high end and are divided by up "
                f"to {1 / ratio.min():.4g} at the low end: a frequency-dependent scaling (llama3, "
                "YaRN or LongRoPE); give its --rope parameters to compare exactly"
            )
        if math.isclose(w[0], 1, rel_tol=1e-4):
            scalings = [{}]
        else:  # w_0 = 1/factor: linear scaling, with the roundest factors near the fit
            factor = 1 / float(w[0])
            scalings = [{"rope_type": "linear", "factor": f}
                        for f in sorted({float(f"{factor:.{k}g}") for k in (1, 2, 3, 4, 6)})
                        if math.isclose(f, factor, rel_tol=1e-3)]
        for candidate_base in _plausible_bases(base) or [base]:
            for rope in scalings:
                spec = TableSpec(
                    family="rope", d_model=cols, seq_len=rows, base=candidate_base, rope=rope,
                    convention=convention, part=part, dtype="float64",
                )
                reference = exact_reference(spec)
                yield _candidate(f"rope {part}, {convention} pairing", spec, values, dtype, threshold,
                                 reference=reference)
                yield from _library_candidates(spec, values, dtype, threshold, reference)


def _sincos2d_candidates(values, dtype, threshold, notes):
    rows, cols = values.shape
    if cols % 4 or rows < 2:
        return
    cls = not values[0].any()
    patches = rows - cls
    grids = [(h, patches // h) for h in range(1, patches + 1) if patches % h == 0]
    for grid in sorted(grids, key=lambda g: abs(g[0] - g[1]))[:6]:
        for convention in ("mae", "timm", "timm-interleaved"):
            spec = TableSpec(
                family="sincos2d", grid=grid, d_model=cols, convention=convention,
                cls_token=cls, dtype="float64",
            )
            reference = exact_reference(spec)
            if np.max(np.abs(reference - values)) > 1e-2:
                continue
            yield _candidate(f"sincos2d {convention}, grid {grid[0]}x{grid[1]}", spec, values, dtype,
                             threshold, reference=reference)
            yield from _library_candidates(spec, values, dtype, threshold, reference)
