"""One validated description of a table: everything the engine, writers and renderers need.

`TableSpec` is a frozen dataclass whose fields are the common parameters declared here and the
parameters each family declares in its module (padding_idx, rope, heads, grid, ...), so that a
family's parameters live beside the code that uses them. Constructing one checks everything:
what the common checks refuse, then what the family and the variant refuse, each with one line
saying why.
"""

from __future__ import annotations

import dataclasses
import inspect
import math

from .core.dtypes import DTYPE_ALIASES, DTYPE_NAMES, FORMATS
from .core.errors import BadInput
from .core.limits import MAX_POSITION
from .core.names import choice, did_you_mean, number, shown, whole
from .core.params import Param
from .families import (
    CONVENTION_NAMES,
    DEFAULT_FAMILY,
    FAMILIES,
    PART_NAMES,
    VARIANT_NAMES,
    families_of_variant,
    family_params,
    own_names,
)

SHAPES = {
    "2d": "(seq_len, d_model)",
    "batch-first": "(1, seq_len, d_model), as the Annotated Transformer's buffer",
    "seq-first": "(seq_len, 1, d_model), as the PyTorch tutorial's buffer",
}
DEVICES = ("cpu", "cuda", "mps", "auto")
DEVICE_SYNONYMS = {"gpu": "cuda", "metal": "mps"}  # what --device gpu suggests

COMMON = (
    Param(
        "d_model",
        512,
        "Model width: columns of the table.",
        int,
        ("--d-model", "-d"),
        minimum=1,
        given_only=True,
    ),
    Param(
        "seq_len",
        1024,
        "Number of positions: rows of the table.",
        int,
        ("--seq-len", "-l"),
        minimum=1,
        given_only=True,
    ),
    Param(
        "convention",
        None,
        "Frequencies and column layout; each family's are in --family F --help [default: the "
        "family's first, or the library variant's].",
        choices=CONVENTION_NAMES,
    ),
    Param(
        "variant",
        "exact",
        "exact, a seed notebook's formula, or a library's table; each family's are in "
        "--family F --help.",
        choices=VARIANT_NAMES,
    ),
    Param(
        "dtype",
        "float32",
        f"Output dtype: {', '.join(DTYPE_NAMES)} (or {', '.join(DTYPE_ALIASES)}).",
        choices=DTYPE_NAMES,
        aliases=DTYPE_ALIASES,
    ),
    Param(
        "compute_dtype",
        None,
        "Dtype a seed variant computes in, or a precision recipe's stage "
        "[default: float32; bfloat16 for a recipe].",
        choices=DTYPE_NAMES,
        aliases=DTYPE_ALIASES,
    ),
    Param(
        "base",
        None,
        "Frequency base [default: the family's: 10000, as in the paper; boxes: 100 (GLIGEN)].",
        float,
        fixed="hardcodes base 10000",
    ),
    Param("offset", 0, "First position.", int, minimum=0, fixed="always starts at position 0"),
    Param(
        "shape",
        None,
        "2d (L, D), batch-first (1, L, D) or seq-first (L, 1, D) [default: 2d, or the "
        "library variant's].",
        choices=tuple(SHAPES),
    ),
    Param(
        "device",
        "cpu",
        "Where the table is built: cpu, cuda, mps, or auto (cuda, then mps, then cpu).",
        choices=DEVICES,
    ),
    Param(
        "family",
        DEFAULT_FAMILY,
        f"The kind of table: {', '.join(FAMILIES)}.",
        choices=tuple(FAMILIES),
        given_only=True,
    ),
    Param(
        "part",
        None,
        "Which of the family's tables, where it has several: "
        + "; ".join(
            f"{f.name}: {', '.join(f.parts)}" for f in FAMILIES.values() if len(f.parts) > 1
        )
        + " [default: the family's first; export writes "
        + ", ".join(
            f"{f.name}'s {' and '.join(f.export_parts)}"
            for f in FAMILIES.values()
            if f.export_parts != (None,)
        )
        + "].",
        choices=PART_NAMES,
    ),
)


