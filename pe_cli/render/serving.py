"""What `show --precision DTYPE` prints: a table served in DTYPE, band by band, and what it
comes to in words. The table helpers are the package's."""

from __future__ import annotations

from . import Column, console, tabulate


def _g(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def serving(found, title: str | None = None) -> None:
    """One table's view: by position band, the positions the dtype keeps apart, the drift of an
    inv_freq held in it, the error of a cos/sin cache held in it and of the library's float32
    angles; then the largest drift, where it passes 0.1 rad and a quarter turn, and the verdict."""
    out = console()
    dtype, p, drift = found.dtype, found.positions, found.drift
    library = found.angles is not None
    columns = [
        Column("positions", justify="left"),
        Column("distinct", keep=2),
        Column("as one", keep=3),
        Column("inv_freq drift", keep=5),
        Column("cache error", keep=4),
        *([Column("fp32 angles", keep=1)] if library else []),
    ]
    rows = [
        [
            f"{b.first} .. {b.stop - 1}",
            f"{b.distinct}",
            f"{100 * b.merged:.4g}%",
            _g(drift.bands[k]),
            _g(found.cache[k]),
            *([_g(found.angles[k])] if library else []),
        ]
        for k, b in enumerate(p.bands)
    ]
    tabulate(columns, rows, title or f"served in {dtype}", "--json has them", out)
    said = [
        "distinct, as one: the values positions are held as; neighbours held as one",
        f"inv_freq drift: p |w~ - w| in rad, w~ = w held in {dtype}, wrapped to [0, pi]",
        f"cache error: |cos, sin held in {dtype} - exact|",
        *([f"fp32 angles: |{found.library_own} float32 angle - p w| in rad"] if library else []),
    ]
    passes = drift.passes
    if passes["0.1"] is not None:
        said += [
            f"largest drift {drift.max:.4g} rad: frequency {drift.index} ({drift.frequency:.9g} "
            f"held as {drift.held:.9g}), position {drift.position:,}",
            f"the drift passes 0.1 rad at position {passes['0.1']:,} and a quarter turn at "
            f"{passes['pi/2']:,}",
        ]
    for line in said:
        _print(out, line, "", "  ")
    for line in found.verdict:
        _print(out, line, "- ", "  ")


def _print(out, line: str, first: str, rest: str) -> None:
    """A line wrapped at the terminal's width, its continuations indented."""
    import textwrap

    text = textwrap.fill(line, out.width, initial_indent=first, subsequent_indent=rest)
    out.print(text, highlight=False, markup=False, soft_wrap=True)
