"""The one renderer: what pe-cli shows a person, with rich: summaries, windows, heatmaps,
facts, comparisons, identifications, the progress bar and JSON.

Colour and styles follow rich's own rules: none when the stream is not a terminal or when
NO_COLOR is set. Every table goes through `table()`: a number is never cut, folded or
shortened; where a table is wider than the terminal its least useful columns are left out
(with one line saying which, and where to see them), and only then is it printed in parts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.metrics import Summary
from ..core.limits import human_size
from ..families import FAMILIES, find_variant
from ..spec import TableSpec

if TYPE_CHECKING:  # annotations only: imported here, numpy loaded one call deeper and `pe-cli
    # generate` took 40 ms longer on CPython 3.11 (measured; its frame stack, not more work)
    from ..analysis.distance import Distance

# spaces before a line's end (and before the escape codes closing its styles there)
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)(?=\n)")


class _Trimmed:
    """A text stream that drops the spaces rich pads lines with (a grid's cells, a table's
    title): no line pe-cli prints ends in spaces."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(_TRAILING.sub(r"\1", text))

    def __getattr__(self, name):  # isatty, fileno, flush, encoding: the stream's own
        return getattr(self._stream, name)


def console(stderr: bool = False, trim: bool = True):
    """rich's console; with NO_COLOR set, plain text (rich alone would still embolden).
    `trim`: drop trailing spaces (not for a picture whose spaces are its lowest values)."""
    import os

    from rich.console import Console

    plain = {"color_system": None} if os.environ.get("NO_COLOR") else {}
    stream = sys.stderr if stderr else sys.stdout
    return Console(file=_Trimmed(stream) if trim else stream, highlight=False, emoji=False, **plain)


# ---------------------------------------------------------------------------------------------
# tables


@dataclass(frozen=True)
class Column:
    """A column of a terminal table. Cells of `words` columns (names) break at spaces only;
    the others (numbers) never break. `keep`: how much the column is worth where the table is
    too wide (the lowest is left out first; None: never left out)."""

    header: str
    justify: str = "right"
    words: bool = False
    keep: float | None = None
    style: str = ""


_GAP = 3  # " │ " between two columns


def _words(text: str) -> list[str]:
    return text.split() or [""]


def _least(column: Column, cells: Sequence[str]) -> int:
    """The narrowest the column can be: its longest word (a number is one word, whole)."""
    from rich.cells import cell_len

    header = max(cell_len(w) for w in _words(column.header))
    if column.words:
        return max([header, *(cell_len(w) for c in cells for w in _words(c))])
    return max([header, *(cell_len(c) for c in cells)])


def _fits(columns, least, width: int) -> bool:
    return sum(least[k] for k in columns) + _GAP * (len(columns) - 1) <= width


def _ranges(names: list[str]) -> str:
    """'d4', 'd5', 'd6', 'd9' -> 'd4..d6; d9': runs of three dimensions or more in short."""
    parts: list = []  # a name, or [first, last] of a run of dimensions
    for name in names:
        found = re.fullmatch(r"d(\d+)", name)
        if found and parts and isinstance(parts[-1], list) and int(found[1]) == parts[-1][1] + 1:
            parts[-1][1] += 1
        else:
            parts.append([int(found[1])] * 2 if found else name)
    short = []
    for part in parts:
        if isinstance(part, str):
            short.append(part)
        elif part[1] - part[0] >= 2:
            short.append(f"d{part[0]}..d{part[1]}")
        else:
            short += [f"d{j}" for j in range(part[0], part[1] + 1)]
    return "; ".join(short)  # a header may hold a comma: "worst at (p, d)"


