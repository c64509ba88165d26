"""`pe-cli generate`: one table, summarized or written."""

from typing import Annotated

import typer

from .options import OUTPUT, ForceOpt, FormatOpt, table_options
from .output import refuse_without, write


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
    from ..analysis.distance import library_distance

    if output is None:
        refuse_without("-o FILE (or -o - for a pipe)", format=fmt, force=force)
    spec = table.spec()
    table.check_used(spec)
    notes = table.notes
    if output is None:
        from ..analysis.metrics import summarize

        facts = summarize(spec)
        render.summary(spec, *facts, library=library_distance({"pe": spec}, table))
        render.notes(notes)
    else:
        write(output, {"pe": spec}, fmt, force, table, notes)
