"""`compare` as a library: a family's formulas against the exact table (an audit), any two
tables against each other with a diagnosis of how they differ, and identification of an
unknown table; `run` picks the mode from what it is given and applies the tolerance policy.

Nothing here prints; render.py shows the results, and each result's `to_json` is what
`--json` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..core.dtypes import DTYPE_ALIASES, DTYPE_NAMES, FORMATS, match_margin
from ..core.errors import BadInput
from ..core.names import did_you_mean
from ..engine import build
from ..families import (
    CONVENTION_NAMES,
    DEFAULT_FAMILY,
    FAMILIES,
    PART_NAMES,
    VARIANT_NAMES,
    families_of_variant,
    find_variant,
    own_names,
)
from ..io.read import looks_like_file
from ..options import Options
from ..spec import TableSpec
from . import diagnose
from .engines import EngineView, ModelEngines, engine_view, serving_dtype
from .identify import Candidate, exact_reference, exceptions, identify
from .metrics import Difference, Tally, difference, gather
from .tables import Source, from_file, from_spec

DEFAULT_THRESHOLD = 1e-4  # "first position with |err| above" when no --atol is given


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
        elif token in DTYPE_NAMES or token in DTYPE_ALIASES:
            params["dtype"] = DTYPE_ALIASES.get(token, token)
        elif token in PART_NAMES:
            params["part"] = token
        else:
            family = FAMILIES.get(params.get("family") or DEFAULT_FAMILY)
            first = [n for names in own_names(family).values() for n in names] if family else ()
            every = (*VARIANT_NAMES, *CONVENTION_NAMES, *DTYPE_NAMES, *PART_NAMES)
            which = (
                f": {token!r} is not a variant, convention, dtype or part" if token != text else ""
            )
            raise BadInput(
                f"{text!r} is neither a file nor a table spec VARIANT[:CONVENTION][:DTYPE][:PART]"
                f"{which}{did_you_mean(token, every, first)}"
            )
    variant = FAMILIES[params.get("family", DEFAULT_FAMILY)].variants.get(params.get("variant"))
    if (
        variant is not None and variant.kind == "seed"
    ):  # a seed computes in the dtype it is shown in
        params["compute_dtype"] = params.get("compute_dtype") or params.get("dtype", "float32")
        params["dtype"] = params["compute_dtype"]
    return TableSpec(**params)


def side(text: str, defaults: dict) -> Source:
    """A file ('x.npy', 'x.safetensors:NAME', '-') or a built table ('exp-log:float16')."""
    if looks_like_file(text):
        return from_file(text)
    return from_spec(parse_spec(text, defaults), text)


def _built_beside(text: str, defaults: dict, file: str | None, threshold: float) -> Source:
    """A built table (a spec string) to compare with a file. Where no option chose its kind
    and it is the exact table, it is the exact table of what compare FILE names the file (its
    family, convention, base and parameters), so that `compare rope.npy exact` is not set
    against the sinusoidal table. Where nothing names the file, exact is no one table: one
    written with its convention (exact:vaswani) is taken, else refused, never guessed."""
    spec = parse_spec(text, defaults)
    if file is None or spec.variant != "exact":
        return from_spec(spec, text)
    target = side(file, {})
    found = identify(target, threshold)
    if not found or not Identification(target, found).explained:
        if len(text.split(":")) > 1 and text.split(":")[1]:
            return from_spec(spec, text)
        raise BadInput(
            f"nothing names {file}, so pe-cli will not guess which exact table to set it "
            "against: give its convention (exact:vaswani) or its kind (--family rope, ...)"
        )
    named = found[0].spec.replace(
        variant="exact", compute_dtype=None, dtype=spec.dtype, shape=spec.shape
    )
    if named == spec:
        return from_spec(spec, text)
    said = f"{named.family} {named.convention}, {FAMILIES[named.family].identity(named)}"
    return from_spec(named, f"{text} ({said})")


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
        return [{"variant": name, **d.figures()} for name, d in self.rows]


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
        rows.append(
            (name, difference(values, references[key], ulps, spec.offset, threshold, atol, rtol))
        )
    return Audit(title, ulps, sorted(rows, key=lambda row: (-row[1].max_abs, row[0])))


# ---------------------------------------------------------------------------------------------
# Two tables


@dataclass
class Comparison:
    a: Source
    b: Source
    difference: Difference
    notes: list[str]  # how the tables were read and what they are (transposed, lengths, layouts)
    verdict: str  # one line: identical, equal within rounding, or how far apart
    where: list[str]  # where they are bit for bit equal, and within the threshold
    growth: str | None  # how the difference grows with position, where the bands say
    findings: list[str]  # what explains the difference: a rearrangement, another base

    def to_json(self):
        return {
            "a": self.a.label,
            "b": self.b.label,
            "verdict": self.verdict,
            "where": self.where,
            "growth": self.growth,
            "findings": self.findings,
            "notes": self.notes,
            **self.difference.figures(),
        }


DIAGNOSIS_ELEMENTS = 1 << 19  # the rows of each table a diagnosis looks for a finding in


def compare(a: Source, b: Source, threshold: float, atol=None, rtol=None) -> Comparison:
    """A against B in one streamed pass over both (B is the reference), then what explains
    the difference, confirmed over every row."""
    notes = a.notes + b.notes
    if a.shape != b.shape and a.shape == b.shape[::-1]:  # the wide one is read as the other's rows
        wide, tall = (a, b) if a.rows < a.cols else (b, a)
        notes.append(
            f"{wide.label} is {tall.label} transposed ({wide.shape} vs {tall.shape}); "
            f"compared as {tall.shape}"
        )
        a, b = (wide.transposed(), b) if wide is a else (a, wide.transposed())
    if a.cols != b.cols:
        raise BadInput(
            f"cannot compare {a.label} {a.shape} with {b.label} {b.shape}: widths differ"
        )
    if abs(a.rows - b.rows) == 1:  # a class-token row (MAE) on one side only?
        longer = a if a.rows > b.rows else b
        if not longer.block(0, 1).any():
            notes.append(
                f"{longer.label} has an all-zero first row (a class token); compared without it"
            )
            a, b = (a.shifted(1, a.rows - 1), b) if longer is a else (a, b.shifted(1, b.rows - 1))
    rows = min(a.rows, b.rows)
    if a.rows != b.rows:
        notes.append(
            f"{a.label} has {a.rows} positions and {b.label} {b.rows}; compared the first {rows}"
        )
    dtype = _narrower(a.dtype, b.dtype)
    tally = Tally(rows, a.cols, dtype, b.first_position, threshold, atol, rtol)
    result = gather(
        tally,
        ((first, va, vb) for (first, va), (_, vb) in zip(a.blocks(0, rows), b.blocks(0, rows))),
    )
    specs = [side.spec for side in (a, b) if side.spec is not None]
    if (
        len(specs) == 2
        and specs[0].family == specs[1].family
        and specs[0].convention != specs[1].convention
    ):
        described = FAMILIES[specs[0].family].conventions
        notes += [
            f"{side.label} is {side.spec.convention}: {described[side.spec.convention]}"
            for side in (a, b)
        ]
    findings = []
    if result.max_ulps > 1:  # more than rounding apart: what explains it?
        findings = _findings(a, b, rows, dtype, result.max_abs)
    arithmetic, computed_by = _arithmetic(a, b, dtype)
    return Comparison(
        a,
        b,
        result,
        notes,
        diagnose.verdict(result),
        diagnose.where(result, rows, a.cols),
        None if findings else diagnose.growth(result, arithmetic, computed_by),
        findings,
    )


def _findings(a: Source, b: Source, rows: int, dtype: str, before: float) -> list[str]:
    """A rearrangement found in the tables' first rows and confirmed over every row; else
    what a family sees in the first rows (another base)."""
    head = min(rows, max(64, DIAGNOSIS_ELEMENTS // a.cols))
    va, vb = a.block(0, head), b.block(0, head)
    size = max(float(np.max(np.abs(va))), float(np.max(np.abs(vb))))
    for rearrangement in diagnose.search(va, vb):
        after = _confirm(rearrangement, a, b)
        if diagnose.explains(after, before, size):
            said = f"{rearrangement.what.format(a=a.label, b=b.label)}; {rearrangement.done}, they"
            if after == 0:
                return [f"{said} are bit for bit equal"]
            return [f"{said} differ by at most {after:.3g}"]
    return [
        line for family in FAMILIES.values() for line in family.explain(va, vb, a.label, b.label)
    ]


def _confirm(rearrangement: diagnose.Rearrangement, a: Source, b: Source) -> float:
    """The largest |A - B| over every pair of rows a rearrangement sets side by side, read in
    blocks (inf where it sets fewer than two side by side)."""
    start, stop = rearrangement.rows(a.rows, b.rows)
    worst, paired = 0.0, 0
    for first, vb in b.blocks(start, stop):
        shifted = first + rearrangement.shift
        x, y = rearrangement.pair(a.block(shifted, shifted + len(vb)), vb)
        if len(x):
            worst = max(worst, float(np.max(np.abs(x - y))))
            paired += len(x)
    return worst if paired >= 2 else np.inf


def _arithmetic(a: Source, b: Source, dtype: str) -> tuple[str, str | None]:
    """The narrowest dtype either table is computed in, and the table that computes in it
    where only one of the two is not the exact table."""
    computed = [
        side for side in (a, b) if side.spec is not None and find_variant(side.spec) is not None
    ]
    narrowest = dtype
    for side in computed:
        narrowest = _narrower(narrowest, side.spec.compute_dtype or side.spec.dtype)
    exact = [side for side in (a, b) if side.spec is not None and side not in computed]
    return narrowest, computed[0].label if len(computed) == 1 and exact else None


# ---------------------------------------------------------------------------------------------
# Identification


@dataclass
class Identification:
    target: Source
    candidates: list[Candidate]

    @property
    def explained(self) -> bool:
        """Whether the best candidate explains the table: bit for bit, or within the error
        arithmetic in the table's dtype makes at its positions (core.dtypes.match_margin).
        Beyond that the best is only the nearest."""
        if not self.candidates:
            return False
        best = self.candidates[0]
        if best.identical:
            return True
        margin = match_margin(best.spec.reach, self.target.dtype)
        return bool(best.difference.max_abs <= margin)

    @property
    def best(self) -> Candidate | None:
        """The candidate the claim is made of: the table is it bit for bit, or nearest to it."""
        return self.candidates[0] if self.candidates else None

    @property
    def exceptions(self) -> dict | None:
        """Where the table is its best candidate but for a few columns or rows
        (identify.exceptions); None where it is explained or is not."""
        best = self.best
        if best is None or self.explained:
            return None
        return exceptions(best, self.target)

    @property
    def command(self) -> str | None:
        """The generate command that rebuilds the table byte for byte, where the best candidate
        is it bit for bit and one command builds it (not where it is composed)."""
        best = self.best
        return best.command if best is not None and best.identical else None

    def to_json(self):
        best = self.best
        return {
            "source": self.target.label,
            "notes": self.target.notes,
            "explained": self.explained,
            "command": self.command,
            "composed": best.composed or None if best is not None and best.identical else None,
            "exceptions": self.exceptions,
            "candidates": [c.to_json() for c in self.candidates],
        }


@dataclass
class Agreements:
    """Two descriptions of one model (a GGUF and its config), parameter by parameter."""

    first: tuple[str, str]  # (what it is, its path): ("GGUF", "model.gguf")
    second: tuple[str, str]
    rows: list  # of families.base.Agreement

    def to_json(self):
        return {
            self.first[0]: self.first[1],
            self.second[0]: self.second[1],
            "parameters": [row._asdict() for row in self.rows],
        }


# ---------------------------------------------------------------------------------------------
# The command: which mode, and whether it failed


@dataclass
class Report:
    result: Audit | Identification | Comparison | EngineView | Agreements
    failed: bool  # outside --atol/--rtol (the command exits 1)


def treatments(options: Options) -> list[tuple[str, Options]]:
    """A model whose layers apply several tables, with neither --layer nor --layer-type: each
    treatment's name and the options that choose its first layer; [] otherwise."""
    if options.get("layer") is not None or options.get("layer_type"):
        return []
    try:
        model = options.model
    except BadInput:
        return []
    if not model or len(model["treatments"]) < 2:
        return []
    return [(name, options.but(layer=t["layers"][0])) for name, t in model["treatments"].items()]


