"""`pe-cli show`: a table's facts, a window of its values, or a heatmap."""

from typing import Annotated, Optional

import typer

from .options import OUTPUT, JsonOpt, table_options


def _slice(text: str, name: str) -> slice:
    try:
        parts = [int(p) if p.strip() else None for p in text.split(":")]
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not START:STOP", param_hint=name) from None
    if len(parts) == 1:
        return slice(parts[0], None if parts[0] is None else parts[0] + 1 or None)
    if len(parts) != 2:
        raise typer.BadParameter(f"{text!r} is not START:STOP", param_hint=name)
    return slice(*parts)


@table_options()
def show(
    source: Annotated[Optional[str], typer.Argument(help="A .npy file, FILE.safetensors\\[:TENSOR], or nothing to build from the options.")] = None,
    rows: Annotated[Optional[str], typer.Option(help="Positions to show, START:STOP (row indices) \\[default: 0:8].", rich_help_panel=OUTPUT)] = None,
    cols: Annotated[Optional[str], typer.Option(help="Dimensions to show, START:STOP \\[default: what fits].", rich_help_panel=OUTPUT)] = None,
    heatmap: Annotated[bool, typer.Option("--heatmap", help="Draw the whole table as a heatmap.", rich_help_panel=OUTPUT)] = False,
    json: JsonOpt = False,
    table: dict = None,
) -> None:
    """Look at a table: a window of values, a heatmap, and facts (norms, frequencies)."""
    from .. import render
    from ..analysis.view import view

    seen = view(source, table)
    if json:
        render.as_json(seen.facts)
    elif heatmap:
        render.heatmap(seen.table, seen.facts["min"], seen.facts["max"], seen.table.first_position, seen.label)
    else:
        render.facts(seen.facts)
        render.console().print()
        render.window(seen.table, _slice(rows, "--rows") if rows else slice(0, 8),
                      _slice(cols, "--cols") if cols else None, render.row_label(seen.spec), seen.label)
