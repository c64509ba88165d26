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
from .dtypes import DTYPE_NAMES
from .families import CONVENTION_NAMES, FAMILIES, PART_NAMES
from .errors import PeError
from .spec import DEVICES, SHAPES, VARIANT_NAMES


def _choices(name: str, values) -> type[Enum]:
    return Enum(name, {v: v for v in values}, type=str)


Variant = _choices("Variant", VARIANT_NAMES)
Convention = _choices("Convention", CONVENTION_NAMES)
Family = _choices("Family", FAMILIES)
Part = _choices("Part", PART_NAMES)
DType = _choices("DType", DTYPE_NAMES)
Shape = _choices("Shape", SHAPES)
Device = _choices("Device", DEVICES)
OutputFormat = _choices("OutputFormat", ("npy", "safetensors", "csv", "tsv", "raw"))

_TABLE = "Table"
_FAMILIES = "RoPE, ALiBi and 2-D tables"
_OUT = "Output"

DModelOpt = Annotated[int, typer.Option("--d-model", "-d", help="Model width: columns of the table.", rich_help_panel=_TABLE)]
SeqLenOpt = Annotated[int, typer.Option("--seq-len", "-l", help="Number of positions: rows of the table.", rich_help_panel=_TABLE)]
ConventionOpt = Annotated[Optional[Convention], typer.Option(help="Frequencies and column layout of the family (see README) \\[default: the family's first, or the library variant's].", rich_help_panel=_TABLE)]
FamilyOpt = Annotated[Family, typer.Option(help="sinusoidal, rope, alibi or sincos2d.", rich_help_panel=_TABLE)]
PartOpt = Annotated[Optional[Part], typer.Option(help="Which table of the family: rope cos, sin or inv_freq; alibi causal, symmetric or slopes.", rich_help_panel=_FAMILIES)]
RopeOpt = Annotated[Optional[list[str]], typer.Option("--rope", help="A Hugging Face rope parameter KEY=VALUE (rope_type=yarn, factor=4, ...); repeat.", rich_help_panel=_FAMILIES)]
RopeConfigOpt = Annotated[Optional[str], typer.Option(help="Take theta, head dim and rope parameters from a Hugging Face config.json.", rich_help_panel=_FAMILIES)]
HeadsOpt = Annotated[int, typer.Option(help="ALiBi: number of attention heads.", rich_help_panel=_FAMILIES)]
GridOpt = Annotated[Optional[str], typer.Option(help="sincos2d: patch grid ROWSxCOLUMNS, e.g. 14x14.", rich_help_panel=_FAMILIES)]
ClsTokenOpt = Annotated[bool, typer.Option("--cls-token", help="sincos2d: a zero first row for the class token (MAE).", rich_help_panel=_FAMILIES)]
VariantOpt = Annotated[Variant, typer.Option(help="exact, or a seed notebook's formula.", rich_help_panel=_TABLE)]
DTypeOpt = Annotated[DType, typer.Option(help="Output dtype.", rich_help_panel=_TABLE)]
ComputeDTypeOpt = Annotated[Optional[DType], typer.Option(help="Dtype a seed variant computes in \\[default: float32].", rich_help_panel=_TABLE)]
BaseOpt = Annotated[float, typer.Option(help="Frequency base (10000 in the paper).", rich_help_panel=_TABLE)]
OffsetOpt = Annotated[int, typer.Option(help="First position.", rich_help_panel=_TABLE)]
PaddingOpt = Annotated[Optional[int], typer.Option(help="fairseq: the position whose row is all zeros.", rich_help_panel=_TABLE)]
ShapeOpt = Annotated[Optional[Shape], typer.Option(help="2d (L, D), batch-first (1, L, D) or seq-first (L, 1, D) \\[default: 2d, or the library variant's].", rich_help_panel=_TABLE)]
MinTimescaleOpt = Annotated[float, typer.Option(help="tensor2tensor's min_timescale (--base is its max_timescale).", rich_help_panel=_TABLE)]
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
                code = _fail(e, _suggest(e.format_message()), e.exit_code)
            else:
                code = _fail(e, f"unexpected {type(e).__name__}: {e}", 1)
        if standalone_mode:
            sys.exit(code or 0)
        return code


def _suggest(message: str) -> str:
    """Add a "did you mean" to typer's message for a value that is not one of the choices."""
    import re

    from .spec import did_you_mean

    found = re.search(r"'([^']*)' is not one of (.*?)\.?$", message)
    if found is None:
        return message
    return message.rstrip(".") + did_you_mean(found.group(1), re.findall(r"'([^']*)'", found.group(2)))


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
    """A TableSpec from a command's parameters (its locals()): table options only, by name;
    --rope KEY=VALUE pairs over a --rope-config file's settings."""
    from dataclasses import fields

    from .spec import TableSpec

    values = {f.name: options[f.name] for f in fields(TableSpec) if f.name in options} | overrides
    return TableSpec(**_family_values(values, options))