def tabulate(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    title: str | None = None,
    more: str = "--json has them",
    out=None,
    omitted: Sequence[str] = (),
) -> None:
    """Print a table whose every cell is whole. Where it is wider than the terminal, columns
    are left out, the lowest `keep` first (then the rightmost), and one line names them and
    `more` (where to see them); where the columns that are never left out still do not fit,
    the table is printed in parts, each with the first column. `omitted`: headers of columns
    the caller left out already (they could never fit), named in that line too."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    out = out or console()
    width = out.width
    cells = [[row[k] for row in rows] for k in range(len(columns))]
    least = [_least(c, cells[k]) for k, c in enumerate(columns)]
    body = [max([least[k], *map(cell_len, cells[k])]) for k in range(len(columns))]
    natural = [max(body[k], cell_len(c.header)) for k, c in enumerate(columns)]
    shown = list(range(len(columns)))
    while not _fits(shown, least, width):
        optional = [k for k in shown if columns[k].keep is not None]
        if not optional:
            break
        shown.remove(min(reversed(optional), key=lambda k: columns[k].keep))
    left_out = [columns[k].header for k in range(len(columns)) if k not in shown]
    left_out += omitted
    parts = [shown]
    if not _fits(shown, least, width):  # in parts: the first column, and what fits beside it
        parts, part = [], [shown[0]]
        for k in shown[1:]:
            if len(part) > 1 and not _fits([*part, k], least, width):
                parts.append(part)
                part = [shown[0]]
            part.append(k)
        parts.append(part)
    for number, part in enumerate(parts):
        widths = {k: least[k] for k in part}
        room = width - sum(widths.values()) - _GAP * (len(part) - 1)
        for wanted in (body, natural):  # the room left: cells on one line, then the headers
            for k in sorted(part, key=lambda k: wanted[k] - widths[k]):  # the cheapest first
                grow = max(0, min(room, wanted[k] - widths[k]))
                widths[k] += grow
                room -= grow
        heading = title if number == 0 else f"{title} (continued)" if title else None
        drawn = Table(
            title=None if heading is None else Text(heading),
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        for k in part:
            drawn.add_column(
                Text(columns[k].header),
                justify=columns[k].justify,
                style=columns[k].style,
                width=widths[k],
                overflow="fold",  # never for a number: its column is as wide as the widest
            )
        for row in rows:
            drawn.add_row(*(Text(row[k]) for k in part))  # as written: never markup
        if number:
            out.print()
        out.print(drawn)
    if left_out:
        out.print(
            f"left out at width {width}: {_ranges(left_out)} ({more})",
            markup=False,
            highlight=False,
        )


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
        ("shape", " x ".join(map(str, spec.dims)) + f"  ({spec.shape}, {human_size(spec.nbytes)})"),
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
    _corners(spec, facts, out)


def row_label(spec: TableSpec | None):
    """Row index -> its label: the position, or what the family calls its rows."""
    return str if spec is None else FAMILIES[spec.family].row_label(spec)


CORNER_COLUMNS = 4  # leading columns the corner values show, beside the last


def _corners(spec: TableSpec, facts: Summary, out) -> None:
    """The first and last rows' first columns and last column; the columns that do not fit
    are left out, the last leading ones first."""
    shown = min(spec.cols, CORNER_COLUMNS)
    columns = [Column("position", style="bold")]
    columns += [Column(f"d{j}", keep=CORNER_COLUMNS - j) for j in range(shown)]
    if spec.cols > shown:
        columns.append(Column(f"… d{spec.cols - 1}", keep=CORNER_COLUMNS + 1))
    label = row_label(spec)
    rows = []

    def add(values, first):
        for i, row in enumerate(values):
            cells = [_number(v, spec.dtype) for v in row[:shown]]
            if spec.cols > shown:
                cells.append(_number(row[-1], spec.dtype))
            rows.append([label(first + i), *cells])

    add(facts.head, 0)
    if spec.rows > len(facts.head):
        tail = facts.tail[max(len(facts.head) - spec.rows, -len(facts.tail)) :]
        if spec.rows > len(facts.head) + len(tail):
            rows.append(["…"] * len(columns))
        add(tail, spec.rows - len(tail))
    tabulate(columns, rows, "corner values", "show --cols prints them", out)


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
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        """Bytes a second in binary units, as the sizes beside it (rich's own is decimal)."""

        def render(self, task):
            speed = task.finished_speed or task.speed
            return Text("?" if speed is None else f"{human_size(speed)}/s", "progress.data.speed")

    @contextmanager
    def bar():
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(binary_units=True),
            Rate(),
            TimeRemainingColumn(),
            console=console(stderr=True, trim=False),  # a live display, redrawn in place
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
    print(f"wrote {written.destination} ({human_size(written.nbytes)}): {tables}", file=sys.stderr)


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
    and dimension labels. Without --cols the columns that fit are shown, and a line says
    which are left out; columns asked for are all shown (in parts where they do not fit)."""
    out = console()
    positions = range(table.rows)[rows]
    dims = range(table.cols)[cols or slice(None)]
    if cols is None:  # at most as many as could fit: a column is at least " │ " and a digit
        dims = dims[: max(1, out.width // 4)]
    shown = sorted(set(positions))
    values = dict(zip(shown, table.at(shown)))
    columns = [Column("position", style="bold")]  # without --cols, the last are left out first
    columns += [Column(f"d{j}", keep=None if cols is not None else -j) for j in dims]
    rows_shown = [
        [label(i), *(_number(values[i][j], table.dtype) for j in dims)] for i in positions
    ]
    never = [f"d{j}" for j in range(dims[-1] + 1, table.cols)] if cols is None else []
    tabulate(columns, rows_shown, title, "--cols START:STOP picks them", out, never)


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

    out = console(trim=False)  # in plain text a space is a value: the ramp's lowest
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
    words = console()  # the title and legend wrap at spaces: those are trimmed
    words.print(
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
    words.print(legend)


def facts(report: dict, lines: list[tuple[str, str]] = ()) -> None:
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
        why = f", assuming {norms['assumed']}" if "assumed" in norms else f" for {norms['because']}"
        rounding = f"more than {report['dtype']} rounding ({norms['tolerance']:.2g})"
        off = (
            f"none off by {rounding}"
            if not norms["rows_off"]
            else f"{norms['rows_off']} row{'s' * (norms['rows_off'] > 1)} off by {rounding}"
        )
        line += (
            f"  (expected {norms['formula']} = {norms['expected']:.9g}{why}; "
            f"largest deviation {norms['max_deviation']:.3g}, {off})"
        )
    if norms["zero_rows"]:
        line += f"; all-zero rows: {', '.join(map(str, norms['zero_rows']))}"
    grid.add_row("row norms", line)
    if "attention_factor" in report:
        grid.add_row("attention factor", repr(float(report["attention_factor"])))
    for label, text in lines:
        grid.add_row(label, text)
    out = console()
    out.print(grid)
    if report.get("frequencies"):
        out.print()
        _frequencies(report["frequencies"], out)


def _frequencies(found: list[dict], out) -> None:
    listed = "columns" in found[0]
    columns = [Column("i")]
    if listed:
        columns.append(Column("columns", words=True, keep=2))
    else:
        columns += [Column("sin col", keep=2), Column("cos col", keep=2)]
    columns += [Column("frequency w_i", keep=3), Column("wavelength 2π/w_i", keep=1)]
    shown = found if len(found) <= 8 else [*found[:5], None, *found[-2:]]
    rows = []
    for f in shown:
        if f is None:
            rows.append(["…"] * len(columns))
            continue
        if listed:
            where = f["columns"]
            where = [
                ", ".join(f"{k} {v}" for k, v in where.items())
                if isinstance(where, dict)
                else ", ".join(map(str, where))
            ]
        else:
            where = [str(f["sin_column"]), "-" if f["cos_column"] is None else str(f["cos_column"])]
        wavelength = "none (not rotated)" if f["wavelength"] is None else f"{f['wavelength']:.6g}"
        rows.append([str(f["index"]), *where, f"{f['frequency']:.9g}", wavelength])
    tabulate(columns, rows, "frequencies", "--json has them", out)


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


def _ulps(d) -> str:
    """A Difference's largest error in ulps at the values' size, where counting it in ulps
    says something ("-" for a difference as large as the values)."""
    return f"{d.max_ulps:.4g}" if d.counted_in_ulps else "-"


def _e(value: float) -> str:
    return f"{value:.3g}"


def _within(difference) -> str:
    return "" if difference.within is None else ("yes" if difference.within else "NO")


def audit(result) -> None:
    """A family's formulas (the seed recipes; libraries and precision recipes) against the exact
    table, worst first, and their error by position band."""
    rows = result.rows
    threshold = rows[0][1].threshold if rows else 0.0
    # each column and its cell of a Difference, in one place; `keep`: what is left out first
    # where the terminal is narrow (RMS, then mean, then where the worst error is)
    figures: list[tuple[Column, Callable]] = [
        (Column("max |err|", keep=9), lambda d: _e(d.max_abs)),
        (Column("mean |err|", keep=2), lambda d: _e(d.mean_abs)),
        (Column("RMS", keep=1), lambda d: _e(d.rms)),
        (Column(f"max ulp ({result.ulps})", keep=5), _ulps),
        (Column("worst at (p, d)", keep=3), lambda d: f"({d.worst[0]}, {d.worst[1]})"),
        (
            Column(f"first p with |err| > {threshold:g}", keep=6),
            lambda d: "-" if d.first_over is None else str(d.first_over),
        ),
    ]
    if any(d.within is not None for _, d in rows):
        figures.append((Column("within tol", keep=10), _within))
    out = console()
    tabulate(
        [Column("variant", justify="left", words=True), *(c for c, _ in figures)],
        [[name, *(cell(d) for _, cell in figures)] for name, d in rows],
        result.title,
        "--json has them",
        out,
    )
    out.print()
    bands = rows[0][1].bands if rows else []
    tabulate(
        # the first bands are left out first: the last shows the error at the longest positions
        [Column("variant", justify="left", words=True)]
        + [Column(f"p<{stop}", keep=k) for k, (_, stop, _) in enumerate(bands)],
        [[name, *(_e(m) for _, _, m in d.bands)] for name, d in rows],
        "max |err| by position band",
        "--json has them",
        out,
    )


def comparison(result) -> None:
    """compare A B: the verdict, where the tables agree, how the difference grows, the
    figures, then what explains the difference and how the tables were read."""
    from rich.table import Table
    from rich.text import Text

    d = result.difference
    out = console()
    labels = ("A", "B", "verdict", "where", "growth", "mean / RMS", "by position", "tolerance")
    width = max(20, out.width - max(map(len, labels)) - 2)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    rows = [
        ("A", f"{result.a.label} ({result.a.dtype})"),
        ("B", f"{result.b.label} ({result.b.dtype})"),
        ("verdict", result.verdict),
        *(("where" if k == 0 else "", line) for k, line in enumerate(result.where)),
    ]
    if result.growth:
        rows.append(("growth", result.growth))
    if not d.identical:
        rows.append(("mean / RMS", f"{_e(d.mean_abs)} / {_e(d.rms)}"))
        # each band's figure stays beside its label: the line is packed here, not by rich
        bands = [f"p<{b}: {_e(m)}" for _, b, m in d.bands]
        rows.append(("by position", _packed(bands, width)))
    if d.within is not None:
        rows.append(("tolerance", "within" if d.within else "outside --atol/--rtol"))
    for key, value in rows:
        grid.add_row(key, Text(value))
    out.print(grid)
    for line in (*result.findings, *result.notes):
        out.print(f"- {line}", highlight=False, markup=False)


def _packed(items: list[str], width: int) -> str:
    """Items joined by two spaces, in lines of at most `width` characters, never split."""
    lines = [""]
    for item in items:
        if lines[-1] and len(lines[-1]) + 2 + len(item) > width:
            lines.append("")
        lines[-1] += ("  " if lines[-1] else "") + item
    return "\n".join(lines)


def _folded(command: str, width: int) -> str:
    """A shell command in lines of at most `width` columns, each but the last ending in ' \\'
    (a word longer than that, such as a list of factors, on a line of its own)."""
    import shlex

    lines, indent, units = [""], "    ", []
    for word in (shlex.quote(w) for w in shlex.split(command)):
        if units and units[-1].startswith("-") and " " not in units[-1] and word[0] != "-":
            units[-1] += " " + word  # an option beside its value
        else:
            units.append(word)
    for word in units:
        if lines[-1] and len(indent + lines[-1] + " " + word + " \\") > width:
            lines.append("")
        lines[-1] += (" " if lines[-1] else "") + word
    return " \\\n".join(indent + line for line in lines)


def identification(result) -> None:

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
    # the claim, the spec and the command are the best candidate's (analysis.identify)
    where = best.identity
    if best.identical:
        how = f"bit for bit ({target.dtype})"
    else:
        how = (
            f"within {_ulps(d)} ulp of {target.dtype} (max |err| {_e(d.max_abs)})"
            if d.counted_in_ulps
            else f"within {_e(d.max_abs)} of its exact values"
        )
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
    broken = result.exceptions
    if broken is not None:  # the table is the candidate but where it was broken
        what, where_broken = next(iter(broken.items()))
        said = what[:-1] if len(where_broken) == 1 else what
        out.print(
            f"{target.label}: {best.name}, {where}, bit for bit ({target.dtype}) except "
            f"{said} {', '.join(map(str, where_broken))} ({d.differing} of its elements differ, "
            f"by up to {_e(d.max_abs)})",
            highlight=False,
            markup=False,
        )
    elif result.explained:
        composed = f"{best.composed} " if best.composed else ""
        out.print(
            f"{target.label}: matches {composed}{best.name}{also}, {where}, {how}",
            highlight=False,
            markup=False,
        )
    else:
        out.print(
            f"{target.label}: no built-in convention explains this table; the nearest is "
            f"{best.name}, {where}, off by up to {_e(d.max_abs)}"
            + (f" ({_ulps(d)} ulp of {target.dtype}; " if d.counted_in_ulps else " (")
            + f"{_e(d.rms)} RMS), more than {target.dtype} arithmetic makes at these positions",
            highlight=False,
            markup=False,
        )
    if best.source:
        out.print(f"  ({best.source})", highlight=False, markup=False)
    if best.identical:  # folded as a shell command, so that it pastes as it is
        # a composed table is not any one command's: the command builds what it is made from
        said = f"{best.composed} the table built by" if best.composed else "rebuilt by"
        out.print(f"  {said}:", highlight=False, markup=False)
        out.print(_folded(best.built_by, out.width), highlight=False, markup=False, soft_wrap=True)
    # bases to as many digits as part two candidates of one name (500000 and 500000.0896)
    digits = next(
        (
            k
            for k in range(6, 18)
            if len({(c.name, f"{c.spec.base:.{k}g}") for c in candidates})
            == len({(c.name, c.spec.base) for c in candidates})
        ),
        17,
    )
    # each column and its cell of a Candidate, in one place; the errors are the file's against
    # the true values of the candidate's named table (the real numbers its formula gives; its
    # exact table is those correctly rounded to a dtype)
    figures: list[tuple[Column, Callable]] = [
        (Column("base", keep=2), lambda c: f"{c.spec.base:.{digits}g}"),
        (Column("offset", keep=3), lambda c: str(c.spec.offset)),
        (
            Column("bit-identical to file", keep=9),
            lambda c: "yes" if c.identical else "on the sample" if c.difference.identical else "no",
        ),
        (Column("max |err| vs true values", keep=8), lambda c: _e(c.difference.max_abs)),
        (
            Column(f"max ulp vs true values ({target.dtype})", keep=5),
            lambda c: _ulps(c.difference),
        ),
    ]
    tabulate(
        [Column("convention / variant", justify="left", words=True), *(c for c, _ in figures)],
        [[c.name, *(cell(c) for _, cell in figures)] for c in candidates],
        "candidates",
        "--json has them",
        out,
    )


def result(found) -> None:
    """A compare result, whichever mode made it."""
    from ..analysis.compare import Audit, Comparison

    if isinstance(found, Audit):
        audit(found)
    elif isinstance(found, Comparison):
        comparison(found)
    else:
        identification(found)
