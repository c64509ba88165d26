"""--help as plain text a person reads at any width: a command's common view (its arguments,
the common table options, its own options, and the families one line each), a family's view
(`--family F --help`, in either order: F's options, variants, conventions and parts), and the
app's. Lines wrap between words (never inside a name such as `mrope-interleaved`) at the
terminal's width, at most MAX_WIDTH; nothing is cut, and no text is read as markup."""

from __future__ import annotations

import os
import re
import shutil
import textwrap

from typer.core import TyperCommand

from ..core.names import choice
from ..families import FAMILIES, own_names
from .options import FAMILY, OUTPUT, TABLE

MAX_WIDTH = 100  # longer lines are hard to read, however wide the terminal
_ARGS = "pe_cli.args"  # where a command's context keeps the arguments it was given
_METAVARS = {"int": "INT", "float": "NUMBER", "choice": "NAME"}


class Command(TyperCommand):
    """A command whose --help is this module's: the common view, or a family's when the
    arguments name one (the help option acts before --family is read, so they are kept)."""

    def parse_args(self, ctx, args):
        ctx.meta[_ARGS] = tuple(args)
        return super().parse_args(ctx, args)

    def format_help(self, ctx, formatter) -> None:
        formatter.write(command_help(ctx, _family_given(ctx.meta.get(_ARGS, ()))))


