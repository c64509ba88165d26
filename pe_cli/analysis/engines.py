"""One model, every engine: `compare --rope-config CFG` with no tables. Each engine's table for
the model (those a family lists in `engines`: transformers, MLX, llama.cpp, ...) beside the
exact one and transformers': max |error| by position band, the share of bit-equal elements,
and a verdict of what differs, from the data alone.

The verdict tells the arithmetic from the meaning. An engine that computes the config's table
in float32 is off from exact by the rounding of its angles, which grows with the position: at
most ARITHMETIC_ULPS * (p + 1) float32 epsilons of the values' size at position p (an angle
p * w rounded a few times). A table off by more somewhere means something else: position 0
(cos 1 times the factor every value is multiplied by) shows another scale factor; columns off
by more once that factor is divided out show another frequency table, from the first
position where they are; another column count is another rotary dim. Each is said only where
the data shows it.

In a half dtype (--dtype bfloat16: the dtype the engines serve the model in) each value is also
rounded to it, and the view adds what the dtype does to positions (precision.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.dtypes import DTYPE_ALIASES, FORMATS
from ..core.errors import BadInput
from ..families import FAMILIES
from ..spec import TableSpec
from .metrics import Difference, Tally
from .precision import Precision, precision
from .tables import from_spec

ARITHMETIC_ULPS = 16  # float32 epsilons per position that angle rounding stays within
_EPSILON32 = float(np.finfo(np.float32).eps)
SERVING = ("float32", "bfloat16", "float16")  # the dtypes an engine serves a table in


def serving_dtype(name: str | None) -> str:
    """--dtype's serving dtype by its name or alias (float32 where none is given)."""
    found = DTYPE_ALIASES.get(name, name) if name else "float32"
    if found not in SERVING:
        raise BadInput(
            f"--dtype {name}: engines serve a table in {', '.join(SERVING)} (or fp32, bf16, fp16)"
        )
    return found


def _rounding(dtype: str) -> float:
    """A value's relative rounding in dtype at most (0 in float32, which the angles' bound
    covers)."""
    return 0.0 if dtype == "float32" else FORMATS[dtype].epsilon


@dataclass
class Verdict:
    """What an engine's table differs from the config's exact table by: `kind` "identical"
    (its correctly rounded values), "arithmetic" or "meaning", and plain lines saying how."""

    kind: str
    lines: list[str]


@dataclass
class EngineRow:
    engine: str  # "transformers", "mlx", "llama.cpp"
    spec: TableSpec
    exact: Difference  # against the exact table (float64)
    equal_exact: float  # share of elements bit-equal to the exact table rounded to its dtype
    transformers: Difference | None  # against transformers' table (None: no such table)
    verdict: Verdict

    def to_json(self) -> dict:
        return {
            "engine": self.engine,
            "variant": self.spec.variant,
            "dtype": self.spec.dtype,
            "versus_exact": self.exact.figures(),
            "bit_equal_to_exact": self.equal_exact,
            "versus_transformers": None
            if self.transformers is None
            else self.transformers.figures(),
            "bit_equal_to_transformers": _equal_share(self.transformers),
            "verdict": self.verdict.kind,
            "why": self.verdict.lines,
        }


@dataclass
class EngineView:
    title: str
    dtype: str
    rows: list[EngineRow]
    notes: list[str] = field(default_factory=list)
    precision: Precision | None = None  # what a half dtype does to positions
    who: str = "engine"  # what the rows are: "engine", or "framework or engine" (--frameworks)

    def to_json(self):
        return {
            "title": self.title,
            "dtype": self.dtype,
            "engines": [r.to_json() for r in self.rows],
            "notes": self.notes,
            "positions": None if self.precision is None else self.precision.to_json(),
        }


@dataclass
class ModelEngines:
    """A model whose layers apply several tables: the every-engine view of each treatment
    (named as the model view names it), and what the tables do not show (the layers that
    rotate none, query scales)."""

    views: list[tuple[str, EngineView]]
    notes: list[str]

    def to_json(self):
        return {
            "treatments": {name: view.to_json() for name, view in self.views},
            "notes": self.notes,
        }


