"""The one renderer: what pe-cli shows a person, with rich.

Colour and styles follow rich's own rules: none when the stream is not a terminal or when
NO_COLOR is set.
"""

from __future__ import annotations

import sys

from .engine import gib
from .metrics import Summary
from .spec import TableSpec


def console(stderr: bool = False):
    from rich.console import Console

    return Console(file=sys.stderr if stderr else sys.stdout, highlight=False)


def _number(value: float, dtype: str) -> str:
    """The shortest decimal that reads back to the same value of the table's dtype."""
    import numpy as np

    width = {"float64": np.float64, "float16": np.float16}.get(dtype, np.float32)
    return str(width(value))


def summary(spec: TableSpec, facts: Summary, seconds: float, device: str) -> None:
    """The short report `pe-cli generate` prints when it writes no data."""
    from rich.table import Table

    out = console()
    params = Table.grid(padding=(0, 2))
    params.add_column(style="bold")
    params.add_column()
    variant = spec.variant
    if spec.variant != "exact":
        variant += f" (computed in {spec.compute_dtype or 'float32'})"
    rows = [
        ("shape", " x ".join(map(str, spec.dims)) + f"  ({spec.shape}, {gib(spec.nbytes)})"),
        ("dtype", spec.dtype),
        ("device", device),
        ("variant", variant),
        ("convention", spec.convention),
        ("base", f"{spec.base:g}"),
        ("positions", f"{spec.offset} .. {spec.last_position}"),
    ]
    if spec.padding_idx is not None:
        rows.append(("padding row", f"position {spec.padding_idx} (all zeros)"))
    rows += [
        ("time", f"{seconds * 1000:.1f} ms"),
        ("min / max", f"{_number(facts.minimum, spec.dtype)} / {_number(facts.maximum, spec.dtype)}"),
        ("sha256", f"{facts.sha256}  (raw little-endian bytes, as --format raw writes)"),
    ]
    for key, value in rows:
        params.add_row(key, value)
    out.print(params)
    out.print()
    out.print(_corners(spec, facts))


def _corners(spec: TableSpec, facts: Summary):
    from rich.table import Table

    shown = min(spec.d_model, 4)
    table = Table(title="corner values", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("position", justify="right", style="bold")
    for j in range(shown):
        table.add_column(f"d{j}", justify="right")
    if spec.d_model > shown:
        table.add_column(f"… d{spec.d_model - 1}", justify="right")

    def add(rows, first_position):
        for i, row in enumerate(rows):
            cells = [_number(v, spec.dtype) for v in row[:shown]]
            if spec.d_model > shown:
                cells.append(_number(row[-1], spec.dtype))
            table.add_row(str(first_position + i), *cells)

    add(facts.head, spec.offset)
    if spec.seq_len > len(facts.head):
        tail = facts.tail[max(len(facts.head) - spec.seq_len, -len(facts.tail)) :]
        if spec.seq_len > len(facts.head) + len(tail):
            table.add_row("…", *["…"] * (len(table.columns) - 1))
        add(tail, spec.last_position - len(tail) + 1)
    return table


def wrote(written, specs: dict[str, TableSpec]) -> None:
    """One line per written table on stderr, so stdout stays free for data."""
    for name, spec in specs.items():
        facts = written.summaries[name]
        label = f"{written.destination}" + (f" [{name}]" if len(specs) > 1 else "")
        print(
            f"wrote {label}: {' x '.join(map(str, spec.dims))} {spec.dtype}, "
            f"{spec.variant}/{spec.convention}, sha256 {facts.sha256[:16]}",
            file=sys.stderr,
        )
