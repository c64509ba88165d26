"""Figures of tables: `show --plot`, `compare --plot` and `pe_cli.plot`. The data comes from
analysis.figures; this draws it with matplotlib, which is imported here only, and only when
a figure is asked for. Figures are made without pyplot (no backend is switched, no window
opens): saving renders them with matplotlib's non-interactive canvases (Agg for PNG), and a
notebook shows the returned Figure as it shows any."""

from __future__ import annotations

import io
import os

import numpy as np

from .analysis import figures
from .analysis.compare import run, side
from .analysis.tables import from_spec
from .core.errors import BadInput
from .core.names import parse_slice
from .core.plots import FORMATS
from .io.write import write_file
from .spec import TableSpec, spec_from_keywords

SIZE = (8.0, 5.0)  # inches
TALL = (8.0, 7.5)  # two panels
DPI = 120  # a PNG is 960 x 600 pixels
_HEATMAP_COLOURS = "RdBu_r"  # ColorBrewer's diverging red-blue: colour-blind safe, readable in grey
_LINE_STYLES = ("-", "--", ":", "-.")


def _matplotlib():
    try:
        from matplotlib import style
        from matplotlib.figure import Figure
    except ImportError:
        raise BadInput(
            "--plot needs matplotlib, which the plot extra installs: pip install 'pe-cli[plot]'"
        ) from None
    return style, Figure


def draw(data: figures.Figure):
    """The matplotlib Figure of a figure's data."""
    style, Figure = _matplotlib()
    # Tableau's colour-blind palette, and a line style each, so that curves part in grey print too
    palette = style.library["tableau-colorblind10"]["axes.prop_cycle"].by_key()["color"]
    colours = [palette[k] for k in (0, 1, 3, 4, 5, 6, 2, 7, 8, 9)]  # its light greys last
    panels = [data] if data.below is None else [data, data.below]
    figure = Figure(figsize=SIZE if len(panels) == 1 else TALL, dpi=DPI, layout="constrained")
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for k, (panel, ax) in enumerate(zip(panels, axes)):
        _panel(figure, ax, panel, colours, named=k == 0)  # a lower panel's curves are the same
    if len(panels) > 1:  # under the panels: their curves share it
        figure.legend(loc="outside lower center", fontsize=7, ncols=2)
    elif len(data.series) + len(data.hlines) + len(data.vlines) > 1:  # beside, never on data
        figure.legend(loc="outside right upper", fontsize=7)
    return figure


def _panel(figure, axes, data: figures.Figure, colours, named: bool = True) -> None:
    """One panel's image, curves and marks (in the legend where `named`)."""
    if data.image is not None:
        limit = float(np.nanmax(np.abs(data.image), initial=0.0)) or 1.0
        shown = axes.imshow(
            data.image,
            cmap=_HEATMAP_COLOURS,
            vmin=-limit,
            vmax=limit,
            aspect="auto",
            interpolation="nearest",
            extent=data.extent,
        )
        figure.colorbar(shown, ax=axes, label="value")
    for k, series in enumerate(data.series):
        look = dict(
            color=colours[k % len(colours)],
            linestyle=_LINE_STYLES[k % len(_LINE_STYLES)],
            label=series.label if named else "_nolegend_",
        )
        if len(series.x) == len(series.y) + 1:  # bins: steps over their positions
            if series.low is None:
                axes.stairs(series.y, series.x, baseline=None, **look)
            else:  # each bin's minimum to maximum, filled
                axes.stairs(series.y, series.x, baseline=series.low, fill=True, alpha=0.6, **look)
        else:
            axes.plot(series.x, series.y, **look)
    marks = [(0, (4, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2))]  # grey, each its own dashes
    for k, (value, label) in enumerate(data.hlines):
        axes.axhline(
            value, color="0.3", linewidth=0.8, linestyle=marks[k % len(marks)], label=label
        )
    k = -1
    for value, label in data.vlines:  # an unnamed mark is one more of the mark before it
        k += not label.startswith("_")
        axes.axvline(
            value,
            color="0.3",
            linewidth=0.8,
            linestyle=marks[(max(k, 0) + len(data.hlines)) % len(marks)],
            label=label if named else "_nolegend_",
        )
    if data.xscale == "symlog":
        axes.set_xscale("symlog", linthresh=1.0)
    else:
        axes.set_xscale(data.xscale)
    axes.set_yscale(data.yscale)
    if data.title:
        axes.set_title(data.title, fontsize=8, loc="left")
    axes.set_xlabel(data.xlabel + (f"\n{data.note}" if data.note else ""))
    axes.set_ylabel(data.ylabel)