def _fields() -> list[Param]:
    """Every TableSpec field's parameter: the common ones, then each family's (a parameter two
    families share, such as --grid, once)."""
    seen = {p.name: p for p in COMMON}
    for _, param in family_params():
        if param.field:
            if param.name in seen:
                assert seen[param.name].default == param.default, f"{param.name}: two defaults"
            seen.setdefault(param.name, param)
    return list(seen.values())


PARAMS = _fields()


def _given(param: Param, value) -> bool:
    """Whether a parameter was set to something other than its default."""
    empty = isinstance(value, (tuple, list, dict)) and not value
    return value is not None and not empty and value != param.default


class _Spec:
    """The methods of TableSpec (its fields are made from PARAMS below)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # a --json spec's arrays are this spec's tuples
            if isinstance(value := getattr(self, field.name), list):
                self._set(field.name, _frozen(value))
        family = FAMILIES[choice("--family", self.family, FAMILIES)]
        if self.base is None:
            self._set("base", family.default_base)
        own = own_names(family)
        for param in PARAMS:
            value = getattr(self, param.name)
            if value is None:
                continue
            if param.kind is int:
                whole(param.flag, value, param.minimum)
            elif param.kind is float:
                self._set(param.name, number(param.flag, value))
            elif param.choices and param.name != "device":  # a device's index is checked below
                name = choice(
                    param.flag,
                    value,
                    param.choices,
                    first=own.get(param.name, ()),
                    aliases=param.aliases,
                    more=f"--family {family.name} --help lists them",
                )
                self._set(param.name, name)
        variant = family.variants.get(self.variant)
        if self.variant != "exact" and variant is None:
            owners = families_of_variant(self.variant)
            raise BadInput(
                f"variant {self.variant!r} builds {' or '.join(owners)} tables; "
                f"use --family {owners[0]}, or another variant"
            )
        if variant is not None:
            if self.convention is not None:
                variant.check_convention(self)
            self._set("convention", self.convention or variant.conventions[0])
            self._set("shape", self.shape or variant.shape)
            self._set("part", self.part or variant.part)
        self._set("convention", self.convention or family.default_convention(self))
        self._set("shape", self.shape or "2d")
        self._set("part", self.part or next(iter(family.parts)))
        choice(f"{family.name} convention", self.convention, family.conventions)
        choice(f"{family.name} part", self.part, family.parts)
        self._check_owners(family)
        for name, value in family.normalize(self).items():
            self._set(name, value)
        choice("shape", self.shape, SHAPES)
        if self.shape not in family.shapes:
            raise BadInput(
                f"--shape {self.shape} is not for {family.name} tables "
                f"(they take {', '.join(family.shapes)})"
            )
        family.check(self)
        device = self.device.split(":")[0] if isinstance(self.device, str) else self.device
        choice("--device", device, DEVICES, synonyms=DEVICE_SYNONYMS)
        if not (math.isfinite(self.base) and self.base > 1):
            raise BadInput(f"--base must be a finite number > 1, got {self.base}")
        if self.last_position > MAX_POSITION:
            raise BadInput(
                f"positions up to {self.last_position} requested; pe-cli computes positions "
                f"below 2**32 (offset + seq_len <= {MAX_POSITION + 1})"
            )
        if variant is None:
            if self.compute_dtype is not None:
                raise BadInput(
                    "--compute-dtype applies to the seed variants; "
                    "the exact variant always computes in extended precision"
                )
            return
        # base is checked against the family's default
        variant.check(
            self,
            tuple(
                dataclasses.replace(p, default=family.default_base) if p.name == "base" else p
                for p in PARAMS
                if p.fixed
            ),
        )

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    def _check_owners(self, family) -> None:
        """Each family's parameters are given only with that family."""
        owners: dict[str, list[str]] = {}
        for name, param in family_params():
            owners.setdefault(param.name, []).append(name)
        mine = {param.name for param in family.params}
        for param in PARAMS:
            if (
                param.name in owners
                and param.name not in mine
                and _given(param, getattr(self, param.name))
            ):
                raise BadInput(
                    f"{param.flag} belongs to --family {' or '.join(owners[param.name])}, not {family.name}"
                )

    def replace(self, **changes):
        """A copy with some parameters changed, checked again."""
        return dataclasses.replace(self, **changes)

    @property
    def last_position(self) -> int:
        return self.offset + self.seq_len - 1

    @property
    def reach(self) -> int:
        """The positions the table's angles come from are below this (core.dtypes.match_margin's
        reach): its rows, or its last position + 1."""
        return max(self.rows, self.last_position + 1)

    @property
    def format(self):
        return FORMATS[self.dtype]

    @property
    def rows(self) -> int:
        """Rows of the table seen as 2-D, the way the engine builds it in row blocks."""
        return FAMILIES[self.family].rows(self)

    @property
    def cols(self) -> int:
        return FAMILIES[self.family].cols(self)

    @property
    def dims(self) -> tuple[int, ...]:
        """The table's shape as written and returned."""
        return FAMILIES[self.family].dims(self)

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.format.itemsize

    def describe(self) -> dict[str, str]:
        """The parameters that describe this table, as strings (for safetensors metadata): the
        common ones and its family's, less those that are unset (None); names as they are,
        other values as JSON. Reading one back fills in the rest with their defaults."""
        import json

        own = {p.name for p in COMMON} | {p.name for p in FAMILIES[self.family].params}
        return {
            k: v if isinstance(v, str) else json.dumps(v)
            for k, v in dataclasses.asdict(self).items()
            if k in own and v is not None
        }