def _family_values(values: dict, options: dict) -> dict:
    """Enum choices as their values; --rope KEY=VALUE pairs over a --rope-config file's."""
    from .families import rope_config

    values = {k: v.value if isinstance(v, Enum) else v for k, v in values.items()}
    rope = {}
    if options.get("rope_config"):
        config = rope_config(options["rope_config"])
        rope = dict(config.pop("rope"))
        values.update(config, family="rope")
    for item in options.get("rope") or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--rope")
        rope[key.strip()] = value.strip()
    values["rope"] = rope
    return values


@app.command()
def generate(
    d_model: DModelOpt = 512,
    seq_len: SeqLenOpt = 1024,
    convention: ConventionOpt = None,
    variant: VariantOpt = Variant.exact,
    dtype: DTypeOpt = DType.float32,
    compute_dtype: ComputeDTypeOpt = None,
    base: BaseOpt = 10000.0,
    offset: OffsetOpt = 0,
    padding_idx: PaddingOpt = None,
    shape: ShapeOpt = None,
    device: DeviceOpt = Device.cpu,
    min_timescale: MinTimescaleOpt = 1.0,
    family: FamilyOpt = Family.sinusoidal,
    part: PartOpt = None,
    rope: RopeOpt = None,
    rope_config: RopeConfigOpt = None,
    heads: HeadsOpt = 8,
    grid: GridOpt = None,
    cls_token: ClsTokenOpt = False,
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
    convention: Annotated[Optional[list[Convention]], typer.Option(help="Convention; repeat for several tables \\[default: vaswani, or the library variant's].", rich_help_panel=_TABLE)] = None,
    variant: Annotated[list[Variant], typer.Option(help="Variant; repeat for several tables.", rich_help_panel=_TABLE)] = [Variant.exact],  # noqa: B006
    dtype: Annotated[list[DType], typer.Option(help="Output dtype; repeat for several tables.", rich_help_panel=_TABLE)] = [DType.float32],  # noqa: B006
    compute_dtype: ComputeDTypeOpt = None,
    base: BaseOpt = 10000.0,
    offset: OffsetOpt = 0,
    padding_idx: PaddingOpt = None,
    shape: ShapeOpt = None,
    device: DeviceOpt = Device.cpu,
    min_timescale: MinTimescaleOpt = 1.0,
    family: FamilyOpt = Family.sinusoidal,
    part: Annotated[Optional[list[Part]], typer.Option(help="Which tables of the family; repeat \\[default: rope cos and sin, else the family's first].", rich_help_panel=_FAMILIES)] = None,
    rope: RopeOpt = None,
    rope_config: RopeConfigOpt = None,
    heads: HeadsOpt = 8,
    grid: GridOpt = None,
    cls_token: ClsTokenOpt = False,
    fmt: FormatOpt = None,
    force: ForceOpt = False,
) -> None:
    """Write tables with their parameters; repeat --variant/--convention/--dtype for several.

    Several tables go into one .safetensors file as named tensors (exact.float32, cos, sin,
    exp-log.float32, ...); its metadata holds every parameter of each.
    """
    options = locals()
    if not part:
        part = [Part.cos, Part.sin] if family == Family.rope else [None]
    combos = list(dict.fromkeys(product(variant, convention or [None], dtype, part)))
    varying = [len(set(values)) > 1 for values in zip(*combos)]
    tables = {}
    for combo in combos:
        name = ".".join(v.value for v, vary in zip(combo, varying) if vary and v) or "pe"
        tables[name] = _spec(
            options, variant=combo[0], convention=combo[1], dtype=combo[2], part=combo[3]
        )
    _write(path, tables, fmt, force)


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


@app.command()
def show(
    source: Annotated[Optional[str], typer.Argument(help="A .npy file, FILE.safetensors\\[:TENSOR], or nothing to build from the options.")] = None,
    rows: Annotated[Optional[str], typer.Option(help="Positions to show, START:STOP (row indices) \\[default: 0:8].", rich_help_panel=_OUT)] = None,
    cols: Annotated[Optional[str], typer.Option(help="Dimensions to show, START:STOP \\[default: what fits].", rich_help_panel=_OUT)] = None,
    heatmap: Annotated[bool, typer.Option("--heatmap", help="Draw the whole table as a heatmap.", rich_help_panel=_OUT)] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the facts as JSON.", rich_help_panel=_OUT)] = False,
    d_model: DModelOpt = 512,
    seq_len: SeqLenOpt = 1024,
    convention: ConventionOpt = None,
    variant: VariantOpt = Variant.exact,
    dtype: DTypeOpt = DType.float32,
    compute_dtype: ComputeDTypeOpt = None,
    base: BaseOpt = 10000.0,
    offset: OffsetOpt = 0,
    padding_idx: PaddingOpt = None,
    shape: ShapeOpt = None,
    device: DeviceOpt = Device.cpu,
    min_timescale: MinTimescaleOpt = 1.0,
    family: FamilyOpt = Family.sinusoidal,
    part: PartOpt = None,
    rope: RopeOpt = None,
    rope_config: RopeConfigOpt = None,
    heads: HeadsOpt = 8,
    grid: GridOpt = None,
    cls_token: ClsTokenOpt = False,
) -> None:
    """Look at a table: a window of values, a heatmap, and facts (norms, frequencies)."""
    from . import render
    from .compare import side
    from .metrics import facts

    table = side(source, {}) if source is not None else None
    if table is None:
        spec = _spec(locals())
        from .engine import build

        values, dtype_name, label = build(spec).float64().reshape(spec.rows, spec.cols), spec.dtype, "table"
    else:
        spec, values, dtype_name, label = table.spec, table.values, table.dtype, table.label
    report = facts(values, dtype_name, spec)
    if json:
        render.as_json(report)
        return
    first = spec.offset if spec is not None else 0
    if heatmap:
        render.heatmap(values, first, label)
        return
    row_slice = _slice(rows, "--rows") if rows else slice(0, 8)
    col_slice = _slice(cols, "--cols") if cols else None
    render.facts(report)
    render.console().print()
    render.window(values, dtype_name, row_slice, col_slice, render.row_label(spec), label)


