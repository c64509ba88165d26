"""The table options, declared once: each is a Param (spec.COMMON, and each family's in its
module), turned here into a Typer option and added to every command that takes table options.
A command receives their values as one dict, `table` (None where an option was not given).
"""

import functools
import inspect
from enum import Enum
from typing import Annotated

import typer

from ..core.params import Param
from ..core.plots import FORMATS
from ..families import FAMILIES, own_names
from ..io.formats import OUTPUT_FORMATS
from ..spec import COMMON

TABLE = "Table"  # help panels: the common view shows TABLE and OUTPUT,
FAMILY = "Family options"  # `--family F --help` F's own options
OUTPUT = "Output"


def choices(name: str, values) -> type[Enum]:
    return Enum(name, {v: v for v in values}, type=str)


def _declarations() -> list[tuple[Param, str]]:
    """(param, help panel) of every table option: the common ones, then each family's; a
    parameter several families share (--grid) is one option, each family's help its own."""
    found = {p.name: (p, TABLE) for p in COMMON}
    for family in FAMILIES.values():
        for param in family.params:
            found.setdefault(param.name, (param, FAMILY))
    return list(found.values())


_DECLARATIONS = _declarations()


def _completion(param: Param):
    """Shell completion of a name option: its names (the given --family's own variants,
    conventions or parts), aliases included."""

    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        family = FAMILIES.get(ctx.params.get("family") or "")
        own = own_names(family).get(param.name) if family else None
        names = dict.fromkeys((*(own or param.choices), *(param.aliases or ())))
        return [name for name in names if name.startswith(incomplete)]

    return complete


def _option(param: Param, panel: str, many: bool, from_file: bool):
    """(annotation, default) of the Typer option for a parameter. A name's value is checked
    by TableSpec, which knows the family (its names are suggested first) and the aliases."""
    kind, default, help = (str if param.kind is list else param.kind), param.default, param.help
    if many:
        annotation, default = list[kind] | None, None if default is None else [default]
    elif param.kind is list:
        annotation, default = list[str] | None, None
    elif param.kind is bool:
        annotation = bool
    elif from_file:
        annotation, default = kind | None, None
        help += f" [default: the file's, else {param.default}]"
    elif param.given_only:
        annotation, default = kind | None, None
        help += f" [default: {param.default}]"
    elif default is None:
        annotation = kind | None
    else:
        annotation = kind
    option = typer.Option(
        *(param.flags or (param.flag,)),
        help=help,
        rich_help_panel=panel,
        metavar="NAME" if param.choices else None,
        autocompletion=_completion(param) if param.choices else None,
    )
    return Annotated[annotation, option], default


def _aliased(param: Param, value):
    """A value as the name it stands for ('fp32' -> 'float32'), so that export names its
    tensors by the names the specs record."""
    if param.aliases and isinstance(value, list):
        return [param.aliases.get(v, v) for v in value]
    return param.aliases.get(value, value) if param.aliases else value


def table_options(*, repeat=(), from_file=(), skip=()):
    """Add the table options to a command whose last parameter is `table`: `repeat` names the
    options that may be given several times (a list), `from_file` those whose default comes
    from a file the command reads, `skip` those it does not take."""

    def decorate(command):
        own = inspect.signature(command, eval_str=True)
        params = [p for name, p in own.parameters.items() if name != "table"]
        taken = []
        for param, panel in _DECLARATIONS:
            if param.name in skip:
                continue
            annotation, default = _option(
                param, panel, param.name in repeat, param.name in from_file
            )
            params.append(
                inspect.Parameter(
                    param.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=default,
                    annotation=annotation,
                )
            )
            taken.append(param)

        @functools.wraps(command)
        def with_table(**values):
            from ..options import Options

            table = Options(
                {param.name: _aliased(param, values.pop(param.name)) for param in taken}
            )
            return command(**values, table=table)

        with_table.__signature__ = own.replace(parameters=params)
        with_table.__annotations__ = {}
        return with_table

    return decorate


FormatOpt = Annotated[
    choices("OutputFormat", OUTPUT_FORMATS) | None,
    typer.Option(
        "--format",
        "-f",
        help=f"Output format: {', '.join(OUTPUT_FORMATS)} [default: from the extension; npy for -].",
        rich_help_panel=OUTPUT,
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace an existing file; allow binary data to a terminal.",
        rich_help_panel=OUTPUT,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the results as JSON.", rich_help_panel=OUTPUT)
]
PlotOpt = Annotated[
    str | None,
    typer.Option(
        "--plot",
        metavar="FILE",
        help="Also draw a figure into this file: "
        + ", ".join("." + f for f in FORMATS)
        + " (needs the plot extra: pip install 'pe-cli[plot]').",
        rich_help_panel=OUTPUT,
    ),
]
