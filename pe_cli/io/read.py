"""The reader: .npy and .safetensors files a user hands us, as float64 tables. Nothing is
unpickled or executed: .npy headers are parsed by numpy's header reader and object arrays
refused; .safetensors headers are checked against the file's size before any data is read."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.dtypes import FORMATS, host_float
from ..core.errors import BadInput, PeError
from ..core.limits import available_memory, gib
from ..spec import TableSpec
from .formats import NPY_DTYPES, SAFETENSORS_DTYPES, SAFETENSORS_OTHER


@dataclass
class Loaded:
    """A table read from a file: float64 values in the file's shape, its dtype, its origin."""

    label: str
    values: np.ndarray
    dtype: str
    spec: TableSpec | None = None  # the parameters, when pe-cli wrote the file


def split_source(source: str) -> tuple[str, str | None]:
    """'FILE' or 'FILE:TENSOR' → (file, tensor or None); a file whose own name has ':' wins."""
    if ":" in source and not Path(source).exists():
        path, tensor = source.rsplit(":", 1)
        return path, tensor or None
    return source, None


def looks_like_file(source: str) -> bool:
    path, _ = split_source(source)
    return path == "-" or Path(path).exists() or Path(path).suffix.lower() in (".npy", ".safetensors")


def read(source: str) -> Loaded:
    """Read 'FILE', 'FILE:TENSOR' (safetensors) or '-' (a .npy on stdin)."""
    path, tensor = split_source(source)
    if path == "-":
        data = sys.stdin.buffer.read()
        return _read_npy(data, "stdin")
    file = Path(path)
    if not file.exists():
        raise BadInput(f"{path}: no such file")
    if file.is_dir():
        raise BadInput(f"{path} is a directory")
    try:
        with open(file, "rb") as f:
            magic = f.read(8)
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})") from None
    if magic.startswith(b"\x93NUMPY"):
        if tensor is not None:
            raise BadInput(f"{path} is a .npy file and holds one array; drop ':{tensor}'")
        _check_room(path, file.stat().st_size)
        return _read_npy(file.read_bytes(), path)
    if file.suffix.lower() == ".safetensors" or tensor is not None:
        return _read_safetensors(file, tensor)
    raise BadInput(f"{path}: not a .npy or .safetensors file")


def _check_room(label: str, nbytes: int) -> None:
    """Refuse, before reading, data that would not fit in memory once widened to float64
    (up to 4 times its size for float16, plus the bytes themselves)."""
    need, have = 5 * nbytes, available_memory()
    if need > have:
        raise BadInput(
            f"{label}: reading {gib(nbytes)} of data needs about {gib(need)} of memory and "
            f"{gib(have)} is available"
        )


def _read_npy(data: bytes, label: str) -> Loaded:
    import io

    if not data.startswith(b"\x93NUMPY"):
        raise BadInput(f"{label}: not a .npy file (wrong magic)")
    buffer = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buffer)
        read_header = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read_header(buffer)
    except Exception as e:  # numpy says ValueError for most, others for odd headers
        raise BadInput(f"{label}: malformed .npy header ({' '.join(str(e).split())})") from None
    if dtype.hasobject or dtype.fields is not None:
        raise BadInput(f"{label}: holds Python objects (pickled data); pe-cli never unpickles")
    kind = NPY_DTYPES.get(f"{dtype.kind}{dtype.itemsize}")
    if kind is None:
        raise BadInput(f"{label}: dtype {dtype} is not a floating-point table")
    count = int(np.prod(shape, dtype=np.int64))
    start = buffer.tell()
    if len(data) - start < count * dtype.itemsize:
        raise BadInput(
            f"{label}: truncated: the header promises {count * dtype.itemsize} bytes of data "
            f"and {len(data) - start} follow"
        )
    values = np.frombuffer(data, dtype=dtype, count=count, offset=start)
    values = values.reshape(shape, order="F" if fortran else "C").astype(np.float64)
    return Loaded(label, values, kind)


def _safetensors_header(file: Path) -> tuple[dict, dict, int]:
    size = file.stat().st_size
    with open(file, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise BadInput(f"{file}: truncated .safetensors file ({size} bytes)")
        length = int.from_bytes(head, "little")
        if length > size - 8:
            raise BadInput(
                f"{file}: not a valid .safetensors file (header length {length} is larger than "
                f"the file, {size} bytes)"
            )
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, ValueError):
            raise BadInput(f"{file}: not a valid .safetensors file (header is not JSON)") from None
    if not isinstance(header, dict):
        raise BadInput(f"{file}: not a valid .safetensors file (header is not an object)")
    metadata = header.pop("__metadata__", None) or {}
    return header, metadata if isinstance(metadata, dict) else {}, 8 + length


def _read_safetensors(file: Path, tensor: str | None) -> Loaded:
    header, metadata, data_start = _safetensors_header(file)
    names = sorted(header)
    if not names:
        raise BadInput(f"{file}: holds no tensors")
    if tensor is None:
        if len(names) > 1:
            raise BadInput(
                f"{file} holds {len(names)} tensors ({', '.join(names)}); name one as {file}:NAME"
            )
        tensor = names[0]
    if tensor not in header:
        raise BadInput(f"{file}: no tensor {tensor!r}; it holds {', '.join(names)}")
    info = header[tensor]
    try:
        code, shape, (begin, end) = info["dtype"], [int(n) for n in info["shape"]], info["data_offsets"]
        begin, end = int(begin), int(end)
    except (KeyError, TypeError, ValueError):
        raise BadInput(f"{file}: malformed entry for tensor {tensor!r}") from None
    if code not in SAFETENSORS_DTYPES:
        what = "an integer or boolean" if code in SAFETENSORS_OTHER else f"a {code}"
        raise BadInput(f"{file}:{tensor} is {what} tensor, not a floating-point table")
    dtype = SAFETENSORS_DTYPES[code]
    itemsize = FORMATS[dtype].itemsize
    count = int(np.prod(shape, dtype=np.int64))
    size = file.stat().st_size
    if begin < 0 or end < begin or data_start + end > size or end - begin != count * itemsize:
        raise BadInput(
            f"{file}:{tensor}: data offsets [{begin}, {end}] do not fit a {code} tensor of shape "
            f"{tuple(shape)} in a file of {size} bytes"
        )
    _check_room(f"{file}:{tensor}", end - begin)
    with open(file, "rb") as f:
        f.seek(data_start + begin)
        raw = f.read(end - begin)
    storage = "<u2" if dtype == "bfloat16" else FORMATS[dtype].npy
    values = host_float(np.frombuffer(raw, dtype=storage), dtype).astype(np.float64)
    return Loaded(f"{file}:{tensor}", values.reshape(shape), dtype, _spec_from(metadata, tensor))


def _spec_from(metadata: dict, name: str) -> TableSpec | None:
    """The TableSpec pe-cli stored in the metadata, if it did and it still validates."""
    from dataclasses import fields

    prefix = f"{name}."
    params = {k[len(prefix):]: v for k, v in metadata.items() if k.startswith(prefix)}
    if not params:
        return None
    def value(text: str):
        try:
            return json.loads(text)
        except ValueError:
            return text  # a name (variant, convention, dtype, ...)

    try:
        values = {f.name: value(params[f.name]) for f in fields(TableSpec) if f.name in params}
        return TableSpec(**values)
    except (ValueError, TypeError, PeError):
        return None