def _short(text: str) -> str:
    """Settings for a title: a list of numbers (LongRoPE's factors) as how many there are."""
    import re

    return re.sub(
        r"\(([-+0-9.e]+, ){3,}[-+0-9.e]+\)", lambda m: f"({m.group(0).count(',') + 1} values)", text
    )


def _equal_share(d: Difference | None) -> float | None:
    return None if d is None else 1 - d.differing / max(1, d.size)


class _Evidence:
    """What the verdict needs, gathered block by block: position 0 of both tables, and for
    each column the first position where the engine's table, its scale divided out, is off
    from exact by more than float32 angle rounding makes."""

    def __init__(self, cols: int, offset: int = 0, dtype: str = "float32"):
        self.offset = offset  # the position of row 0
        self.rounding = _rounding(dtype)  # each value's own rounding to the table's dtype
        self.scale = 1.0  # the engine's factor over exact's, read from position 0
        self.first_off = np.full(cols, -1, dtype=np.int64)
        self.row0: tuple | None = None

    def add(self, first: int, engine: np.ndarray, exact: np.ndarray) -> None:
        if first == 0:
            self.row0 = (engine[0].copy(), exact[0].copy())
            self.scale = _scale(*self.row0, self.rounding)
        size = np.abs(exact).max() * abs(self.scale) if exact.size else 0.0
        positions = np.abs(np.arange(first, first + len(engine), dtype=np.float64) + self.offset)
        bound = (ARITHMETIC_ULPS * (positions + 1) * _EPSILON32 + self.rounding) * max(size, 1e-30)
        off = np.abs(engine - self.scale * exact) > bound[:, None]
        hit = off.any(axis=0) & (self.first_off < 0)
        if hit.any():
            self.first_off[hit] = first + np.argmax(off[:, hit], axis=0)


def _scale(engine_row0: np.ndarray, exact_row0: np.ndarray, rounding: float = 0.0) -> float:
    """The engine's common factor over exact's at position 0 (cos 0: the factor itself), 1
    where position 0 has no such common factor (a sin table's zeros) or it is within the
    rounding of the dtype."""
    nonzero = np.abs(exact_row0) > 0
    if not nonzero.any():
        return 1.0
    ratios = engine_row0[nonzero] / exact_row0[nonzero]
    middle = float(np.median(ratios))
    if abs(middle - 1) <= rounding:
        return 1.0
    if np.all(np.abs(ratios - middle) <= (4 * _EPSILON32 + rounding) * abs(middle)):
        return middle
    return 1.0


def verdict(evidence: _Evidence, exact: Difference, equal_exact: float, what: str) -> Verdict:
    """The plain verdict of what an engine's table differs from the exact one by."""
    if equal_exact == 1.0:
        return Verdict("identical", [f"the exact table correctly rounded to {what}"])
    lines = []
    if abs(evidence.scale - 1) > 4 * _EPSILON32:
        engine0, exact0 = evidence.row0
        lines.append(
            f"another scale factor: every value times {evidence.scale:.7g} "
            f"(position 0 holds {float(np.max(np.abs(engine0))):.7g} where the config's "
            f"table holds {float(np.max(np.abs(exact0))):.7g})"
        )
    off = np.flatnonzero(evidence.first_off >= 0)
    if len(off):
        start = int(evidence.first_off[off].min())
        lines.append(
            f"another frequency table: {len(off)} of {len(evidence.first_off)} columns "
            f"(the first {int(off[0])}) are off by more than float32 angle rounding makes, "
            f"from position {start}"
        )
    if lines:
        return Verdict("meaning", lines)
    cast = "" if what == "float32" else f", then the cast to {what}"
    return Verdict(
        "arithmetic",
        [
            f"float32 arithmetic{cast}: within the rounding of its angles"
            f"{'' if not cast else ' and values'} (max |err| {exact.max_abs:.3g}"
            f"{', growing with the position' if not cast else ''})"
        ],
    )