# savefig's arguments per format: no dates in the file (the same figure makes the same bytes),
# JPEG at a quality that keeps thin lines sharp, WebP without loss, TIFF compressed
_SAVE = {
    "png": {},
    "svg": {"metadata": {"Date": None}},
    "pdf": {"metadata": {"CreationDate": None}},
    "jpeg": {"pil_kwargs": {"quality": 95}},
    "webp": {"pil_kwargs": {"lossless": True}},
    "tiff": {"pil_kwargs": {"compression": "tiff_lzw"}},
}


def file_format(destination: str, force: bool = False) -> str:
    """The figure format of a --plot file (matplotlib's name), from its extension; refused
    first (before any work) where that is none of FORMATS, where this Pillow cannot write it,
    or where the file exists and --force is not given."""
    found = destination.rsplit(".", 1)[-1].lower() if "." in destination else ""
    if found not in FORMATS:
        raise BadInput(
            f"--plot {destination}: the figure's format comes from its extension: "
            f"{', '.join('.' + f for f in FORMATS)}"
        )
    if FORMATS[found] == "webp":
        from PIL import features  # matplotlib's own dependency; WebP is a build option of it

        if not features.check("webp"):
            raise BadInput(f"--plot {destination}: this Pillow was built without WebP; use .png")
    if not force and os.path.lexists(destination):
        raise BadInput(f"{destination} exists; pass --force to replace it")
    return FORMATS[found]


def save(figure, destination: str, force: bool = False) -> str:
    """Write a matplotlib Figure whole, or not at all; its format from the extension. Returns
    the format."""
    from matplotlib import rc_context

    fmt = file_format(destination, force)
    buffer = io.BytesIO()
    with rc_context({"svg.hashsalt": "pe-cli"}):  # SVG ids from a fixed salt, not the clock
        figure.savefig(buffer, format=fmt, **_SAVE[fmt])
    write_file(destination, buffer.getvalue(), force)
    return fmt


def plot(*tables, kind: str = "heatmap", rows=None, cols=None, **keywords):
    """A figure as a matplotlib Figure, for notebooks:

        pe_cli.plot(d_model=128, seq_len=256)                        # heatmap of a built table
        pe_cli.plot("table.npy", kind="curves", cols=slice(4, 8))    # a file's columns 4..7
        pe_cli.plot(family="rope", d_model=128, rope={"rope_type": "yarn", "factor": 4,
                    "original_max_position_embeddings": 4096}, kind="wavelengths")
        pe_cli.plot(kind="errors", d_model=256, seq_len=4096)         # compare --plot: every recipe
        pe_cli.plot("a.npy", "b.npy", kind="errors")                  # |A - B| against position

    `tables`: files, TableSpecs, or none (the table the keywords describe); `rows`, `cols`:
    slices, or "START:STOP" as on the command line."""
    rows, cols = _slice(rows, "rows"), _slice(cols, "cols")
    if kind == "errors":
        if len(tables) > 2:
            raise BadInput("kind errors compares at most two tables")
        a, b = (list(tables) + [None, None])[:2]
        return draw(figures.errors(run(a, b, keywords).result))
    if len(tables) > 1:
        raise BadInput(f"kind {kind} draws one table")
    found = tables[0] if tables else None
    if isinstance(found, TableSpec):
        table = from_spec(found, "table")
    elif found is not None:
        table = side(str(found), {})
    else:
        table = from_spec(spec_from_keywords(**keywords), "table")
    return draw(figures.show_figure(kind, table, rows, cols))


def _slice(value, flag: str):
    if value is None or isinstance(value, slice):
        return value
    return parse_slice(str(value), flag)