def _model_notes(options: Options) -> list[str]:
    """What a model's tables do not show: the layers that rotate none, and query scales."""
    try:
        model = options.model
    except BadInput:  # its layers cannot be listed: nothing said of them
        return []
    if not model:
        return []
    count = len(model["layers"])

    def which(found):
        n = len(found["layers"])
        return "every layer" if n == count else f"layers {found['layers_said']} ({n} of {count})"

    notes = [f"{which(g)}: no rotation ({g['why']})" for g in model["unrotated"]]
    notes += [
        f"{which(s)}: queries multiplied by a {s['kind']} scale of the position "
        f"({s['keys']}; --part query-scale gives it)"
        for s in model["scales"].values()
    ]
    return notes + model["engines"]


def run(
    a: str | None,
    b: str | None,
    options: Mapping,
    atol: float | None = None,
    rtol: float | None = None,
    dtype: str | None = None,
    frameworks: bool = False,
) -> Report:
    """`pe-cli compare [A [B]]`: with no tables the family's audit (a model's every-engine
    view, with `frameworks` the training frameworks' tables too); with one file, its
    identification; else A against B (B by default the exact table of A's convention and
    part). Built tables take their sizes from `options`, or from a file on the other side
    (the first file's shape, else 1024 x 512)."""
    options = options if isinstance(options, Options) else Options(options)
    if a is not None and b is not None:
        for family in FAMILIES.values():
            found = family.compare_files(a, b)
            if found is not None:  # two descriptions of one model, parameter by parameter
                result = Agreements(*found)
                return Report(result, not all(row.agree for row in found.rows))
    if a is None and b is None and (several := treatments(options)):
        views = [
            (name, run(None, None, chosen, atol, rtol, dtype, frameworks).result)
            for name, chosen in several
        ]
        return Report(ModelEngines(views, _model_notes(options)), False)
    files = {s: side(s, {}) for s in (a, b) if s is not None and looks_like_file(s)}
    # no option chose the kind of table a built side is: compare FILE exact reads FILE's
    kind_given = bool(set(options.given) - {"--d-model", "--seq-len"})
    rows, cols = next(iter(files.values())).shape if files else (1024, 512)
    if files and options.get("seq_len") is None:  # the file's length, not a config's
        options = options.but(seq_len=rows)
    defaults = {"d_model": cols, "seq_len": rows, **options.params}
    threshold = atol if atol is not None else DEFAULT_THRESHOLD
    tolerance = atol is not None or rtol is not None
    if a is None:
        exact = TableSpec(**{**defaults, "variant": "exact", "compute_dtype": None})
        served = serving_dtype(dtype)
        engines = FAMILIES[exact.family].engines(exact, options, served, frameworks)
        if engines:  # one model's table in every engine
            view = engine_view(defaults, engines, threshold, served, frameworks)
            view.notes += _model_notes(options) if options.get("layer") is None else []
            return Report(view, False)
    if frameworks:
        raise BadInput(
            "--frameworks adds the training frameworks to compare --rope-config MODEL's "
            "every-engine view (no tables): give --rope-config and no table"
        )
    if dtype is not None:
        raise BadInput(
            "--dtype is the dtype of compare --rope-config CFG's every-engine view (no tables); "
            "a table spec names its own (VARIANT:CONVENTION:DTYPE:PART), a file is read as it is"
        )
    if a is None:
        result = audit(defaults, threshold, atol, rtol)
        return Report(result, any(d.within is False for _, d in result.rows))
    if b is None and a in files:
        target = files[a]
        candidates = identify(target, threshold)
        best = candidates[0].difference if candidates else None
        failed = tolerance and (best is None or not (best.max_abs <= (atol or 0) + (rtol or 0)))
        return Report(Identification(target, candidates), failed)
    first = files.get(a) or side(a, defaults)
    if b is None:  # a built table against the exact table of its convention and part
        b = f"exact:{first.spec.convention}:float64:{first.spec.part}"
    second = files.get(b)
    if second is None:
        beside = None if kind_given or a not in files else a
        second = _built_beside(b, defaults, beside, threshold)
    result = compare(first, second, threshold, atol, rtol)
    return Report(result, result.difference.within is False)