@app.command()
def compare(
    a: Annotated[Optional[str], typer.Argument(help="A file, or a table spec VARIANT\\[:CONVENTION]\\[:DTYPE].")] = None,
    b: Annotated[Optional[str], typer.Argument(help="The table to compare A with \\[default: the exact table].")] = None,
    atol: Annotated[Optional[float], typer.Option(help="Absolute tolerance: exit 1 when exceeded.", rich_help_panel=_OUT)] = None,
    rtol: Annotated[Optional[float], typer.Option(help="Relative tolerance: exit 1 when exceeded.", rich_help_panel=_OUT)] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.", rich_help_panel=_OUT)] = False,
    d_model: Annotated[Optional[int], typer.Option("--d-model", "-d", help="Columns of built tables \\[default: the file's, else 512].", rich_help_panel=_TABLE)] = None,
    seq_len: Annotated[Optional[int], typer.Option("--seq-len", "-l", help="Rows of built tables \\[default: the file's, else 1024].", rich_help_panel=_TABLE)] = None,
    convention: ConventionOpt = None,
    compute_dtype: ComputeDTypeOpt = None,
    base: BaseOpt = 10000.0,
    offset: OffsetOpt = 0,
    padding_idx: PaddingOpt = None,
    family: FamilyOpt = Family.sinusoidal,
    part: PartOpt = None,
    rope: RopeOpt = None,
    rope_config: RopeConfigOpt = None,
    heads: HeadsOpt = 8,
    grid: GridOpt = None,
    cls_token: ClsTokenOpt = False,
) -> None:
    """Seed formulas (or, for --family rope/alibi/sincos2d, the libraries and precision
    recipes) vs the exact table with no arguments; A vs B with a diagnosis; or identify the
    table in a FILE. With --atol/--rtol exit 1 when out of tolerance."""
    from dataclasses import asdict

    from . import compare as library
    from . import render
    from .io import looks_like_file

    files = {s: library.side(s, {}) for s in (a, b) if s is not None and looks_like_file(s)}
    rows_cols = next(iter(files.values())).values.shape if files else (1024, 512)  # built tables follow a file
    options = locals()
    defaults = _family_values({
        "d_model": d_model or rows_cols[1], "seq_len": seq_len or rows_cols[0],
        "convention": convention, "base": base, "offset": offset, "padding_idx": padding_idx,
        "compute_dtype": compute_dtype, "family": family, "part": part, "heads": heads,
        "grid": grid, "cls_token": cls_token,
    }, options)
    threshold = atol if atol is not None else 1e-4
    if a is None:
        rows = library.seed_report(defaults, threshold, atol, rtol)
        if json:
            render.as_json([{"variant": name, **asdict(d)} for name, d in rows])
        else:
            reference = library.TableSpec(**{**defaults, "compute_dtype": None})
            render.seed_report(rows, reference, defaults["compute_dtype"])
        failed = any(d.within is False for _, d in rows)
    elif b is None and a in files:
        target = files[a]
        candidates = library.identify(target, threshold)
        if json:
            render.as_json({"source": target.label, "notes": target.notes, "candidates": [
                {"name": c.name, "spec": asdict(c.spec), **asdict(c.difference)} for c in candidates
            ]})
        else:
            render.identification(target, candidates)
        best = candidates[0].difference if candidates else None
        failed = (atol is not None or rtol is not None) and (
            best is None or not (best.max_abs <= (atol or 0) + (rtol or 0))
        )
    else:
        first = files.get(a) or library.side(a, defaults)
        if b is None:  # a built table against the exact table of its convention
            b = f"exact:{first.spec.convention}:float64:{first.spec.part}"
        second = files.get(b) or library.side(b, defaults)
        result = library.compare(first, second, threshold, atol, rtol)
        if json:
            render.as_json({"a": result.a.label, "b": result.b.label, "findings": result.findings,
                            **asdict(result.difference)})
        else:
            render.comparison(result)
        failed = result.difference.within is False
    if failed:
        raise typer.Exit(1)


def _write(destination: str, tables, fmt, force: bool) -> None:
    from . import io, render

    written = io.write(destination, tables, fmt.value if fmt else None, force)
    if destination != "-":
        render.wrote(written, tables)
