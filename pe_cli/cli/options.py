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
from ..families import FAMILIES
from ..io.formats import OUTPUT_FORMATS
from ..spec import COMMON

TABLE = "Table"
FAMILY = "Family options"
OUTPUT = "Output"


def choices(name: str, values) -> type[Enum]:
    return Enum(name, {v: v for v in values}, type=str)


def _escape(text: str) -> str:
    return text.replace("[", "\\[")  # help is rich markup


def _declarations() -> list[tuple[Param, str, str]]:
    """(param, help panel, help) of every table option: the common ones, then each family's;
    a parameter two families share (--grid) is one option whose help names both."""
    found = {p.name: (p, TABLE, p.help) for p in COMMON}
    for family in FAMILIES.values():
        for param in family.params:
            help = f"{family.name}: {param.help}"
            if param.name in found:
                first, panel, before = found[param.name]
                found[param.name] = (first, panel, f"{before} {help}")
            else:
                found[param.name] = (param, FAMILY, help)
    return list(found.values())


_DECLARATIONS = _declarations()
_ENUMS = {
    p.name: choices(p.name.title().replace("_", ""), p.choices)
    for p, _, _ in _DECLARATIONS
    if p.choices
}


def _option(param: Param, panel: str, help: str, many: bool, from_file: bool):
    """(annotation, default) of the Typer option for a parameter."""
    kind = _ENUMS.get(param.name, param.kind)
    default = param.default
    if param.choices and default is not None:
        default = kind(default)
    if many:
        annotation, default = list[kind] | None, None if default is None else [default]
        help += " Repeat for several tables."
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
        *(param.flags or (param.flag,)), help=_escape(help), rich_help_panel=panel
    )
    return Annotated[annotation, option], default


def _plain(value):
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def table_options(*, repeat=(), from_file=(), skip=()):
    """Add the table options to a command whose last parameter is `table`: `repeat` names the
    options that may be given several times (a list), `from_file` those whose default comes
    from a file the command reads, `skip` those it does not take."""

    def decorate(command):
        own = inspect.signature(command, eval_str=True)
        params = [p for name, p in own.parameters.items() if name != "table"]
        names = []
        for param, panel, help in _DECLARATIONS:
            if param.name in skip:
                continue
            annotation, default = _option(
                param, panel, help, param.name in repeat, param.name in from_file
            )
            params.append(
                inspect.Parameter(
                    param.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=default,
                    annotation=annotation,
                )
            )
            names.append(param.name)

        @functools.wraps(command)
        def with_table(**values):
            table = {name: _plain(values.pop(name)) for name in names}
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
        help="Output format \\[default: from the extension; npy for -].",
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
        help="Also draw a figure into this file: "
        + ", ".join("." + f for f in FORMATS)
        + " (needs the plot extra: pip install 'pe-cli\\[plot]').",
        rich_help_panel=OUTPUT,
    ),
]
