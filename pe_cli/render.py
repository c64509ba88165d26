"""The one renderer: what pe-cli shows a person, with rich: summaries, windows, heatmaps,
facts, comparisons, identifications, the progress bar and JSON.

Colour and styles follow rich's own rules: none when the stream is not a terminal or when
NO_COLOR is set.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .analysis.metrics import Summary
from .core.limits import gib
from .families import FAMILIES, find_variant
from .spec import TableSpec

if TYPE_CHECKING:  # annotations only: imported here, numpy loaded one call deeper and `pe-cli
    # generate` took 40 ms longer on CPython 3.11 (measured; its frame stack, not more work)
    from .analysis.distance import Distance


def console(stderr: bool = False):
    """rich's console; with NO_COLOR set, plain text (rich alone would still embolden)."""
    import os

    from rich.console import Console

    plain = {"color_system": None} if os.environ.get("NO_COLOR") else {}
    return Console(file=sys.stderr if stderr else sys.stdout, highlight=False, emoji=False, **plain)


def _number(value: float, dtype: str) -> str:
    """The shortest decimal that reads back to the same value of the table's dtype."""
    import numpy as np

    width = {"float64": np.float64, "float16": np.float16}.get(dtype, np.float32)
    return str(width(value))


def summary(
    spec: TableSpec, facts: Summary, seconds: float, device: str, library: Distance | None = None
) -> None:
    """The short report `pe-cli generate` prints when it writes no data; `library`: how far
    the library's table the options name is from this one."""
    from rich.table import Table
    from rich.text import Text

    out = console()
    params = Table.grid(padding=(0, 2))
    params.add_column(style="bold", no_wrap=True)
    params.add_column(overflow="fold")
    variant = find_variant(spec)
    rows = [
        ("shape", " x ".join(map(str, spec.dims)) + f"  ({spec.shape}, {gib(spec.nbytes)})"),
        ("dtype", spec.dtype),
        ("device", device),
        ("variant", spec.variant if variant is None else variant.label(spec)),
        *FAMILIES[spec.family].settings(spec),
    ]
    rows += [
        ("time", f"{seconds * 1000:.1f} ms"),
        (
            "min / max",
            f"{_number(facts.minimum, spec.dtype)} / {_number(facts.maximum, spec.dtype)}",
        ),
        ("sha256", f"{facts.sha256}\n(raw little-endian bytes, as --format raw writes)"),
    ]
    if library is not None:
        rows.append((library.library, distance(library)))
    for key, value in rows:
        params.add_row(key, Text(value))  # as written: a path or range is not markup
    out.print(params)
    out.print()
    out.print(_corners(spec, facts))


def row_label(spec: TableSpec | None):
    """Row index -> its label: the position, or what the family calls its rows."""
    return str if spec is None else FAMILIES[spec.family].row_label(spec)


