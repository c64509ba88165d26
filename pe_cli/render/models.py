"""What `compare` prints about one model rather than one table: the model's table in every
engine (compare --rope-config CFG), and a GGUF's rope parameters against its config's
(compare GGUF CONFIG). The table helpers are the package's."""

from __future__ import annotations

from collections.abc import Callable

from ..core.dtypes import FORMATS
from . import Column, _e, console, tabulate


def engines(view) -> None:
    """One model in every engine: each one's distance from exact and from transformers, its
    error by position band, and the verdict of what differs."""
    share = lambda x: "-" if x is None else f"{100 * x:.4g}%"  # noqa: E731
    hf = lambda r: r.transformers  # noqa: E731
    figures: list[tuple[Column, Callable]] = [
        (Column("max |err| vs true values", keep=9), lambda r: _e(r.exact.max_abs)),
        (Column("bit-equal to exact", keep=8), lambda r: share(r.equal_exact)),
        (
            Column("max |err| vs transformers", keep=6),
            lambda r: _e(hf(r).max_abs) if hf(r) else "-",
        ),
        (
            Column("bit-equal to transformers", keep=7),
            lambda r: share(1 - hf(r).differing / max(1, hf(r).size) if hf(r) else None),
        ),
        (Column("verdict", keep=10), lambda r: r.verdict.kind),
    ]
    out = console()
    left = [Column(f"{view.who} ({view.dtype})", justify="left", words=True)]
    tabulate(
        left + [c for c, _ in figures],
        [[r.engine, *(cell(r) for _, cell in figures)] for r in view.rows],
        view.title,
        "--json has them",
        out,
    )
    out.print()
    bands = view.rows[0].exact.bands if view.rows else []
    tabulate(
        left + [Column(f"p<{stop}", keep=k) for k, (_, stop, _) in enumerate(bands)],
        [[r.engine, *(_e(m) for _, _, m in r.exact.bands)] for r in view.rows],
        "max |err| vs true values by position band",
        "--json has them",
        out,
    )
    for r in view.rows:
        for line in r.verdict.lines:
            out.print(f"- {r.engine}: {line}", highlight=False, markup=False)
    for line in view.notes:
        out.print(f"- {line}", highlight=False, markup=False)
    if view.precision is not None:
        out.print()
        positions(view.precision, out)


def positions(found, out) -> None:
    """What a half dtype does to positions held in it, band by band."""
    tabulate(
        [
            Column("positions", justify="left"),
            Column("adjacent positions as one", keep=3),
            Column("max |angle err|", keep=2),
            Column("max |cos, sin err|", keep=1),
        ],
        [
            [
                f"{b.first} .. {b.stop - 1}",
                f"{100 * b.merged:.4g}%",
                _e(b.angle),
                "-" if b.value != b.value else _e(b.value),  # nan: positions held as inf
            ]
            for b in found.bands
        ],
        f"positions held in {found.dtype} ({FORMATS[found.dtype].precision} significant bits), "
        "and the angles and cos, sin computed from them",
        "--json has them",
        out,
    )
    line = (
        f"{100 * found.merged:.4g}% of adjacent positions in 0 .. {found.length - 1} are one "
        f"{found.dtype} value"
    )
    if found.run is not None:
        first, last, value = found.run
        line += f"; positions {first} .. {last} are all {value}"
    if found.lost is not None:
        line += f"; positions from {found.lost} on are inf"
    out.print(line, highlight=False, markup=False)


def agreements(found) -> None:
    """Each parameter of the two descriptions, and which disagree."""
    out = console()
    tabulate(
        [
            Column("parameter", justify="left", words=True),
            Column(found.first[0], justify="left", words=True),
            Column(found.second[0], justify="left", words=True),
            Column("verdict"),
        ],
        [[r.parameter, r.first, r.second, "agree" if r.agree else "DIFFER"] for r in found.rows],
        f"{found.first[0]} {found.first[1]} vs {found.second[0]} {found.second[1]}",
        "--json has them",
        out,
    )
    differ = [r.parameter for r in found.rows if not r.agree]
    out.print(
        f"{len(differ)} parameter{'s disagree' if len(differ) != 1 else ' disagrees'}: "
        f"{', '.join(differ)}"
        if differ
        else "every rope parameter agrees",
        highlight=False,
        markup=False,
    )


def about_a_model(found) -> bool:
    """Whether a compare result is about one model (printed here) rather than one table."""
    from ..analysis.compare import Agreements
    from ..analysis.engines import EngineView, ModelEngines

    return isinstance(found, (EngineView, ModelEngines, Agreements))


