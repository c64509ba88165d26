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
    precision: Annotated[
        str | None,
        typer.Option(
            metavar="DTYPE",
            help="What a rope table loses in DTYPE: bf16, fp16, fp32.",
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
    from ..analysis.metrics import summarizable
    from ..core.errors import BadInput

    # every option is checked before anything is printed
    shown_rows = parse_slice(rows, "--rows") if rows else None
    shown_cols = parse_slice(cols, "--cols") if cols else None
    drawn_precision = plot_kind is not None and plot_kind.value == "precision"
    if drawn_precision and precision is None:
        raise BadInput("--plot-kind precision draws what --precision DTYPE finds: give --precision")
    if precision is not None:
        if source is not None:
            raise BadInput(
                f"--precision works out a table pe-cli builds, from its options; {source} is a "
                "file: give the options that describe it"
            )
        if heatmap:
            raise BadInput(
                "--precision prints its figures and --heatmap draws the table: choose one"
            )
        if plot is not None and not drawn_precision:
            raise BadInput(
                "--precision draws with --plot-kind precision: give it, or drop --precision"
            )
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
        given = table.given
        if given:
            raise BadInput(
                f"show {source} shows the table in that file, and {', '.join(given)} "
                f"{'describe' if len(given) > 1 else 'describes'} a table to build; drop "
                f"{'them' if len(given) > 1 else 'it'}, or {source}"
            )
        notes = []
    else:
        asked = table
        model, table = _model(table)
        built = table.spec()
        table.check_used(built)
        summarizable(
            built.rows, built.cols, "show a shorter one (-l), or write it with generate -o FILE"
        )
        notes = table.notes
    if source is not None:
        model = None
    if plot is not None:
        from ..analysis.figures import show_figure
        from ..analysis.view import table_of
        from ..plotting import draw, file_format, save

        file_format(plot, force)  # a wrong extension or an existing file is refused before any work
        shown = table_of(source, table)
        kind = plot_kind.value if plot_kind is not None else "heatmap"
        if drawn_precision:
            from ..analysis.figures import precision as precision_figure
            from ..analysis.serving import of_spec

            found = of_spec(shown.spec, precision, figure=True)
            figure = precision_figure(found, shown)
        else:
            figure = show_figure(kind, shown, shown_rows, shown_cols)
        written = save(draw(figure), plot, force)
        render.plotted(plot, written, kind)
        render.notes(notes)
        return
    from ..analysis.view import view

    served = _served(model, asked, table, precision) if precision is not None else {}
    seen = view(source, table)
    if json:
        if model and served:
            for name, found in served.items():
                if name is not None:
                    model["treatments"][name]["precision"] = found.to_json()
        shown = _shown_view(model, table, served) if served else None
        render.as_json(
            {
                **seen.facts,
                **({"precision": shown.to_json()} if shown is not None else {}),
                **({"model": model} if model else {}),
            }
        )
    elif heatmap:
        render.heatmap(
            seen.table, seen.facts["min"], seen.facts["max"], seen.table.first_position, seen.label
        )
    else:
        if model:
            from ..render.models import model as model_view

            model_view(model, _shown(model, table))
        render.facts(seen.facts, seen.lines)
        render.console().print()
        render.window(
            seen.table,
            shown_rows or slice(0, 8),
            shown_cols,
            render.row_label(seen.spec),
            seen.label,
        )
        if served:
            from ..render.serving import serving

            for name, found in served.items():
                render.console().print()
                serving(found, _titled(model, name, found.dtype))
    render.notes(notes)


def _model(table: dict) -> tuple[dict | None, dict]:
    """The model a --rope-config describes layer by layer (None for one table), and the
    options of the table show looks at: where its layers apply several tables and neither
    --layer nor --layer-type chooses, its first treatment's."""
    from ..core.errors import BadInput

    try:
        model = table.model
    except BadInput:  # its layers cannot be listed: show is of the table the options choose
        return None, table
    from ..families.hf_config import LayerTypes

    chosen = table.get("layer") is not None or table.get("layer_type")
    if model and model["treatments"] and not chosen:
        try:
            several = len(model["treatments"]) > 1 or not table.spec()
        except LayerTypes:  # one treatment, of one of the config's layer types
            several = True
        if several:
            first = next(iter(model["treatments"].values()))
            table = table.but(layer=first["layers"][0])
    return model, table


def _shown(model: dict, table: dict) -> str:
    """Which of a model's treatments show's table is, for a person."""
    if table.get("layer_type"):
        return f"the {table['layer_type']} table (--layer N chooses a layer's)"
    layer = table.get("layer")
    if layer is None:
        return "the table of every rotating layer"
    name = model["layers"][layer]
    return f"layer {layer}'s table, {name} (--layer N chooses another)"


def _served(model: dict | None, asked: dict, table: dict, dtype: str) -> dict:
    """show --precision's views by treatment name: each of a model's where show looks at the
    model (none chosen with --layer or --layer-type), else the table it shows (named None)."""
    from ..analysis.serving import of_spec

    chosen = asked.get("layer") is not None or asked.get("layer_type")
    if model and model["treatments"] and not chosen:
        return {
            name: of_spec(table.but(layer=t["layers"][0]).spec(), dtype)
            for name, t in model["treatments"].items()
        }
    return {None: of_spec(table.spec(), dtype)}


def _shown_view(model: dict | None, table: dict, served: dict):
    """Of those views, the one of the table show shows."""
    if None in served:
        return served[None]
    layer = table.get("layer")
    name = model["layers"][layer] if layer is not None else next(iter(served))
    return served[name]


def _titled(model: dict | None, name: str | None, dtype: str) -> str:
    if name is None or not model:
        return f"served in {dtype}"
    said = model["treatments"][name]["layers_said"]
    return f"served in {dtype}: {name}, layers {said}"
