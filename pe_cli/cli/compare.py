"""`pe-cli compare`: a family's formulas against the exact table, A against B, or what a file is."""

from typing import Annotated

import typer

from .options import OUTPUT, ForceOpt, JsonOpt, PlotOpt, table_options
from .output import refuse_without


@table_options(from_file=("d_model", "seq_len"), skip=("variant", "dtype", "shape", "device"))
def compare(
    a: Annotated[
        str | None,
        typer.Argument(help="A file, or a table spec VARIANT[:CONVENTION][:DTYPE][:PART]."),
    ] = None,
    b: Annotated[
        str | None,
        typer.Argument(help="The table to compare A with [default: the exact table]."),
    ] = None,
    atol: Annotated[
        float | None,
        typer.Option(help="Absolute tolerance: exit 1 when exceeded.", rich_help_panel=OUTPUT),
    ] = None,
    rtol: Annotated[
        float | None,
        typer.Option(help="Relative tolerance: exit 1 when exceeded.", rich_help_panel=OUTPUT),
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option(
            help="With a model's config and no tables (rope): the dtype the engines serve "
            "its table in (float32, bfloat16, float16; fp32, bf16, fp16), with what it does "
            "to positions [default: float32].",
            metavar="NAME",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    frameworks: Annotated[
        bool,
        typer.Option(
            "--frameworks",
            help="The every-engine view of a model's config (rope) from training to serving: "
            "the training frameworks' tables too, beside transformers' and the engines'.",
            rich_help_panel=OUTPUT,
        ),
    ] = False,
    before: Annotated[
        str | None,
        typer.Option(
            help="Activations before the rotary step: A holds them after, and compare reads "
            "back the rotation between (same shape: (positions, head_dim), (positions, heads, "
            "head_dim) or (batch, heads, positions, head_dim)).",
            metavar="FILE",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    positions: Annotated[
        str | None,
        typer.Option(
            help="With --before: the positions of the rows, START:STOP or a .npy or text file "
            "of ids [default: 0, 1, ...].",
            metavar="RANGE",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    plot: PlotOpt = None,
    force: ForceOpt = False,
    json: JsonOpt = False,
    table: dict = None,
) -> None:
    """The seed formulas (for the other families, their libraries and precision recipes) vs
    the exact table with no arguments; A vs B with a diagnosis; or identify the table in a
    FILE. With --atol/--rtol exit 1 when out of tolerance; --plot draws the errors against
    position."""
    from .. import render
    from ..analysis.compare import run
    from ..core.errors import BadInput
    from ..io.read import looks_like_file
    from ..render import models

    if before is not None or positions is not None:
        if frameworks:
            raise BadInput(
                "--frameworks adds to compare --rope-config MODEL's every-engine view; "
                "--before reads a rotation back: drop --frameworks"
            )
        return _rotation(a, b, before, positions, table, json, plot)
    if plot is None:
        refuse_without("--plot FILE", force=force)
    files = [s for s in (a, b) if s is not None and looks_like_file(s)]
    given = table.given
    if a is not None and len(files) == (1 if b is None else 2) and given:
        read = "is a file, read as it is" if len(files) == 1 else "are files, read as they are"
        alone = len(given) == 1
        raise BadInput(
            f"{' and '.join(files)} {read}, and {', '.join(given)} "
            f"{'describes' if alone else 'describe'} a table to build; drop {'it' if alone else 'them'}"
        )
    if not files:
        # the exact table of these options (--compute-dtype is the audit's recipes'); a model
        # whose layers apply several tables: each treatment's, of which an option must change one
        from ..analysis.compare import treatments

        chosen = [t for _, t in treatments(table)] if a is None else []
        chosen = chosen or [table]
        specs = [t.spec(compute_dtype=None) for t in chosen]
        chosen[0].check_used(specs)
    notes = [] if files else table.notes  # a file's length, not a config's, is used
    if plot is not None:
        from ..plotting import file_format

        file_format(plot, force)  # a wrong extension or an existing file is refused before any work
    report = run(a, b, table, atol, rtol, dtype, frameworks)
    if plot is not None and models.about_a_model(report.result):
        raise BadInput(
            "--plot draws one table's errors against position; this comparison is of a model "
            "(every engine, or a GGUF against its config): drop --plot"
        )
    if json:
        render.as_json(report.result.to_json())
    elif not models.result(report.result):
        render.result(report.result)
    if plot is not None:
        from ..analysis.figures import errors
        from ..plotting import draw, save

        render.plotted(plot, save(draw(errors(report.result)), plot, force), "errors")
    render.notes(notes)
    if report.failed:
        raise typer.Exit(1)


def _rotation(after, b, before, positions, table, json, plot) -> None:
    """compare AFTER --before BEFORE: the rotation read back, against --rope-config's layer."""
    from .. import render
    from ..analysis.rotation_files import from_files
    from ..core.errors import BadInput
    from ..render.rotation import rotation

    if before is None:
        raise BadInput("--positions says where the rows of --before and AFTER lie: give --before")
    if after is None or b is not None:
        raise BadInput("compare AFTER --before BEFORE takes one file, AFTER")
    if plot is not None:
        raise BadInput("--plot draws a table's errors; --before reads a rotation: drop --plot")
    extra = set(table.given) - {"--rope-config", "--layer"}
    if extra:
        raise BadInput(
            f"{', '.join(sorted(extra))} describes a table to build; --before reads the rotation "
            "from the files (--rope-config MODEL [--layer N] says what to set it against)"
        )
    found = from_files(after, before, positions, table.get("rope_config"), table.get("layer"))
    if json:
        render.as_json(found.to_json())
    else:
        rotation(found)