def terminal_width() -> int:
    """The terminal's columns (TERMINAL_WIDTH, else COLUMNS, else the terminal's own)."""
    given = os.environ.get("TERMINAL_WIDTH", "")
    columns = int(given) if given.isdigit() else shutil.get_terminal_size().columns
    return max(40, min(columns, MAX_WIDTH))


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` broken at spaces only (a no-break space holds words together)."""
    lines = textwrap.wrap(
        re.sub(r"[ \t\n]+", " ", text).strip(),
        width,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return [line.replace("\xa0", " ") for line in lines]


def _column(lists: list[list[tuple[str, str]]], width: int) -> int:
    """Where the texts of these rows start: after the longest name, up to a third of the width."""
    return min(max((len(name) for rows in lists for name, _ in rows), default=0), width // 3) + 4


def _render(blocks: list, width: int) -> str:
    """Blocks separated by blank lines: a paragraph (str), or (title or None, rows of (name,
    text), column) with each text wrapped from that column; a name too wide for the column
    has its text on the lines below it. Everything wraps at `width`."""
    lines = []
    for block in blocks:
        lines.append("")
        if isinstance(block, str):
            lines += _wrap(block, width)
            continue
        title, rows, column = block
        lines += _wrap(title, width) if title else []
        for name, text in rows:
            body = _wrap(text, width - column) or [""]
            if len(name) + 4 <= column:
                lines.append(f"  {name.ljust(column - 4)}  {body.pop(0)}".rstrip())
            else:
                lines.append(f"  {name}")
            lines += [" " * column + line for line in body]
    return "\n".join(lines[1:]) + "\n"


def _name(param) -> str:
    """'-d, --d-model INT' for an option, 'A' for an argument."""
    if param.param_type_name == "argument":
        return param.name.upper()
    flags = ", ".join(sorted(param.opts, key=lambda flag: flag.startswith("--")))
    if param.is_flag:
        return flags
    return f"{flags} {param.metavar or _METAVARS.get(param.type.name, 'TEXT')}"


def _default(value, text: str) -> str:
    """' [default: X]' where there is one to say and the text does not say it already."""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    if value is None or value is False or value == "" or "[default:" in text:
        return ""
    return f" [default:\xa0{value}]"  # kept on one line (_wrap)


def _row(param, text: str | None, default) -> tuple[str, str]:
    """An option's or argument's (name, help)."""
    text = text or ""
    return _name(param), (text + _default(default, text)).strip()


def _help_row(family: bool) -> tuple[str, str]:
    return (
        "--help",
        "Show this help." if family else "Show this help; with --family F, F's options.",
    )


def _family_given(args) -> str | None:
    """The --family value among a command's arguments, if any (the last, as click takes)."""
    found = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--family" and i + 1 < len(args):
            found = args[i + 1]
        elif arg.startswith("--family="):
            found = arg.split("=", 1)[1]
    return found


def _usage(ctx, extra: str = "") -> str:
    """'Usage: pe-cli compare [OPTIONS] [A] [B]'."""
    pieces = [ctx.command.options_metavar or ""]
    for param in ctx.command.params:
        if param.param_type_name == "argument":
            pieces.append(_name(param) if param.required else f"[{_name(param)}]")
    if getattr(ctx.command, "commands", None):
        pieces.append("COMMAND [ARGS]...")
    return f"Usage: {ctx.command_path}{extra} {' '.join(p for p in pieces if p)}"


def command_help(ctx, family: str | None = None) -> str:
    """A command's --help: the common view, or with `family` that family's."""
    if family is not None:
        return _family_help(ctx, FAMILIES[choice("--family", family, FAMILIES)])
    command, width = ctx.command, terminal_width()
    params = command.params
    lists = {
        "Arguments:": [_row(p, p.help, None) for p in params if p.param_type_name == "argument"],
        "Table options:": [_row(p, p.help, p.default) for p in params if _panel(p) == TABLE],
        f"{command.name} options:": [
            _row(p, p.help, p.default) for p in params if _panel(p) == OUTPUT
        ]
        + [_help_row(False)],
    }
    column = _column(list(lists.values()), width)
    blocks = [_usage(ctx), *(command.help or "").split("\n\n")]
    blocks += [(title, rows, column) for title, rows in lists.items() if rows]
    if any(_panel(p) == FAMILY for p in params):
        families = [
            (f.name, f.summary[:1].upper() + f.summary[1:] + ".") for f in FAMILIES.values()
        ]
        title = (
            f"Families ({ctx.command_path} --family F --help shows F's options, variants, "
            "conventions and parts):"
        )
        blocks.append((title, families, _column([families], width)))
    return _render(blocks, width)


def _panel(param) -> str | None:
    return getattr(param, "rich_help_panel", None) if param.param_type_name == "option" else None


def _family_help(ctx, family) -> str:
    """`--family F --help`: F's names (variants, conventions, parts, the first of each the
    default) and its own options, each with F's help."""
    names, width = own_names(family), terminal_width()
    lists = [
        (title, f"{names[key][0]} (default), {', '.join(names[key][1:])}".rstrip(", "))
        for key, title in (
            ("variant", "Variants"),
            ("convention", "Conventions"),
            ("part", "Parts"),
        )
        if len(names[key]) > 1 or key == "convention"
    ]
    own = {param.name: param for param in family.params}
    options = [
        _row(p, own[p.name].help, own[p.name].default) for p in ctx.command.params if p.name in own
    ] + [_help_row(True)]
    column = _column([lists, options], width)
    blocks = [
        _usage(ctx, f" --family {family.name}"),
        f"{family.name}: {family.summary}.",
        (None, lists, column),
        (f"{family.name} options:", options, column),
        f"The common options: {ctx.command_path} --help",
    ]
    return _render(blocks, width)


def app_help(ctx) -> str:
    """`pe-cli --help`: the commands, each with the first sentence of its help."""
    group, width = ctx.command, terminal_width()
    commands = [group.get_command(ctx, name) for name in group.list_commands(ctx)]
    commands = [(c.name, re.split(r"(?<=\.)\s", c.help or "")[0]) for c in commands]
    options = [_row(p, p.help, None) for p in group.params if p.param_type_name == "option"]
    options.append(("--help", "Show this help."))
    blocks = [
        _usage(ctx),
        group.help or "",
        ("Commands:", commands, _column([commands], width)),
        ("Options:", options, _column([options], width)),
        f"{ctx.command_path} COMMAND --help shows a command's options.",
    ]
    return _render(blocks, width)
