"""The data behind the figures `show --plot` and `compare --plot` draw, computed without
matplotlib (plotting.py draws a Figure). A table is streamed in row blocks, as everywhere, and a
large one is reduced honestly, never decimated: a heatmap cell is the value of largest
magnitude in its bin of positions and dimensions, a curve over many positions is each bin's
minimum and maximum, and an error curve each bin's maximum (metrics.Difference.profile)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import BadInput
from ..core.plots import KINDS
from ..families import FAMILIES, find_variant
from .compare import Audit, Comparison
from .metrics import fold_bins
from .tables import Source

HEATMAP_CELLS = 512  # cells along each axis of a heatmap at most
CURVE_POINTS = 4096  # positions a curve draws one by one; beyond, bins of positions
CURVE_COLUMNS = 4  # columns `curves` draws when --cols is not given
CURVE_PERIODS = 8  # periods of its fastest column `curves` draws when --rows is not given
CURVE_MIN_ROWS = 16  # positions it draws at least


@dataclass
class Series:
    label: str
    x: np.ndarray  # positions; for a binned series its bins' edges (one more than y)
    y: np.ndarray  # the values, or each bin's maximum
    low: np.ndarray | None = None  # each bin's minimum, where the series is a min-max band


@dataclass
class Figure:
    kind: str
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    image: np.ndarray | None = None  # heatmap cells (position bins, dimension bins)
    extent: tuple[float, float, float, float] | None = (
        None  # (left, right, bottom, top) of the cells
    )
    xscale: str = "linear"
    yscale: str = "linear"
    hlines: list[tuple[float, str]] = field(default_factory=list)  # (value, label) across
    vlines: list[tuple[float, str]] = field(default_factory=list)  # (position, label) down
    note: str = ""  # how the data was reduced, shown under the x axis
    below: Figure | None = None  # a second panel under this one, on the same positions


def title(table: Source) -> str:
    """The table's label and parameters, in the summary's words."""
    if table.spec is None:
        return f"{table.label}: {table.rows} x {table.cols} {table.dtype}"
    spec = table.spec
    variant = find_variant(spec)
    words = [
        f"shape {' x '.join(map(str, spec.dims))}",
        f"dtype {spec.dtype}",
        f"variant {spec.variant if variant is None else variant.label(spec)}",
        *(f"{k} {v}" for k, v in FAMILIES[spec.family].settings(spec)),
    ]
    return "\n".join(textwrap.wrap(f"{table.label}: " + ", ".join(words), 110)[:4])


def _range(
    text_slice: slice | None, size: int, what: str, default: int | None = None
) -> tuple[int, int]:
    """A START:STOP slice as (start, stop) within 0..size, refused where empty."""
    if text_slice is None:
        return 0, size if default is None else min(default, size)
    start, stop, step = text_slice.indices(size)
    if step != 1 or start >= stop:
        raise BadInput(f"{what} {text_slice.start}:{text_slice.stop} selects nothing of {size}")
    return start, stop


def _edges(count: int, most: int) -> np.ndarray:
    """Edges of at most `most` nearly equal bins of 0..count (every index its own bin when
    they fit)."""
    if count <= most:
        return np.arange(count + 1)
    return np.unique(np.round(np.linspace(0, count, most + 1)).astype(np.int64))


def heatmap(table: Source, rows: slice | None = None, cols: slice | None = None) -> Figure:
    r0, r1 = _range(rows, table.rows, "--rows")
    c0, c1 = _range(cols, table.cols, "--cols")
    row_edges, col_edges = _edges(r1 - r0, HEATMAP_CELLS), _edges(c1 - c0, HEATMAP_CELLS)
    high = np.full((len(row_edges) - 1, len(col_edges) - 1), -np.inf)
    low = np.full_like(high, np.inf)
    for first, block in table.blocks(r0, r1):
        part = block[:, c0:c1]
        fold_bins(high, row_edges, first - r0, np.maximum.reduceat(part, col_edges[:-1], axis=1))
        fold_bins(
            low,
            row_edges,
            first - r0,
            np.minimum.reduceat(part, col_edges[:-1], axis=1),
            np.minimum,
        )
    image = np.where(np.abs(high) >= np.abs(low), high, low)
    p0 = table.first_position
    binned = len(row_edges) - 1 < r1 - r0 or len(col_edges) - 1 < c1 - c0
    note = (
        f"each cell: the value of largest magnitude among its {_sizes(row_edges)} positions x "
        f"{_sizes(col_edges)} dimensions"
        if binned
        else ""
    )
    return Figure(
        "heatmap",
        title(table),
        "dimension",
        "position",
        image=image,
        extent=(c0 - 0.5, c1 - 0.5, p0 + r1 - 0.5, p0 + r0 - 0.5),
        note=note,
    )


def _sizes(edges: np.ndarray) -> str:
    widths = np.diff(edges)
    return str(widths.min()) if widths.min() == widths.max() else f"{widths.min()}-{widths.max()}"


def _over_positions(
    table: Source, r0: int, r1: int, reduce
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, str]:
    """(x, highs, lows, note) of per-row values `reduce(block)` -> (rows, k): every
    row while at most CURVE_POINTS, else each bin's maximum and minimum."""
    edges = _edges(r1 - r0, CURVE_POINTS)
    binned = len(edges) - 1 < r1 - r0
    high = low = None
    for first, block in table.blocks(r0, r1):
        values = reduce(block)
        if high is None:
            high = np.full((len(edges) - 1, values.shape[1]), -np.inf)
            low = np.full_like(high, np.inf)
        fold_bins(high, edges, first - r0, values)
        fold_bins(low, edges, first - r0, values, np.minimum)
    p0 = table.first_position
    if not binned:
        return p0 + r0 + np.arange(r1 - r0), high, None, ""
    note = f"{r1 - r0} positions in {len(edges) - 1} bins of {_sizes(edges)}: each bin's minimum to maximum"
    return p0 + r0 + edges, high, low, note