TableSpec = dataclasses.make_dataclass(
    "TableSpec",
    [(p.name, object, dataclasses.field(default=p.default)) for p in PARAMS],
    bases=(_Spec,),
    frozen=True,
)
TableSpec.__module__ = __name__
TableSpec.__doc__ = (
    "A table's parameters, checked: " + ", ".join(p.name for p in PARAMS) + ". "
    "Build one with keywords, e.g. TableSpec(d_model=512, seq_len=1024, family='rope')."
)


def params_from_options(options: dict) -> dict:
    """TableSpec keywords from the command line's values (None where an option was not given):
    the common parameters by name, each family's through the family (which may expand an input
    such as --rope-config into several fields)."""
    values = {p.name: options[p.name] for p in COMMON if options.get(p.name) is not None}
    for family in FAMILIES.values():
        values.update(family.from_options(options))
    return values


def _every_param() -> list[Param]:
    """Every table option's parameter: the TableSpec fields, then the inputs a family expands."""
    return PARAMS + [p for _, p in family_params() if not p.field]


class UnknownKeyword(BadInput, TypeError):
    """A keyword that is no table parameter (from Python: build(d_modle=4))."""


def check_keywords(params: dict) -> None:
    """Refuse a keyword that is no table parameter, with the nearest one's name."""
    known = [p.name for p in _every_param()]
    for name in params:
        if name not in known:
            close = did_you_mean(name, known)
            raise UnknownKeyword(
                f"{name!r} is not a table parameter" + (close or "; help(pe_cli.build) lists them")
            )


def keyword_signature(*first: inspect.Parameter) -> inspect.Signature:
    """The signature of a function that takes the table parameters as keywords (build,
    TableSpec's inputs), for help() and editors: `first`, then each parameter by name with its
    default."""
    kinds = {list: "list[str] | dict", bool: "bool"}
    keywords = []
    for param in _every_param():
        kind = kinds.get(param.kind, param.kind.__name__)
        if param.default is None and param.kind is not bool:
            kind += " | None"
        keywords.append(
            inspect.Parameter(
                param.name, inspect.Parameter.KEYWORD_ONLY, default=param.default, annotation=kind
            )
        )
    return inspect.Signature([*first, *keywords])


def keyword_help() -> str:
    """Each table parameter and what it is, for docstrings (indented by 4, as their bodies)."""
    import textwrap

    return "\n".join(
        textwrap.fill(
            f"{p.name}: {' '.join(p.help.split())}",
            96,
            initial_indent="    ",
            subsequent_indent="        ",
            break_on_hyphens=False,
        )
        for p in _every_param()
    )


