"""The table options a command was given, resolved once: `Options` is the one object the
commands, the families and the engines read. It holds the values as the command line (or a
Python call) gave them, None where an option was not given, and works out from them, once
each, what they describe: the TableSpec keywords (a --rope-config's or --preset's settings
expanded by its family), the model a config describes layer by layer, and the notes the
command line says of the values it took on the user's behalf. A config file is read from disk
once too (families.hf_config)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from itertools import product

from .core.errors import BadInput
from .families import DEFAULT_FAMILY, FAMILIES
from .spec import COMMON, TableSpec, _changes, _every_param, params_from_options


class Options(Mapping):
    """The command line's table options (a read-only mapping of option name to value) and what
    they resolve to, each worked out on first use and kept."""

    def __init__(self, values: Mapping | None = None, **changes):
        self._values = {**(values or {}), **changes}

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        given = {k: v for k, v in self._values.items() if v is not None}
        return f"Options({given})"

    def but(self, **changes) -> Options:
        """The same options with some values changed (another layer, the file's length)."""
        return Options(self._values, **changes)

    @cached_property
    def params(self) -> dict:
        """TableSpec keywords: the common parameters by name, each family's through the
        family (an input such as --rope-config expands into several fields)."""
        return params_from_options(self._values)

    def spec(self, **overrides) -> TableSpec:
        """The TableSpec the options describe, with `overrides` on top."""
        return TableSpec(**{**self.params, **overrides})

    @cached_property
    def notes(self) -> list[str]:
        """What the command line says on stderr about the values it took on the user's behalf
        or over an input: a length from a config, an option given over a config's or preset's
        value."""
        return [note for family in FAMILIES.values() for note in family.notes(self)]

    @cached_property
    def model(self) -> dict | None:
        """The model an input describes layer by layer (Family.model), or None."""
        return next(
            (found for family in FAMILIES.values() if (found := family.model(self)) is not None),
            None,
        )

    @cached_property
    def given(self) -> list[str]:
        """The flags of the table options set (a value other than the option's default; any
        value of an option whose default is left to pe-cli)."""
        found = []
        for param in _every_param():
            value = self._values.get(param.name)
            if isinstance(value, (list, tuple)) and not value:
                continue
            if value is not None and (param.given_only or value != param.default):
                found.append(param.flag)
        return list(dict.fromkeys(found))

    # ---------------------------------------------------------------------------- export

    def _export_lists(self):
        """(the tables an input describes several of, by name: the options that pick each;
        the lists of values export combines)."""
        # an input may name the family (--rope-config), or describe several tables (a config's
        # layer types), which names it too
        selections, family = {}, None
        for candidate in FAMILIES.values():
            if found := candidate.selections(self):
                family, selections = candidate, found
        family = family or FAMILIES.get(self.params.get("family") or DEFAULT_FAMILY)
        lists = {
            "variant": self.get("variant") or ["exact"],
            "convention": self.get("convention") or [None],
            "dtype": self.get("dtype") or ["float32"],
            "part": self.get("part") or list(family.export_parts if family else (None,)),
        }
        return selections, lists

    def export_specs(self) -> dict[str, TableSpec]:
        """The tables `export` writes: one per combination of the lists given for variant,
        convention, dtype and part, each named by what varies among them, joined by dots
        (exact and exp-log; exact.float16 and exp-log.float32 where the dtype varies too; cos
        and sin of a rope table; a layer type's name first), "pe" when one."""
        selections, lists = self._export_lists()
        combos = list(dict.fromkeys(product(*lists.values())))
        varying = [len(set(values)) > 1 for values in zip(*combos)]
        tables = {}
        for selection, chosen in (selections or {None: {}}).items():
            for combo in combos:
                name = ".".join(v for v, vary in zip(combo, varying) if vary and v) or "pe"
                name = f"{selection}.{name}" if selection else name
                given = {k: v for k, v in zip(lists, combo) if v is not None}
                # each variant's table resolved as its own (the layout it takes where no
                # --convention is given)
                tables[name] = self.but(**chosen, variant=given["variant"]).spec(**given)
        return tables

    def choose_one(self) -> str:
        """How to ask `export` for one table where the options give several: '--part cos',
        'one --variant', ..."""
        selections, lists = self._export_lists()
        flags = {p.name: p.flag for p in _every_param()}
        choices = []
        if selections:
            key, value = next(iter(next(iter(selections.values())).items()))
            choices.append(f"{flags.get(key, key)} {value}")
        for name, values in lists.items():
            if len(set(values)) > 1:
                given = self.get(name)
                choices.append(f"one {flags[name]}" if given else f"{flags[name]} {values[0]}")
        return " and ".join(choices)

    # ---------------------------------------------------------------------------- checks

    def check_used(self, specs) -> None:
        """Refuse a --d-model, --seq-len, --shape or --offset given that changes nothing in the
        table, or in any of the tables export writes (ALiBi's biases have no width; a grid's,
        timesteps' or ids' rows are not --seq-len's; a vector of frequencies has no batch axis
        and, unless they depend on the largest position, no positions), or a family's option
        that does not (Family.unused: a --rope key its rope type does not read): the table
        would be built as if it were not given."""
        specs = [specs] if isinstance(specs, TableSpec) else list(specs)
        unused = [self._unused(spec) for spec in specs]
        for flag, message in unused[0].items():
            if all(flag in found for found in unused[1:]):
                raise BadInput(message)

    def _unused(self, spec: TableSpec) -> dict[str, str]:
        """{flag: the line refusing it} for each option given that changes nothing in this
        table."""
        family = FAMILIES[spec.family]
        vector = len(spec.replace(shape="2d").dims) == 1
        found = {}
        if self.get("shape") not in (None, "2d") and vector:
            found["--shape"] = (
                f"--shape {spec.shape} changes nothing in --part {spec.part}'s table of "
                f"{spec.dims[0]} values (one axis); drop --shape"
            )
        if self.get("offset") and vector and not _changes(spec, "offset"):
            found["--offset"] = (
                f"--offset {spec.offset} changes nothing in --part {spec.part}'s table of "
                f"{spec.dims[0]} values (no positions); drop --offset"
            )
        shaping = {p.flag for p in family.params} | {"--part"}
        for param in COMMON:
            if param.name not in ("d_model", "seq_len") or self.get(param.name) is None:
                continue
            if not _changes(spec, param.name):
                others = [f for f in self.given if f in shaping]
                found[param.flag] = (
                    f"{param.flag} {self[param.name]} changes nothing in this "
                    f"{' x '.join(map(str, spec.dims))} {spec.family} table"
                    + (f" (its shape comes from {', '.join(others)})" if others else "")
                    + f"; drop {param.flag}"
                )
        return found | family.unused(spec, self)
