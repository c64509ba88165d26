"""What the writer and the reader both know of the file formats: names, extensions, dtype codes
and headers."""

from __future__ import annotations

from ..core.version import __version__

OUTPUT_FORMATS = ("npy", "safetensors", "csv", "tsv", "raw")
BINARY = {"npy", "safetensors", "raw"}
EXTENSIONS = {
    ".npy": "npy",
    ".safetensors": "safetensors",
    ".csv": "csv",
    ".tsv": "tsv",
    ".raw": "raw",
    ".bin": "raw",
}
SAFETENSORS_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}
SAFETENSORS_OTHER = {
    "I8",
    "U8",
    "I16",
    "U16",
    "I32",
    "U32",
    "I64",
    "U64",
    "BOOL",
    "F8_E4M3",
    "F8_E5M2",
}
NPY_DTYPES = {"f8": "float64", "f4": "float32", "f2": "float16"}
METADATA_VERSION = "pe_cli.version"


def npy_header(spec) -> bytes:
    """The .npy header (format 1.0) of a table."""
    import io

    import numpy as np

    buffer = io.BytesIO()
    header = {"descr": spec.format.npy, "fortran_order": False, "shape": spec.dims}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


class Tables(dict):
    """Named tables with metadata of their own besides each table's parameters (a model's
    schedule: which table each of its layers applies), for the .safetensors header."""

    def __init__(self, tables: dict, metadata: dict):
        super().__init__(tables)
        self.metadata = metadata


def safetensors_layout(tables: dict) -> tuple[list[str], bytes]:
    """The order the tables' data follows and the .safetensors header (with every table's
    parameters as metadata, and the tables' own where they are Tables)."""
    import json

    # widest dtype first, as the safetensors library orders tensors, so every tensor's data
    # starts at a multiple of its item size
    order = sorted(tables, key=lambda name: (-tables[name].format.itemsize, name))
    metadata = {METADATA_VERSION: __version__, **getattr(tables, "metadata", {})}
    entries: dict[str, object] = {}
    offset = 0
    for name in order:
        spec = tables[name]
        entries[name] = {
            "dtype": spec.format.safetensors,
            "shape": list(spec.dims),
            "data_offsets": [offset, offset + spec.nbytes],
        }
        offset += spec.nbytes
        metadata.update({f"{name}.{key}": value for key, value in spec.describe().items()})
    header = json.dumps({"__metadata__": metadata, **entries}, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    return order, len(header).to_bytes(8, "little") + header