def _periods(table: Source, c0: int, c1: int) -> int:
    """Rows enough for CURVE_PERIODS periods of the fastest of columns c0..c1-1, read from how
    often each crosses the middle of its range in the first block of rows; every row where
    none turns that often."""
    first = table.block(0, min(table.rows, table.block_rows))[:, c0:c1]
    above = first > (first.max(axis=0) + first.min(axis=0)) / 2
    crossings = np.count_nonzero(above[1:] != above[:-1], axis=0).max(initial=0)
    if crossings < 2:  # not half a period twice over: no turning to crowd
        return table.rows
    periods = -(-CURVE_PERIODS * 2 * len(first) // crossings)  # positions they take, rounded up
    return min(table.rows, max(CURVE_MIN_ROWS, periods + 1))  # and the position that ends them


def curves(table: Source, rows: slice | None = None, cols: slice | None = None) -> Figure:
    """Columns as curves over position. Without --rows, the first CURVE_PERIODS periods of the
    fastest column (over a long table, hundreds of periods would fill the plot solid)."""
    c0, c1 = _range(cols, table.cols, "--cols", default=CURVE_COLUMNS)
    r0, r1 = _range(rows, table.rows, "--rows", default=_periods(table, c0, c1))
    x, high, low, note = _over_positions(table, r0, r1, lambda block: block[:, c0:c1])
    if rows is None and r1 < table.rows:
        p0 = table.first_position
        note = (
            f"positions {p0}..{p0 + r1 - 1} of {p0}..{p0 + table.rows - 1}: "
            f"{CURVE_PERIODS} periods of the fastest curve (--rows draws others)"
        )
    series = [
        Series(f"dimension {c0 + k}", x, high[:, k], None if low is None else low[:, k])
        for k in range(c1 - c0)
    ]
    return Figure("curves", title(table), "position", "value", series, note=note)


def similarity(table: Source, rows: slice | None = None) -> Figure:
    """Row p's dot product with every row (p: the START of --rows, default 0)."""
    p = 0 if rows is None else _range(rows, table.rows, "--rows")[0]
    anchor = table.block(p, p + 1)[0]
    x, high, low, note = _over_positions(
        table, 0, table.rows, lambda block: (block @ anchor)[:, None]
    )
    position = table.first_position + p
    series = [Series(f"PE[{position}] · PE[q]", x, high[:, 0], None if low is None else low[:, 0])]
    return Figure(
        "similarity",
        title(table),
        "position q",
        f"PE[{position}] · PE[q]",
        series,
        vlines=[(position, f"p = {position}")],
        note=note,
    )


def wavelengths(table: Source) -> Figure:
    """Each frequency's wavelength 2 pi / w (log), the table's and, where it scales its
    frequencies, the unscaled ones; lines at the context lengths the scaling is for and at
    the table's own length."""
    spec = table.spec
    what = "a table pe-cli built (table options, or a file pe-cli wrote)"
    if spec is None:
        raise BadInput(
            f"--plot-kind wavelengths needs the table's frequencies: {what}, not {table.label}"
        )
    family = FAMILIES[spec.family]
    found = family.facts(spec).get("frequencies")
    if not found:
        whose = f"--variant {spec.variant}" if spec.variant != "exact" else "the family"
        raise BadInput(
            f"--plot-kind wavelengths: pe-cli lists no frequencies of {whose}'s {spec.family} tables"
        )
    plain, contexts = family.scaling(spec)

    def line(frequencies, label):
        lengths = [f["wavelength"] if f["wavelength"] is not None else np.nan for f in frequencies]
        return Series(
            label, np.array([f["index"] for f in frequencies]), np.array(lengths, dtype=float)
        )

    series = [line(found, "this table")]
    if plain is not None:
        series.append(line(family.facts(plain)["frequencies"], "without its scaling"))
    marks = [(float(length), f"{meaning} {length:g}") for length, meaning in contexts]
    marks.append(
        (float(spec.last_position + 1), f"this table's positions {spec.last_position + 1}")
    )
    return Figure(
        "wavelengths",
        title(table),
        "frequency index i",
        "wavelength 2π / w_i (positions)",
        series,
        yscale="log",
        hlines=marks,
    )


def precision(found, table: Source) -> Figure:
    """show --precision's figure (analysis.serving, made with its curves): above, the drift of
    an inv_freq held in the dtype; below, the error of a cos/sin cache held in it; one curve per
    band of frequencies, each bin of positions its maximum, on log axes, with the positions
    where the dtype starts to hold several as one."""
    curves, dtype = found.curves, found.dtype
    edges = curves["edges"]
    frequencies = FAMILIES[table.spec.family].facts(table.spec).get("frequencies") or []

    def named(group: range) -> str:
        waves = [frequencies[i]["wavelength"] for i in (group[0], group[-1])] if frequencies else []
        said = f" (wavelength {waves[0]:.3g} to {waves[1]:.3g})" if all(waves) and waves else ""
        return f"w_{group[0]} to w_{group[-1]}{said}"

    def series(values):  # a log axis has no 0: bins with none are gaps
        return [
            Series(named(g), edges, np.where(v > 0, v, np.nan))
            for g, v in zip(curves["groups"], values)
        ]

    marks = []
    run = found.positions.first_collapse
    while run is not None and run <= found.last:
        label = (
            f"{dtype} holds positions as one from {run}; the runs double at each line"
            if not marks
            else "_nolegend_"
        )
        marks.append((float(run), label))
        run *= 2
    below = Figure(
        "precision",
        f"a cos/sin cache held in {dtype}: |error|",
        "position",
        "|error|",
        series(curves["cache"]),
        xscale="symlog",
        yscale="log",
        vlines=marks,
        note="each bin's maximum over its positions and its frequencies",
    )
    return Figure(
        "precision",
        title(table) + f"\ninv_freq held in {dtype}: the angles' drift p |w~ - w|",
        "",
        "drift (rad)",
        series(curves["drift"]),
        xscale="symlog",
        yscale="log",
        hlines=[(0.1, "0.1 rad"), (math.pi / 2, "a quarter turn")],
        vlines=marks,
        below=below,
    )


def show_figure(
    kind: str, table: Source, rows: slice | None = None, cols: slice | None = None
) -> Figure:
    if kind == "heatmap":
        return heatmap(table, rows, cols)
    if kind == "curves":
        return curves(table, rows, cols)
    if kind == "similarity":
        return similarity(table, rows)
    if kind == "wavelengths":
        return wavelengths(table)
    if kind == "precision":
        raise BadInput("--plot-kind precision draws what --precision DTYPE finds: give --precision")
    raise BadInput(f"--plot-kind {kind}: choose from {', '.join(KINDS)}")


def errors(result) -> Figure:
    """Max |error| against position, per bin of positions on log axes: every recipe of an
    audit, A against B, or an identification's candidates (the best 8)."""
    if isinstance(result, Audit):
        named, heading = result.rows, result.title
    elif isinstance(result, Comparison):
        named, heading = (
            [(f"|{result.a.label} − {result.b.label}|", result.difference)],
            f"{result.a.label} against {result.b.label}",
        )
    else:
        named = [
            (c.name + ("" if c.confirmed else " (on the rows scored)"), c.difference)
            for c in result.candidates[:8]
        ]
        heading = f"{result.target.label}: what it could be"
        if not named:
            raise BadInput(
                f"compare --plot: nothing to draw, no candidate for {result.target.label}"
            )
    series = []
    for name, difference in named:
        edges, top = difference.profile
        shown = np.where(top > 0, top, np.nan)  # a log axis has no 0: bit-equal bins are gaps
        label = name + (" (bit-identical)" if difference.identical else "")
        series.append(Series(label, difference.first_position + edges, shown))
    widest = max(len(s.x) - 1 for s in series)
    rows = max(int(s.x[-1] - s.x[0]) for s in series)
    note = "" if widest >= rows else "each bin's maximum over its positions; "
    return Figure(
        "errors",
        "\n".join(textwrap.wrap(heading, 110)[:4]),
        "position",
        "max |error|",
        series,
        xscale="symlog",
        yscale="log",
        note=note + "gaps: no error (bit-equal)",
    )