def engine_view(
    defaults: dict,
    engines: list[tuple[str, TableSpec]],
    threshold: float,
    dtype: str = "float32",
    frameworks: bool = False,
) -> EngineView:
    """Each engine's table (with `frameworks`, the training frameworks' too) beside the exact
    table and transformers', streamed in blocks, in the dtype the engines serve it in; in a
    half one, with what it does to positions."""
    exact = TableSpec(**{**defaults, "variant": "exact", "compute_dtype": None, "dtype": "float64"})
    family = FAMILIES[exact.family]
    settings = _short(", ".join(f"{k} {v}" for k, v in family.settings(exact) if k != "family"))
    whose = (
        "from training to serving: each framework's and engine's"
        if frameworks
        else "every engine's"
    )
    title = f"{whose} table vs the exact one (d_model={exact.d_model}, {exact.part}, {settings})"
    view = EngineView(title, dtype, [], who="framework or engine" if frameworks else "engine")
    if dtype != "float32":
        found = family.frequencies(exact)
        if found is not None and exact.ids is None and not exact.axes:
            w = [float(x) for x in found.values]
            view.precision = precision(dtype, exact.last_position + 1, w, float(found.factor))
    built = []
    for engine, spec in engines:
        if isinstance(spec, str):  # the engine cannot build this table, and says why
            view.notes.append(f"{engine}: {spec}")
            continue
        try:
            built.append((engine, spec, from_spec(spec, engine)))
        except BadInput as e:
            view.notes.append(f"{engine}: {e}")
    reference = next((s for e, s, _ in built if e == "transformers"), None)
    for engine, spec, source in built:
        order = FAMILIES[spec.family].columns_as(spec, exact)
        if order is not None:
            kept = (
                f"holds each frequency once ({source.cols} columns)"
                if len(order) > source.cols
                else f"pairs the dims {spec.convention}"
            )
            view.notes.append(
                f"{engine}: {kept}, where the others pair them {exact.convention}: its table is "
                "compared frequency by frequency"
            )
        if (source.cols if order is None else len(order)) != exact.cols:
            view.notes.append(
                f"{engine}: another rotary dim: {source.cols} columns where the config's table "
                f"has {exact.cols}"
            )
            continue
        view.rows.append(_measured(engine, spec, source, exact, reference, threshold))
    return view


def _aligned(spec, exact, blocks):
    """A table's blocks with its columns laid out as the exact table's (an engine that pairs
    the dims otherwise: the same values in other columns)."""
    order = FAMILIES[spec.family].columns_as(spec, exact)
    for first, block in blocks:
        yield first, block if order is None else block[:, order]


class _Rows:
    """A table's blocks read as rows, `take(n)` the next n: the tables set side by side are
    cut into blocks of as many bytes, so one of fewer columns (a column per frequency) has
    longer blocks."""

    def __init__(self, blocks):
        self.blocks, self.held = blocks, []

    def take(self, n: int) -> np.ndarray:
        count = sum(len(b) for b in self.held)
        while count < n:
            block = next(self.blocks)[1]
            self.held.append(block)
            count += len(block)
        rows = np.concatenate(self.held) if len(self.held) > 1 else self.held[0]
        self.held = [rows[n:]] if len(rows) > n else []
        return rows[:n]


def _measured(engine, spec, source, exact, reference, threshold) -> EngineRow:
    exact_rounded = spec.replace(variant="exact", compute_dtype=None, convention=exact.convention)
    streams = [
        _Rows(from_spec(exact, "exact").blocks()),
        _Rows(from_spec(exact_rounded, "rounded").blocks()),
    ]
    if reference is not None:
        streams.append(
            _Rows(_aligned(reference, exact, from_spec(reference, "transformers").blocks()))
        )
    cols = exact.cols  # the engine's columns laid out as the exact table's
    versus_exact = Tally(source.rows, cols, spec.dtype, spec.offset, threshold)
    versus_hf = Tally(source.rows, cols, spec.dtype, spec.offset, threshold)
    evidence, unequal = _Evidence(cols, spec.offset, spec.dtype), 0
    for first, block in _aligned(spec, exact, source.blocks()):
        truth = streams[0].take(len(block))
        unequal += int(np.count_nonzero(block != streams[1].take(len(block))))
        versus_exact.add(first, block, truth)
        evidence.add(first, block, truth)
        if reference is not None:
            versus_hf.add(first, block, streams[2].take(len(block)))
    found = versus_exact.result()
    equal = 1 - unequal / max(1, found.size)
    return EngineRow(
        engine,
        spec,
        found,
        equal,
        versus_hf.result() if reference is not None else None,
        verdict(evidence, found, equal, spec.dtype),
    )
