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

    Several tables go into one .safetensors file as named tensors, each named by what varies
    among them (exact and exp-log; exact.float16 and exp-log.float32 where the dtype varies
    too; a rope table's cos and sin); its metadata holds the parameters of each.
    """
    from ..core.errors import BadInput
    from ..io.write import output_format
    from ..spec import check_used, choose_one, export_specs, option_notes

    tables = export_specs(table)
    found = output_format(path, fmt.value if fmt else None)
    if found != "safetensors" and len(tables) > 1:
        where = "stdout" if path == "-" else path
        raise BadInput(
            f"{where} is {found}, which holds one table, and these options give {len(tables)} "
            f"({', '.join(tables)}); choose one with {choose_one(table)}, or write a "
            ".safetensors file"
        )
    check_used(tables.values(), table)
    write(path, tables, fmt, force, table, option_notes(table))