def treatments(found) -> None:
    """Each treatment's every-engine view, then what the tables do not show."""
    out = console()
    for name, view in found.views:
        out.print(f"{name}:", style="bold", highlight=False, markup=False)
        engines(view)
        out.print()
    for line in found.notes:
        out.print(f"- {line}", highlight=False, markup=False)


def result(found) -> bool:
    """Print a result about one model; False where `found` is none (render.result's)."""
    from ..analysis.compare import Agreements
    from ..analysis.engines import EngineView, ModelEngines

    if isinstance(found, ModelEngines):
        treatments(found)
    elif isinstance(found, EngineView):
        engines(found)
    elif isinstance(found, Agreements):
        agreements(found)
    else:
        return False
    return True


def _layers(found: dict, count: int) -> str:
    """A treatment's layers as the view says them, and how many: all 36 layers; layers 3, 7,
    ..., 35, every 4th (9 of 36)."""
    if len(found["layers"]) == count:
        return f"all {count} layers"
    return f"layers {found['layers_said']} ({len(found['layers'])} of {count})"


def _fold(command: str, width: int) -> str:
    """A command in lines of at most `width` columns, each but the last ending in ' \\'."""
    import shlex

    lines = [""]
    for word in (shlex.quote(w) for w in shlex.split(command)):
        if lines[-1].strip() and len(lines[-1] + " " + word + " \\") > width:
            lines.append("  ")
        lines[-1] += (" " if lines[-1].strip() else "") + word
    return " \\\n".join(lines)


def model(found: dict, shown: str | None = None) -> None:
    """A model's positional scheme, layer by layer: each treatment once, with its layers,
    settings and the command that builds it; the layers with no rotation; query scales; and
    which treatment the table after it is (`shown`)."""
    from rich.table import Table
    from rich.text import Text

    count = len(found["layers"])
    rows: list[tuple[str, str]] = []
    part = f" ({found['config_part']})" if found["config_part"] else ""
    rows.append(("model", f"{found['model_type']}{part}, {count} decoder layers"))
    commands = []
    for name, t in found["treatments"].items():
        pairs, columns = t["applied_pairing"], t["table_pairing"]
        applied = f"{pairs} pairs" + (
            f" (its table: {t['table_said']})" if pairs != columns else ""
        )
        of = f", rope parameters {t['rope_parameters_of']}" if t["rope_parameters_of"] else ""
        dims, head = t["rotary_dims"], t["head_dim"]
        rotated = f"rotates {dims} of {head} dims" if dims != head else f"rotates all {dims} dims"
        if t["unrotated_dims"]:  # MLA: the rotated dims are beside others in the head
            passed, key = t["unrotated_dims"], t["unrotated_dims_from"]
            rotated = (
                f"rotates {dims} of {head + passed} query and key dims ({key} {passed} pass "
                "unrotated)"
            )
        factor = t["attention_factor"]
        rows += [
            (name, f"{_layers(t, count)}{of}"),
            ("", t["settings"]),
            (
                "",
                f"{rotated} in {applied}"
                + (f", attention factor {factor:.9g}" if factor != 1 else ""),
            ),
        ]
        for part, pairs in t["components"].items():
            rows.append(("", f"its {part} rotates by the same table in {pairs} pairs"))
        if t["softmax_scale"] is not None:
            rows.append(("", f"softmax scale {t['softmax_scale']:.9g}: {t['softmax_scale_from']}"))
        commands.append((len(rows), t["command"]))
        rows.append(("", ""))
    for group in found["unrotated"]:
        rows.append(("no rotation", f"{_layers(group, count)}: {group['why']}"))
    for name, s in found["scales"].items():
        values = ", ".join(f"{k} {v:g}" for k, v in s["values"].items())
        rows.append((name, f"{_layers(s, count)}: {s['kind']} ({values})"))
        commands.append((len(rows), s["command"]))
        rows.append(("", ""))
    for finding in found["findings"]:
        rows.append(("finding", finding["line"]))
    if shown:
        rows.append(("below", shown))
    out = console()
    width = out.width - max(len(label) for label, _ in rows) - 2
    for at, command in commands:
        rows[at] = ("", _fold(command, width))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, text in rows:  # as written: a key's index ("no_rope_layers[i]") is no markup
        grid.add_row(Text(label), Text(text))
    out.print(grid)
    out.print()
