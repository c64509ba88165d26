"""`pe-cli show`: a table's facts, a window of its values, or a heatmap."""

from typing import Annotated

import typer

from ..core.names import parse_slice
from ..core.plots import KINDS
from .options import OUTPUT, ForceOpt, JsonOpt, PlotOpt, choices, table_options


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

    if plot is None and plot_kind is not None:
        raise typer.BadParameter(
            "--plot-kind chooses the figure --plot FILE draws: give --plot",
            param_hint="--plot-kind",
        )
    if plot is not None:
        if json or heatmap:
            raise typer.BadParameter(
                "draws a figure instead of what show prints: drop --json and --heatmap",
                param_hint="--plot",
            )
        from ..analysis.figures import show_figure
        from ..analysis.view import table_of
        from ..plotting import draw, file_format, save

        file_format(plot, force)  # a wrong extension or an existing file is refused before any work
        shown = table_of(source, table)
        kind = plot_kind.value if plot_kind is not None else "heatmap"
        rows_cols = (
            parse_slice(rows, "--rows") if rows else None,
            parse_slice(cols, "--cols") if cols else None,
        )
        written = save(draw(show_figure(kind, shown, *rows_cols)), plot, force)
        render.plotted(plot, written, kind)
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
            parse_slice(rows, "--rows") if rows else slice(0, 8),
            parse_slice(cols, "--cols") if cols else None,
            render.row_label(seen.spec),
            seen.label,
        )
