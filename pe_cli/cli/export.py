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

    tables = _with_schedule(table.export_specs(), table)
    found = output_format(path, fmt.value if fmt else None)
    if found != "safetensors" and len(tables) > 1:
        where = "stdout" if path == "-" else path
        raise BadInput(
            f"{where} is {found}, which holds one table, and these options give {len(tables)} "
            f"({', '.join(tables)}); choose one with {table.choose_one()}, or write a "
            ".safetensors file"
        )
    table.check_used(tables.values())
    write(path, tables, fmt, force, table, table.notes)


def _with_schedule(tables: dict, table: dict) -> dict:
    """A model's tables, one set per treatment, with its schedule as the file's metadata: the
    treatment each layer applies (null: none) and its query scale, as show --json says them."""
    import json

    from ..core.errors import BadInput
    from ..io.formats import Tables

    if table.get("layer") is not None or table.get("layer_type"):
        return tables
    try:
        model = table.model
    except BadInput:
        return tables
    if not model:
        return tables
    return Tables(
        tables,
        {
            "pe_cli.layers": json.dumps(model["layers"]),
            "pe_cli.query_scales": json.dumps(model["query_scales"]),
        },
    )
