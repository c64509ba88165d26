"""`pe-cli generate`: one table, summarized or written."""

from typing import Annotated

import typer

from .options import OUTPUT, ForceOpt, FormatOpt, table_options
from .output import write


@table_options()
def generate(
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the table to this file, or - for stdout.",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    fmt: FormatOpt = None,
    force: ForceOpt = False,
    table: dict = None,
) -> None:
    """Build one table; print a summary, or write it with -o (a file, or - for a pipe)."""
    from .. import render
    from ..analysis.metrics import summarize
    from ..spec import spec_from_options

    spec = spec_from_options(table)
    if output is None:
        render.summary(spec, *summarize(spec))
    else:
        write(output, {"pe": spec}, fmt, force)
