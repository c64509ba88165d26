"""The interface between a family of tables and the rest of pe-cli.

A family module (sinusoidal.py, rope/, ...) makes one `Family` object: its parameters and
their checks, its conventions (column layouts) and parts, its exact mathematics and whether
the C fast path serves it, its library and precision variants, the facts `show` prints, and
how `compare` audits, explains and identifies its tables. The engine, io, analysis, render and
cli layers call these methods and never name a family.

Family modules import numpy and the numerics inside the methods that need them, so that the
registry (and with it `pe-cli --help`) loads without numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from ..core.errors import BadInput
from ..core.params import Param


class Norm(NamedTuple):
    """The norm every row of a table has: its value, its formula, and what gives it."""

    value: float
    formula: str  # "sqrt(d/2)"
    reason: str  # "d/2 sin/cos pairs"


class Frequencies(NamedTuple):
    """A table's exact angular frequencies (Decimals) and the factor every sin and cos is
    multiplied by (Family.frequencies)."""

    values: list
    factor: object  # a Decimal


class Served(NamedTuple):
    """What `show --precision` reads of a table of sinusoids over one position axis
    (Family.served): its exact angular frequencies (Decimals) and the factor of its sin and cos,
    its positions first .. first + length - 1, and a library's own float32 frequencies with
    that library's name (each angle fl32(fl32(p) * w), as it computes them), or None."""

    frequencies: list
    factor: object  # a Decimal
    first: int
    length: int
    library: str | None = None
    float32: object = None  # numpy float32 array, one per frequency


class Scaling(NamedTuple):
    """A table's frequency scaling, as the wavelengths figure draws it (Family.scaling): the
    same table without it (None where it has none), and the context lengths it is for, as
    (length, what)."""

    plain: object  # a TableSpec, or None
    contexts: list


class Audit(NamedTuple):
    """What `compare` with no tables puts against the exact table (Family.audit): its title,
    the dtype whose ulps it counts, and (label, spec) of each table."""

    title: str
    ulps: str
    recipes: list


class Agreement(NamedTuple):
    """One parameter of two descriptions of a model (a GGUF and its config): each one's value,
    as a person reads it, and whether they agree (Family.compare_files)."""

    parameter: str
    first: str
    second: str
    agree: bool


class Described(NamedTuple):
    """Two descriptions of one model, each (what it is, its path), and their Agreements."""

    first: tuple[str, str]
    second: tuple[str, str]
    rows: list


def _never(spec) -> str | None:
    return None


@dataclass(frozen=True)
class Variant:
    """A table computed another way than exactly: a seed notebook's formula, a library's
    function, or a precision recipe, reproduced in its own arithmetic. `compute(spec, device)`
    returns the (rows, cols) torch tensor in the dtype that arithmetic ends in."""

    name: str
    compute: Callable
    source: str  # the notebook, or the library function and the version matched
    kind: str = "library"  # "seed" (computes in --compute-dtype), "library", or "recipe"
    #                        (a library's arithmetic with one stage in --compute-dtype)
    conventions: tuple[str, ...] = ()  # the layouts it can produce; the first is its default
    shape: str = "2d"  # the shape the library returns
    parameters: frozenset = frozenset()  # the fixed-by-default parameters it takes (base, ...)
    refuse: Callable = _never  # why it cannot build this table (a message), or None
    part: str | None = None  # the part it builds when none is asked for
    ends_float64: Callable = lambda spec: (
        False
    )  # its arithmetic ends in float64 for this spec (complex128)
    engine: str = ""  # the engine whose table it is, for compare's every-engine view
    follows: str = ""  # the library whose arithmetic it copies (named after it where both match)
    framework: str = ""  # the framework whose table it is, for compare's --frameworks view

    def label(self, spec) -> str:
        """The variant as the summary names it."""
        if self.kind == "seed":
            return f"{self.name} (computed in {spec.compute_dtype or 'float32'})"
        return f"{self.name} ({self.source})"

    def check_convention(self, spec) -> None:
        if spec.convention not in self.conventions:
            if self.kind == "seed":
                raise BadInput(
                    f"variant {self.name!r} is a seed notebook's formula and is defined for the "
                    f"{' or '.join(self.conventions)} convention only; use --variant exact with "
                    f"--convention {spec.convention}"
                )
            raise BadInput(
                f"variant {self.name!r} is the {' or '.join(self.conventions)} convention; "
                f"drop --convention {spec.convention}"
            )

    def check(self, spec, fixed: tuple[Param, ...]) -> None:
        """Refuse what this variant cannot do, with its reason: another convention, a compute
        dtype it has no stage for, a parameter the library does not take."""
        self.check_convention(spec)
        if self.kind == "library" and spec.compute_dtype is not None:
            raise BadInput(
                f"variant {self.name!r} computes in the library's own dtypes; drop --compute-dtype"
            )
        for param in fixed:
            if getattr(spec, param.name) != param.default and param.name not in self.parameters:
                raise BadInput(f"variant {self.name!r} {param.fixed} ({self.source})")
        refusal = self.refuse(spec)
        if refusal:
            raise BadInput(refusal)