def _frozen(value):
    """Lists (a JSON array, at any depth) as tuples."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def spec_from_keywords(**params) -> TableSpec:
    """A TableSpec from keywords, where a family's inputs (preset=, rope_config=) expand into
    fields as on the command line and the other keywords go on top. A keyword that is no table
    parameter is refused with the nearest one's name."""
    check_keywords(params)
    inputs = {param.name for _, param in family_params() if not param.field}
    given = {name: params.pop(name) for name in list(params) if name in inputs}
    if given:
        # a repeatable option's values go on top of what the inputs set, as on the command line,
        # and the family the input is checked against (build(family="sinusoidal", preset=...))
        repeated = {param.name for _, param in family_params() if param.kind is list}
        given |= {name: params.pop(name) for name in list(params) if name in repeated}
        given |= {"family": params["family"]} if params.get("family") is not None else {}
    return TableSpec(**{**params_from_options(given), **params}) if given else TableSpec(**params)


def _changes(spec: TableSpec, name: str) -> bool:
    """Whether another value of a parameter changes the table's shape or its frequencies (a
    value the family refuses is no evidence; a parameter with no other value allowed counts
    as one that changes it)."""
    family, value = FAMILIES[spec.family], getattr(spec, name)
    others = (value + 1, 2 * value) + ((value + 2**20,) if name != "d_model" else ())
    tried = False
    for other in others:
        try:
            changed = spec.replace(**{name: other})
        except BadInput:
            continue
        tried = True
        if changed.dims != spec.dims or family.frequencies(changed) != family.frequencies(spec):
            return True
    return not tried


def _typed(spec: TableSpec, name: str, value) -> str:
    """A tuple value as its option takes it back: joined by the separator the family reads it
    with (a grid's 'x', a list's ','), the first whose reading is the spec's own value."""
    joined = [sep.join(shown(v) for v in value) for sep in ("x", ",")]
    for text in joined:
        try:
            if getattr(spec.replace(**{name: text}), name) == value:
                return text
        except BadInput:
            continue
    return joined[0]


def generate_command(spec: TableSpec) -> str:
    """The `pe-cli generate` command that builds this spec's table: the family and variant,
    then each parameter that the table needs (one its family would fill in the same is left
    out), by its first flag; a repeatable option's items each by it, pairs as KEY=VALUE."""
    import shlex

    first = ("family", "variant", "d_model", "seq_len")
    params = sorted(PARAMS, key=lambda p: first.index(p.name) if p.name in first else len(first))
    fields = {p.name: getattr(spec, p.name) for p in params if _given(p, getattr(spec, p.name))}
    for name in ("d_model", "seq_len"):  # one that changes nothing is refused (Options.check_used)
        if name in fields and not _changes(spec, name):
            del fields[name]
    for name in [n for n in fields if n not in first]:
        rest = {k: v for k, v in fields.items() if k != name}
        try:
            if TableSpec(**rest) == spec:
                fields = rest
        except BadInput:
            continue

    def said(item) -> str:
        return f"{item[0]}={shown(item[1])}" if isinstance(item, tuple) else shown(item)

    # a pair the table does not read (a config's key its rope type leaves aside) is left out:
    # the command line refuses it (Options.check_used)
    listed = {
        p.name: [said(i) for i in fields[p.name]]
        for p in params
        if p.kind is list and p.name in fields
    }
    unused = FAMILIES[spec.family].unused(spec, listed)
    words = ["pe-cli", "generate"]
    for param in params:
        if param.name not in fields:
            continue
        value = fields[param.name]
        if param.kind is bool:
            words.append(param.flag)
        elif param.kind is list:  # --rope KEY=VALUE, repeated
            for item in value:
                if not (isinstance(item, tuple) and f"{param.flag} {item[0]}" in unused):
                    words += [param.flag, said(item)]
        elif isinstance(value, tuple):
            words += [param.flag, _typed(spec, param.name, value)]
        else:
            words += [param.flag, shown(value)]
    return shlex.join(words)