def _corners(spec: TableSpec, facts: Summary):
    from rich.table import Table

    # as many leading columns as fit beside the position and the last column (13 characters each)
    shown = min(spec.cols, 4, max(1, (console().width - 9) // 13 - 1))
    table = Table(title="corner values", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("position", justify="right", style="bold")
    for j in range(shown):
        table.add_column(f"d{j}", justify="right")
    if spec.cols > shown:
        table.add_column(f"… d{spec.cols - 1}", justify="right")
    label = row_label(spec)

    def add(rows, first):
        for i, row in enumerate(rows):
            cells = [_number(v, spec.dtype) for v in row[:shown]]
            if spec.cols > shown:
                cells.append(_number(row[-1], spec.dtype))
            table.add_row(label(first + i), *cells)

    add(facts.head, 0)
    if spec.rows > len(facts.head):
        tail = facts.tail[max(len(facts.head) - spec.rows, -len(facts.tail)) :]
        if spec.rows > len(facts.head) + len(tail):
            table.add_row("…", *["…"] * (len(table.columns) - 1))
        add(tail, spec.rows - len(tail))
    return table


class _NoProgress:
    def __enter__(self):
        return lambda nbytes: None

    def __exit__(self, *exc):
        return False


PROGRESS_MIN_BYTES = 64 * 2**20


def progress(label: str, total: int):
    """A context giving advance(nbytes): a bar with rate and time left on stderr, when stderr
    is a terminal and the job is large enough to wait for; otherwise nothing."""
    if total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return _NoProgress()
    from contextlib import contextmanager

    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    @contextmanager
    def bar():
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(binary_units=True),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=console(stderr=True),
            transient=True,
        ) as shown:
            task = shown.add_task(label, total=total)
            yield lambda nbytes: shown.advance(task, nbytes)

    return bar()


def wrote(written, specs: dict[str, TableSpec]) -> None:
    """One line on stderr, so that stdout stays free for data."""
    tables = ", ".join(
        (f"{name}: " if len(specs) > 1 else "")
        + f"{' x '.join(map(str, spec.dims))} {spec.dtype} {spec.variant}/{spec.convention}"
        for name, spec in specs.items()
    )
    print(f"wrote {written.destination} ({gib(written.nbytes)}): {tables}", file=sys.stderr)


def distance(found: Distance) -> str:
    """How far a library's table is from the exact one, in one sentence."""
    flag = f"--variant {found.variant}"
    if found.refusal is not None:
        return f"its table ({flag}) was not measured against this one: {found.refusal}"
    if found.first:
        label = row_label(found.spec)
        where = (
            f"positions {label(found.first)} .. {label(found.stop - 1)}, the table's last "
            f"{found.stop - found.first} rows"
        )
    else:
        where = "the whole table"
    several = len(found.differences) > 1
    if found.max_abs == 0:
        tables = "its tables are these" if several else "its table is this one"
        return f"{tables} bit for bit ({flag}; over {where})"
    if several:
        each = ", ".join(f"{d.max_abs:.3g} ({name})" for name, d in found.differences.items())
        return (
            f"its tables ({flag}) differ from these by up to {each}: max |difference| over {where}"
        )
    return (
        f"its table ({flag}) differs from this one by up to {found.max_abs:.3g}: "
        f"max |difference| over {where}"
    )


def library_line(found: Distance | None) -> None:
    """The distance from the library's table, on stderr after a write."""
    if found is not None:
        print(f"{found.library}: {distance(found)}", file=sys.stderr)


def notes(lines: list[str]) -> None:
    """What pe-cli decided on the user's behalf, one line each on stderr."""
    for line in lines:
        print(line, file=sys.stderr)


def plotted(destination: str, fmt: str, kind: str) -> None:
    """One line on stderr for a figure written."""
    print(f"wrote {destination} ({fmt}): {kind}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# show


def window(table, rows: slice, cols: slice | None, label, title: str) -> None:
    """A slice of the table (analysis.tables.Source: only these rows are read) with position
    and dimension labels. Numbers are never cut short: without --cols as many columns as fit
    are shown; asked-for columns are printed in full."""
    from rich.table import Table

    out = console()
    positions = range(table.rows)[rows]
    dims = range(table.cols)[cols or slice(None)]
    shown = sorted(set(positions))
    values = dict(zip(shown, table.at(shown)))
    cells = {i: [_number(values[i][j], table.dtype) for j in dims] for i in positions}
    longest = max((len(c) for row in cells.values() for c in row), default=4)
    cell = max(longest, 4) + 3
    names = {i: label(i) for i in positions}
    label_width = max([len("position"), *map(len, names.values())]) + 1
    if cols is None:
        dims = dims[: max(1, (out.width - label_width) // cell)]
    out.width = max(out.width, label_width + cell * len(dims))
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("position", justify="right", style="bold", no_wrap=True)
    for j in dims:
        table.add_column(f"d{j}", justify="right", no_wrap=True)
    for i in positions:
        table.add_row(names[i], *cells[i][: len(dims)])
    out.print(table)


# coolwarm's ends and middle: blue for -1, grey for 0, red for +1
_COLD, _MIDDLE, _WARM = (59, 76, 192), (221, 221, 221), (180, 4, 38)
_RAMP = " .:-=+*#%@"


def _colour(t: float) -> str:
    """t in [0, 1] → 'rgb(r,g,b)' on a blue-grey-red scale."""
    low, high, u = (_COLD, _MIDDLE, t * 2) if t < 0.5 else (_MIDDLE, _WARM, t * 2 - 1)
    r, g, b = (round(a + (c - a) * u) for a, c in zip(low, high))
    return f"rgb({r},{g},{b})"


def heatmap(table, low: float, high: float, first_position: int, title: str) -> None:
    """The whole table (analysis.tables.Source: only the rows drawn are read), sampled down
    to the terminal, colour for value from `low` to `high` (text without colour)."""
    import numpy as np
    from rich.text import Text

    out = console()
    colour = out.color_system is not None
    rows, d = table.rows, table.cols
    width = max(8, min(d, out.width - 2))
    lines = max(4, min((out.height or 24) - 6, 48))
    height = min(rows, lines * (2 if colour else 1))
    row_index = np.linspace(0, rows - 1, height).round().astype(int)
    col_index = np.linspace(0, d - 1, width).round().astype(int)
    drawn, where = np.unique(row_index, return_inverse=True)
    sample = table.at(drawn)[where][:, col_index]
    scaled = (sample - low) / (high - low) if high > low else np.full(sample.shape, 0.5)
    out.print(
        f"{title}: positions {first_position}..{first_position + rows - 1} down, "
        f"dimensions 0..{d - 1} across ({height} x {width} samples)",
        highlight=False,
    )
    text = Text()
    if colour:
        for r in range(0, height, 2):
            for c in range(width):
                top = _colour(scaled[r, c])
                bottom = _colour(scaled[r + 1, c]) if r + 1 < height else "default"
                text.append("▀", style=f"{top} on {bottom}")
            text.append("\n")
        legend = Text(f"{low:+.3g} ")
        for k in range(24):
            legend.append("█", style=_colour(k / 23))
        legend.append(f" {high:+.3g}")
    else:
        for r in range(height):
            text.append("".join(_RAMP[min(9, int(v * 10))] for v in scaled[r]) + "\n")
        legend = Text(f"scale: '{_RAMP}' from {low:+.3g} to {high:+.3g}")
    out.print(text, end="")
    out.print(legend)


def facts(report: dict) -> None:
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("shape", " x ".join(map(str, report["shape"])))
    grid.add_row("dtype", report["dtype"])
    if "positions" in report:
        grid.add_row("positions", f"{report['positions'][0]} .. {report['positions'][1]}")
    grid.add_row(
        "min / max / mean", f"{report['min']:.9g} / {report['max']:.9g} / {report['mean']:.6g}"
    )
    norms = report["row_norms"]
    line = f"{norms['min']:.9g} .. {norms['max']:.9g}"
    if "expected" in norms:
        line += (
            f"  (expected sqrt(d/2) = {norms['expected']:.9g}; largest deviation "
            f"{norms['max_deviation']:.3g}, {norms['rows_off_by_1e-3']} rows off by > 1e-3)"
        )
    if norms["zero_rows"]:
        line += f"; all-zero rows: {', '.join(map(str, norms['zero_rows']))}"
    grid.add_row("row norms", line)
    if "attention_factor" in report:
        grid.add_row("attention factor", f"{report['attention_factor']:.9g}")
    out = console()
    out.print(grid)
    if report.get("frequencies"):
        listed = "columns" in report["frequencies"][0]
        table = Table(title="frequencies", title_justify="left", show_edge=False, pad_edge=False)
        heads = ("i", "columns") if listed else ("i", "sin col", "cos col")
        for name in (*heads, "frequency w_i", "wavelength 2π/w_i"):
            table.add_column(name, justify="right")
        shown = report["frequencies"]
        if len(shown) > 8:
            shown = shown[:5] + [None] + shown[-2:]
        for f in shown:
            if f is None:
                table.add_row(*["…"] * len(table.columns))
                continue
            if listed:
                columns = f["columns"]
                where = [
                    ", ".join(f"{k} {v}" for k, v in columns.items())
                    if isinstance(columns, dict)
                    else ", ".join(map(str, columns))
                ]
            else:
                where = [
                    str(f["sin_column"]),
                    "-" if f["cos_column"] is None else str(f["cos_column"]),
                ]
            wavelength = (
                "none (not rotated)" if f["wavelength"] is None else f"{f['wavelength']:.6g}"
            )
            table.add_row(str(f["index"]), *where, f"{f['frequency']:.9g}", wavelength)
        out.print()
        out.print(table)


def as_json(payload) -> None:
    import json

    sys.stdout.write(json.dumps(payload, indent=2, default=_jsonable) + "\n")


def _jsonable(value):
    import dataclasses

    import numpy as np

    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# ---------------------------------------------------------------------------------------------
# compare


def _e(value: float) -> str:
    return f"{value:.3g}"


def _within(difference) -> str:
    return "" if difference.within is None else ("yes" if difference.within else "NO")


def audit(result) -> None:
    """A family's formulas (the seed recipes; libraries and precision recipes) against the exact
    table, worst first, and their error by position band."""
    from rich.table import Table

    rows = result.rows
    threshold = rows[0][1].threshold if rows else 0.0
    table = Table(title=result.title, title_justify="left", show_edge=False, pad_edge=False)
    for name in (
        "variant",
        "max |err|",
        "mean |err|",
        "RMS",
        f"max ulp ({result.ulps})",
        "worst at (p, d)",
        f"first p with |err| > {threshold:g}",
    ):
        table.add_column(name, justify="right" if name != "variant" else "left", overflow="fold")
    tolerance = any(d.within is not None for _, d in rows)
    if tolerance:
        table.add_column("within tol", justify="right")
    for name, d in rows:
        cells = [
            name,
            _e(d.max_abs),
            _e(d.mean_abs),
            _e(d.rms),
            f"{d.max_ulps:.4g}",
            f"({d.worst[0]}, {d.worst[1]})",
            "-" if d.first_over is None else str(d.first_over),
        ]
        table.add_row(*cells, *([_within(d)] if tolerance else []))
    out = console()
    out.print(table)
    out.print()
    bands = Table(
        title="max |err| by position band", title_justify="left", show_edge=False, pad_edge=False
    )
    bands.add_column("variant", overflow="fold")
    for _, stop, _ in rows[0][1].bands if rows else []:
        bands.add_column(f"p<{stop}", justify="right", overflow="fold")
    for name, d in rows:
        bands.add_row(name, *(_e(m) for _, _, m in d.bands))
    out.print(bands)


def comparison(result) -> None:
    from rich.table import Table

    d = result.difference
    out = console()
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("A", f"{result.a.label} ({result.a.dtype})")
    grid.add_row("B", f"{result.b.label} ({result.b.dtype})")
    if d.identical:
        verdict = "bit-identical"
    elif d.max_ulps <= 1:
        verdict = f"equal within {d.max_ulps:.3g} ulp of {d.dtype}"
    else:
        verdict = f"differ: max {d.max_ulps:.4g} ulp of {d.dtype}"
    grid.add_row("verdict", verdict)
    grid.add_row("max |A-B|", f"{_e(d.max_abs)} at position {d.worst[0]}, dimension {d.worst[1]}")
    grid.add_row("mean / RMS", f"{_e(d.mean_abs)} / {_e(d.rms)}")
    grid.add_row("elements", f"{d.differing} of {d.size} not bit-equal")
    grid.add_row("error growth", "  ".join(f"{a}..{b - 1}: {_e(m)}" for a, b, m in d.bands))
    grid.add_row(f"first p > {d.threshold:g}", "-" if d.first_over is None else str(d.first_over))
    if d.within is not None:
        grid.add_row("within tolerance", _within(d))
    out.print(grid)
    for finding in result.findings:
        out.print(f"- {finding}", highlight=False, markup=False)


def identification(result) -> None:
    from rich.table import Table

    target, candidates = result.target, result.candidates
    out = console()
    if not candidates:
        why = (
            "; ".join(target.notes) or "its columns are not sin/cos pairs turning at a steady rate"
        )
        out.print(
            f"{target.label}: no built-in convention explains this table ({why})",
            highlight=False,
            markup=False,
        )
        return
    best = candidates[0]
    d = best.difference
    spec = best.spec
    where = FAMILIES[spec.family].identity(spec)
    if best.identical:
        how = f"bit for bit ({target.dtype})"
    else:
        how = f"within {d.max_ulps:.3g} ulp of {target.dtype} (max |err| {_e(d.max_abs)})"
    ties = list(
        dict.fromkeys(
            c.name
            for c in candidates[1:]
            if c.identical == best.identical
            and c.difference.max_abs == d.max_abs
            and c.name != best.name
        )
    )
    also = f" (the same table as {', '.join(ties)})" if ties else ""
    for note in target.notes:
        out.print(f"- {note}", highlight=False, markup=False)
    if result.explained:
        out.print(
            f"{target.label}: matches {best.name}{also}, {where}, {how}",
            highlight=False,
            markup=False,
        )
    else:
        out.print(
            f"{target.label}: no built-in convention explains this table; the nearest is {best.name}, "
            f"{where}, off by {d.max_ulps:.3g} ulp of {target.dtype} (max |err| {_e(d.max_abs)}), more "
            f"than {target.dtype} arithmetic makes at these positions",
            highlight=False,
            markup=False,
        )
    if best.source:
        out.print(f"  ({best.source})", highlight=False, markup=False)
    table = Table(title="candidates", title_justify="left", show_edge=False, pad_edge=False)
    for name in (
        "convention / variant",
        "base",
        "offset",
        "bit-identical",
        "max |err|",
        f"max ulp ({target.dtype})",
    ):
        table.add_column(
            name, justify="left" if name.startswith("conv") else "right", overflow="fold"
        )
    for c in candidates:
        table.add_row(
            c.name,
            f"{c.spec.base:g}",
            str(c.spec.offset),
            "yes" if c.identical else "on the sample" if c.difference.identical else "no",
            _e(c.difference.max_abs),
            f"{c.difference.max_ulps:.4g}",
        )
    out.print(table)


def result(found) -> None:
    """A compare result, whichever mode made it."""
    from .analysis.compare import Audit, Comparison

    if isinstance(found, Audit):
        audit(found)
    elif isinstance(found, Comparison):
        comparison(found)
    else:
        identification(found)
