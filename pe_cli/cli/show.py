"""`pe-cli show`: a table's facts, a window of its values, or a heatmap."""

from typing import Annotated

import typer

from ..core.names import parse_slice
from ..core.plots import KINDS
from .options import OUTPUT, ForceOpt, JsonOpt, PlotOpt, choices, table_options
from .output import refuse_without


@table_options()
def show(
    source: Annotated[
        str | None,
        typer.Argument(
            help="A .npy file, FILE.safetensors[:TENSOR], or nothing to build from the options."
        ),
    ] = None,
    rows: Annotated[
        str | None,
        typer.Option(
            metavar="START:STOP",
            help="Positions to show, START:STOP (row indices) [default: 0:8]; with --plot, those drawn [default: all; curves: 8 periods of the fastest column] (similarity: START is p).",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    cols: Annotated[
        str | None,
        typer.Option(
            metavar="START:STOP",
            help="Dimensions to show, START:STOP [default: what fits]; with --plot, those drawn [default: all; curves: 0:4].",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    heatmap: Annotated[
        bool,
        typer.Option(
            "--heatmap", help="Draw the whole table as a heatmap.", rich_help_panel=OUTPUT
        ),
    ] = False,
    plot: PlotOpt = None,
    plot_kind: Annotated[
        choices("PlotKind", KINDS) | None,
        typer.Option(
            help="The figure --plot draws: "
            + "; ".join(f"{k}: {v}" for k, v in KINDS.items())
            + " [default: heatmap].",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    force: ForceOpt = False,
    json: JsonOpt = False,
    table: dict = None,
) -> None:
    """Look at a table: a window of values, a heatmap, and facts (norms, frequencies); or
    draw a figure of it with --plot."""
    from .. import render
    from ..core.errors import BadInput
    from ..spec import check_used, given_options, option_notes, spec_from_options

    # every option is checked before anything is printed
    shown_rows = parse_slice(rows, "--rows") if rows else None
    shown_cols = parse_slice(cols, "--cols") if cols else None
    if plot is None:
        if plot_kind is not None:
            raise BadInput("--plot-kind chooses the figure --plot FILE draws: give --plot")
        refuse_without("--plot FILE", force=force)
        drawn = "--json" if json else "--heatmap" if heatmap else None
        if json and heatmap:
            raise BadInput("--json prints the facts and --heatmap draws the table: choose one")
        if drawn is not None:
            for flag, value in (("--rows", rows), ("--cols", cols)):
                if value:
                    raise BadInput(
                        f"{flag} chooses the window of values show prints, and {drawn} prints "
                        f"no window; drop {flag}"
                    )
    elif json or heatmap:
        raise BadInput(
            "--plot draws a figure instead of what show prints: drop --json and --heatmap"
        )
    if source is not None:
        given = given_options(table)
        if given:
            raise BadInput(
                f"show {source} shows the table in that file, and {', '.join(given)} "
                f"{'describe' if len(given) > 1 else 'describes'} a table to build; drop "
                f"{'them' if len(given) > 1 else 'it'}, or {source}"
            )
        notes = []
    else:
        check_used(spec_from_options(table), table)
        notes = option_notes(table)
    if plot is not None:
        from ..analysis.figures import show_figure
        from ..analysis.view import table_of
        from ..plotting import draw, file_format, save

        file_format(plot, force)  # a wrong extension or an existing file is refused before any work
        shown = table_of(source, table)
        kind = plot_kind.value if plot_kind is not None else "heatmap"
        written = save(draw(show_figure(kind, shown, shown_rows, shown_cols)), plot, force)
        render.plotted(plot, written, kind)
        render.notes(notes)
        return
    from ..analysis.view import view

    seen = view(source, table)
    if json:
        render.as_json(seen.facts)
    elif heatmap:
        render.heatmap(
            seen.table, seen.facts["min"], seen.facts["max"], seen.table.first_position, seen.label
        )
    else:
        render.facts(seen.facts)
        render.console().print()
        render.window(
            seen.table,
            shown_rows or slice(0, 8),
            shown_cols,
            render.row_label(seen.spec),
            seen.label,
        )
    render.notes(notes)
