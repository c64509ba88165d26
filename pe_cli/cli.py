"""The command line: options in, one library call, errors out as one line. Nothing else."""

from __future__ import annotations

import os
import sys
from enum import Enum
from itertools import product
from typing import Annotated, Optional

import typer
from typer.core import TyperGroup

from . import __version__
from .conventions import CONVENTIONS
from .dtypes import DTYPE_NAMES
from .errors import PeError
from .spec import DEVICES, SHAPES, VARIANT_NAMES


def _choices(name: str, values) -> type[Enum]:
    return Enum(name, {v: v for v in values}, type=str)


Variant = _choices("Variant", VARIANT_NAMES)
Convention = _choices("Convention", CONVENTIONS)
DType = _choices("DType", DTYPE_NAMES)
Shape = _choices("Shape", SHAPES)
Device = _choices("Device", DEVICES)
OutputFormat = _choices("OutputFormat", ("npy", "safetensors", "csv", "tsv", "raw"))

_TABLE = "Table"
_OUT = "Output"

DModelOpt = Annotated[int, typer.Option("--d-model", "-d", help="Model width: columns of the table.", rich_help_panel=_TABLE)]
SeqLenOpt = Annotated[int, typer.Option("--seq-len", "-l", help="Number of positions: rows of the table.", rich_help_panel=_TABLE)]
ConventionOpt = Annotated[Convention, typer.Option(help="Frequencies and column layout (see README).", rich_help_panel=_TABLE)]
VariantOpt = Annotated[Variant, typer.Option(help="exact, or a seed notebook's formula.", rich_help_panel=_TABLE)]
DTypeOpt = Annotated[DType, typer.Option(help="Output dtype.", rich_help_panel=_TABLE)]
ComputeDTypeOpt = Annotated[Optional[DType], typer.Option(help="Dtype a seed variant computes in \\[default: float32].", rich_help_panel=_TABLE)]
BaseOpt = Annotated[float, typer.Option(help="Frequency base (10000 in the paper).", rich_help_panel=_TABLE)]
OffsetOpt = Annotated[int, typer.Option(help="First position.", rich_help_panel=_TABLE)]
PaddingOpt = Annotated[Optional[int], typer.Option(help="fairseq: the position whose row is all zeros.", rich_help_panel=_TABLE)]
ShapeOpt = Annotated[Shape, typer.Option(help="2d (L, D), batch-first (1, L, D) or seq-first (L, 1, D).", rich_help_panel=_TABLE)]
DeviceOpt = Annotated[Device, typer.Option(help="Where the table is built; auto picks cuda, then mps, then cpu.", rich_help_panel=_TABLE)]
FormatOpt = Annotated[Optional[OutputFormat], typer.Option("--format", "-f", help="Output format \\[default: from the extension; npy for -].", rich_help_panel=_OUT)]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing file; allow binary data to a terminal.", rich_help_panel=_OUT)]


class _App(TyperGroup):
    """Maps every error to one line on stderr and an exit code, in one place."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(
                args or ["--help"], prog_name, complete_var, standalone_mode=False, **extra
            )
        except PeError as e:
            code = _fail(e, str(e), e.exit_code)
        except BrokenPipeError:
            # the reader went away (`| head`): say nothing, as the Python docs' SIGPIPE note does
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = 1
        except KeyboardInterrupt as e:
            code = _fail(e, "interrupted", 130)
        except Exception as e:
            if hasattr(e, "format_message") and hasattr(e, "exit_code"):  # typer's usage errors
                code = _fail(e, e.format_message(), e.exit_code)
            else:
                code = _fail(e, f"unexpected {type(e).__name__}: {e}", 1)
        if standalone_mode:
            sys.exit(code or 0)
        return code


def _fail(error: BaseException, message: str, code: int) -> int:
    if os.environ.get("PE_CLI_DEBUG"):
        raise error
    typer.echo("Error: " + " ".join(message.split()), err=True)
    return code


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pe-cli {__version__}")
        raise typer.Exit()


app = typer.Typer(
    cls=_App,
    help="Generate, inspect and verify positional-encoding tables, exactly.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode="rich",
)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    pass


def _spec(options: dict, **overrides):
    """A TableSpec from a command's parameters (its locals()): table options only, by name."""
    from dataclasses import fields

    from .spec import TableSpec

    values = {f.name: options[f.name] for f in fields(TableSpec)} | overrides
    return TableSpec(**{k: v.value if isinstance(v, Enum) else v for k, v in values.items()})


@app.command()
def generate(
    d_model: DModelOpt = 512,
    seq_len: SeqLenOpt = 1024,
    convention: ConventionOpt = Convention.vaswani,
    variant: VariantOpt = Variant.exact,
    dtype: DTypeOpt = DType.float32,
    compute_dtype: ComputeDTypeOpt = None,
    base: BaseOpt = 10000.0,
    offset: OffsetOpt = 0,
    padding_idx: PaddingOpt = None,
    shape: ShapeOpt = Shape["2d"],
    device: DeviceOpt = Device.cpu,
    output: Annotated[
        Optional[str],
        typer.Option("--output", "-o", help="Write the table to this file, or - for stdout.", rich_help_panel=_OUT),
    ] = None,
    fmt: FormatOpt = None,
    force: ForceOpt = False,
) -> None:
    """Build one table; print a summary, or write it with -o (a file, or - for a pipe)."""
    spec = _spec(locals())
    if output is None:
        from . import render
        from .metrics import summarize

        render.summary(spec, *summarize(spec))
        return
    _write(output, {"pe": spec}, fmt, force)


@app.command()
def export(
    path: Annotated[str, typer.Argument(help="Destination file, or - for stdout (with --format).")],
    d_model: DModelOpt = 512,
    seq_len: SeqLenOpt = 1024,
    convention: Annotated[list[Convention], typer.Option(help="Convention; repeat for several tables.", rich_help_panel=_TABLE)] = [Convention.vaswani],  # noqa: B006
    variant: Annotated[list[Variant], typer.Option(help="Variant; repeat for several tables.", rich_help_panel=_TABLE)] = [Variant.exact],  # noqa: B006
    dtype: Annotated[list[DType], typer.Option(help="Output dtype; repeat for several tables.", rich_help_panel=_TABLE)] = [DType.float32],  # noqa: B006
    compute_dtype: ComputeDTypeOpt = None,
    base: BaseOpt = 10000.0,
    offset: OffsetOpt = 0,
    padding_idx: PaddingOpt = None,
    shape: ShapeOpt = Shape["2d"],
    device: DeviceOpt = Device.cpu,
    fmt: FormatOpt = None,
    force: ForceOpt = False,
) -> None:
    """Write tables with their parameters; repeat --variant/--convention/--dtype for several.

    Several tables go into one .safetensors file as named tensors (exact.float32,
    exp-log.float32, ...); its metadata holds every parameter of each.
    """
    options = locals()
    combos = list(dict.fromkeys(product(variant, convention, dtype)))
    varying = [len(set(values)) > 1 for values in zip(*combos)]
    tables = {}
    for combo in combos:
        name = ".".join(v.value for v, vary in zip(combo, varying) if vary) or "pe"
        tables[name] = _spec(options, variant=combo[0], convention=combo[1], dtype=combo[2])
    _write(path, tables, fmt, force)


def _write(destination: str, tables, fmt, force: bool) -> None:
    from . import io, render

    written = io.write(destination, tables, fmt.value if fmt else None, force)
    if destination != "-":
        render.wrote(written, tables)


def main() -> None:
    app()
