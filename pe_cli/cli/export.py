"""`pe-cli export`: several tables, with their parameters, into one file."""

from typing import Annotated

import typer

from .options import ForceOpt, FormatOpt, table_options
from .output import write


@table_options(repeat=("variant", "convention", "dtype", "part"))
def export(
    path: Annotated[str, typer.Argument(help="Destination file, or - for stdout (with --format).")],
    fmt: FormatOpt = None,
    force: ForceOpt = False,
    table: dict = None,
) -> None:
    """Write tables with their parameters; repeat --variant, --convention, --dtype or --part
    for several.

    Several tables go into one .safetensors file as named tensors (exact.float32, cos, sin,
    exp-log.float32, ...); its metadata holds every parameter of each.
    """
    from ..spec import export_specs

    write(path, export_specs(table), fmt, force)