# A parameter three families share (rope's split layouts, sincos2d, sincos3d), declared once.
TEXT_TOKENS = Param(
    "text_tokens",
    0,
    "Text tokens before the grid (FLUX's 512, CogView3's 224, CogVideoX's 226): rows of "
    "zeros in sincos2d and sincos3d tables; positions in rope's split layouts (FLUX's at 0, "
    "FLUX.2's along its last axis, HiDream's after the image).",
    int,
    minimum=0,
    fixed="has no text rows",
)


@dataclass(frozen=True)
class Library:
    """A library whose table an input names: who it is, for a person ("transformers"), and
    the variant that builds its table."""

    name: str
    variant: str


def variant(registry: dict, name: str, **fields):
    """Register the decorated compute function as variant `name` in a family's registry."""

    def register(compute: Callable) -> Callable:
        registry[name] = Variant(name, compute, **fields)
        return compute

    return register


def even_width(what: str) -> Callable:
    """A refusal for libraries whose `pe[:, 1::2] = cos(...)` fails for odd d_model."""
    return lambda spec: (
        f"{what} needs an even d_model (odd d fails its pe[:, 1::2] assignment) "
        f"(got --d-model {spec.d_model})"
        if spec.d_model % 2
        else None
    )


class Family:
    """Defaults for every method; a family overrides what it has."""

    name = ""
    summary = ""
    conventions: dict[str, str] = {}  # layout name -> what it is; the first is the default
    parts: dict[str, str] = {"table": "the table"}  # which table; the first is the default
    params: tuple[Param, ...] = ()
    variants: dict[str, Variant] = {}
    shapes = ("2d", "batch-first")  # the --shape values its tables take
    paired_columns = False  # columns are sin/cos pairs of one angle (see row_norm)
    default_base = 10000.0  # --base where it is not given
    export_parts: tuple = (
        None,
    )  # the parts `export` writes when none is asked for (None: the first)

    # ------------------------------------------------------------------- parameters and checks

    def from_options(self, options: dict) -> dict:
        """TableSpec fields from the command line's values of this family's parameters (None
        where not given)."""
        return {
            p.name: options[p.name]
            for p in self.params
            if p.field and options.get(p.name) is not None
        }

    def default_convention(self, spec) -> str:
        """The convention when none is given: the first."""
        return next(iter(self.conventions))

    def unused(self, spec, options: dict) -> dict[str, str]:
        """{option: the line refusing it} for each of this family's options the command line
        gave that changes nothing in this table (spec.check_used refuses one that changes none
        of the tables asked for)."""
        return {}

    def notes(self, options: dict) -> list[str]:
        """One line each for what the command line took from this family's inputs on the
        user's behalf (a length from a config) or where an option goes over an input's value
        (--rope factor=4 over a config's factor 8): stderr's notes."""
        return []

    def library(self, options: dict) -> Library | None:
        """The library whose table an input names (a transformers config.json: the model's
        rotary module), and the variant that builds it, or None."""
        return None

    def selections(self, options: dict) -> dict[str, dict]:
        """Tables an input describes several of (a config's layer types): their names and the
        options that pick each, for `export` to write all; empty when the input names one."""
        return {}

    def columns_as(self, spec, other):
        """The columns of spec's table that lay it out as other's (the same values in another
        pairing of its columns), or None where it is laid out so already."""
        return None

    def model(self, options: dict) -> dict | None:
        """The model an input describes, layer by layer (a config.json's decoder layers: the
        treatment each applies), for show; None where the input is one table."""
        return None

    def normalize(self, spec) -> dict:
        """This family's parameters in their one canonical form (parsed, typed, sorted)."""
        return {}

    def check(self, spec) -> None:
        """Refuse what this family cannot build (raise BadInput with the reason)."""

    # ------------------------------------------------------------------------------ geometry

    def rows(self, spec) -> int:
        """Rows of the table seen as 2-D, the way the engine builds it in row blocks."""
        return spec.seq_len

    def cols(self, spec) -> int:
        return spec.d_model

    def dims(self, spec) -> tuple[int, ...]:
        """The table's shape as written and returned."""
        rows, cols = self.rows(spec), self.cols(spec)
        return {"2d": (rows, cols), "batch-first": (1, rows, cols), "seq-first": (rows, 1, cols)}[
            spec.shape
        ]

    # ------------------------------------------------------------------------------- numbers

    def frequencies(self, spec) -> Frequencies | None:
        """The exact angular frequencies as Decimals and the factor every sin and cos is
        multiplied by, or None for a family that is not made of sinusoids."""
        return None

    def served(self, spec) -> Served:
        """What `show --precision` reads of the table (Served), or BadInput saying why it
        cannot be read so."""
        raise BadInput(
            f"--precision reads a table of sinusoids over one position axis; this is a "
            f"{self.name} table"
        )

    def exact_rows(self, spec, start: int, stop: int, work):
        """Rows start..stop of the exact table: float64 on the output dtype's grid, computed
        with `work` (a numerics.sinusoids.Workspace)."""
        raise NotImplementedError

    def fast_columns(self, spec):
        """Where the C kernel puts each frequency (numerics.fast.Columns), when the table's rows
        are the consecutive positions offset, offset + 1, ...; None where the kernel does not
        serve this table. (The engine also leaves to the exact kernel the tables whose sines
        and cosines carry a factor.)"""
        return None

    def fast_finish(self, spec, block, start: int, stop: int):
        """The rows start..stop as the table has them, from the kernel's block."""
        return block

    # ---------------------------------------------------------------------------------- show

    def settings(self, spec) -> list[tuple[str, str]]:
        """The parameters that define a table of this family, as (label, value) lines."""
        return [("family", f"{self.name}, {spec.part}"), ("convention", spec.convention)]

    def identity(self, spec) -> str:
        """The parameters that identify a table, in one line (`compare FILE`'s match)."""
        return ", ".join(
            f"{k} {v}" for k, v in self.settings(spec) if k not in ("family", "convention")
        )

    def row_label(self, spec) -> Callable[[int], str]:
        """Row index -> its label in windows and corners."""
        return lambda i: str(spec.offset + i)

    def facts(self, spec) -> dict:
        """Facts `show` adds for a built table: frequencies with their columns, positions."""
        return {}

    def fact_lines(self, facts: dict) -> list[tuple[str, str]]:
        """Facts of its own (from `facts`) show prints as (label, text), after the common ones."""
        return []

    def row_norm(self, spec) -> Norm | None:
        """The norm every row of the exact table has (all-zero rows aside), where its columns
        give one: d/2 pairs of sin and cos of one angle make sqrt(d/2). None where the norm
        changes from row to row (a cos or sin part alone, angles, biases, frequencies)."""
        if self.paired_columns and self.cols(spec) % 2 == 0:
            return Norm(math.sqrt(self.cols(spec) / 2), "sqrt(d/2)", "d/2 sin/cos pairs")
        return None

    def scaling(self, spec) -> Scaling:
        """The same table without its frequency scaling, and the context lengths the scaling
        is for: the wavelengths figure's."""
        return Scaling(None, [])

    # ------------------------------------------------------------------------------- compare

    def audit(self, spec, compute: str | None) -> Audit:
        """What `compare` with no tables puts against the exact table. By default every variant of the family that can build this table,
        precision recipes with one stage in `compute` (bfloat16 unless given)."""
        recipes = []
        for name, found in self.variants.items():
            try:
                recipe = spec.replace(
                    variant=name,
                    dtype="float32",
                    shape="2d",
                    convention=spec.convention if spec.convention in found.conventions else None,
                    compute_dtype=compute if found.kind == "recipe" else None,
                    part=spec.part if found.part is None else found.part,
                )
            except BadInput:  # the library cannot make this table
                continue
            label = f"{name} ({compute or 'bfloat16'})" if found.kind == "recipe" else name
            recipes.append((label, recipe))
        settings = ", ".join(f"{k} {v}" for k, v in self.settings(spec) if k != "family")
        title = (
            f"{self.name} libraries and precision recipes vs the exact table "
            f"(d_model={spec.d_model}, {spec.part}, {settings})"
        )
        return Audit(title, "float32", recipes)

    def compare_files(self, a: str, b: str):
        """`compare A B` where A and B are two descriptions of one model that this family reads
        (a GGUF and its config): a Described, else None."""
        return None

    def engines(
        self, spec, options: dict, dtype: str = "float32", frameworks: bool = False
    ) -> list:
        """`compare` with no tables, for one model: (engine, spec, or why it cannot build the
        table) of each engine's table for it, in `dtype`, the training frameworks' before them
        with `frameworks`; empty for the audit instead."""
        return []

    def rotation_planes(self, spec, rows: int, variant: str | None = None):
        """The cos and sin planes a rotary op applies from this table, built by `variant` (the
        spec's own where None), for reading a rotation back: (cos spec, sin spec, columns),
        `rows` positions from 0 in float32, whose `columns` hold one column a pair; None where
        the family's tables are no rotation."""
        return None

    def axes_layouts(self, spec, follows: list[set[int]], pairing: str, ids: str, tokens: int):
        """Tables of several position axes a rotation read back may be: each (spec, summary)
        of spec's 1-D table laid out so that pair k takes an axis in follows[k] (any where it
        is empty), in `pairing`, at the `tokens` positions of inline --ids `ids`; [] where the
        family has no such layouts."""
        return []

    def reading(self, shape: tuple[int, ...], label: str):
        """A 2-D reading of an array of this shape, of another rank, that only this family
        writes: (rows, columns, notes) with each row's elements together in C order, or None."""
        return None

    def explain(self, va, vb, la: str, lb: str) -> list[str]:
        """What this family sees in two same-shape 2-D tables (their first rows) that differ
        by more than rounding and that no rearrangement of rows or columns explains: findings
        its own fit shows (another base), each a sentence; none where it sees nothing."""
        return []

    def prefix(self, spec, rows: int):
        """The spec of the first `rows` rows of spec's table as a table of their own, where
        they are the same numbers (a library's table then need not be built whole to check
        its first rows); None where a table's rows depend on its length."""
        return None

    def window(self, spec, start: int, stop: int):
        """The spec of rows start..stop of spec's table as a table of their own, where they
        are the same numbers (a library's last rows are then measured without building its
        whole table); None where they are not."""
        return None


def axes_facts(frequencies, columns: dict) -> list[dict]:
    """show's frequency facts for a table of several coordinates: each frequency, its
    wavelength and its columns {"sin x": ..., "cos x": ...}, from {(axis, "sin" or "cos"):
    [column of each frequency]} (a list may stop short where d_model cuts it, and hold None
    where the axis does not have that frequency)."""
    return [
        {
            "index": i,
            "columns": {
                f"{fn} {axis}": found[i]
                for (axis, fn), found in columns.items()
                if i < len(found) and found[i] is not None
            },
            "frequency": float(w),
            "wavelength": 2 * math.pi / float(w),
        }
        for i, w in enumerate(frequencies)
    ]
