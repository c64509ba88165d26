"""The reader: .npy and .safetensors files a user hands us, opened without reading their data
and read in slices as float64 (or whole, where memory allows). Nothing is unpickled or
executed: .npy headers are parsed by numpy's header reader and object arrays refused;
.safetensors headers are checked against the file's size before any data is read."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.dtypes import FORMATS, host_float
from ..core.errors import BadInput, PeError
from ..core.limits import available_memory, human_size
from ..spec import TableSpec
from .formats import NPY_DTYPES, SAFETENSORS_DTYPES, SAFETENSORS_OTHER


@dataclass
class Loaded:
    """A table read from a file: float64 values in the file's shape, its dtype, its origin."""

    label: str
    values: np.ndarray
    dtype: str
    spec: TableSpec | None = None  # the parameters, when pe-cli wrote the file


@dataclass
class Stored:
    """A table in a file, opened without reading its data: where its elements lie, and any
    range of them read on demand as float64 (in slices of the file: memory stays bounded)."""

    label: str
    shape: tuple[int, ...]
    dtype: str  # pe-cli's name for the element type
    spec: TableSpec | None  # the parameters, when pe-cli wrote the file
    storage: np.dtype  # the elements as stored (bfloat16 as uint16 bits), byte order included
    fortran: bool
    path: Path | None  # None: the data is in memory (read from stdin)
    start: int  # byte offset of the first element
    data: bytes | None = None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def elements(self, first: int, stop: int, widen: bool = True) -> np.ndarray:
        """Elements first..stop-1 in C order (the file's order; a Fortran-order array is read
        through a map of the file), widened exactly to float64 (with `widen` False, as numpy
        computes with them: float32 and float16 as they are, bfloat16 as float32)."""
        count = stop - first
        if self.fortran:
            raw = np.asarray(self._mapped()[np.unravel_index(np.arange(first, stop), self.shape)])
        elif self.data is not None:
            raw = np.frombuffer(
                self.data, self.storage, count, self.start + first * self.storage.itemsize
            )
        else:
            raw = np.empty(count, self.storage)
            with open(self.path, "rb") as f:
                f.seek(self.start + first * self.storage.itemsize)
                if f.readinto(memoryview(raw).cast("B")) != raw.nbytes:
                    raise BadInput(f"{self.label}: the file was cut short while it was read")
        values = host_float(
            np.ascontiguousarray(raw).astype(self.storage.newbyteorder("="), copy=False), self.dtype
        )
        return values.astype(np.float64) if widen else values

    def _mapped(self) -> np.ndarray:
        if self.data is not None:
            flat = np.frombuffer(self.data, self.storage, self.size, self.start)
        else:
            flat = np.memmap(self.path, self.storage, "r", self.start, (self.size,))
        return flat.reshape(self.shape, order="F" if self.fortran else "C")

    def whole(self) -> np.ndarray:
        """Every element as float64 in the file's shape, refused first where memory is short."""
        check_room(self.label, self.size * 8)
        return self.elements(0, self.size).reshape(self.shape)


def split_source(source: str) -> tuple[str, str | None]:
    """'FILE' or 'FILE:TENSOR' → (file, tensor or None); a file whose own name has ':' wins."""
    if ":" in source and not Path(source).exists():
        path, tensor = source.rsplit(":", 1)
        return path, tensor or None
    return source, None


def looks_like_file(source: str) -> bool:
    path, _ = split_source(source)
    return (
        path == "-" or Path(path).exists() or Path(path).suffix.lower() in (".npy", ".safetensors")
    )


def read(source: str) -> Loaded:
    """Read 'FILE', 'FILE:TENSOR' (safetensors) or '-' (a .npy on stdin) whole, as float64."""
    stored = open_table(source)
    return Loaded(stored.label, stored.whole(), stored.dtype, stored.spec)


def open_table(source: str) -> Stored:
    """Open 'FILE', 'FILE:TENSOR' (safetensors) or '-' (a .npy on stdin): its header is read
    and checked against the file's size; its data is not read yet (stdin's is, being a pipe)."""
    path, tensor = split_source(source)
    if path == "-":
        return _npy(_stdin(), "stdin", None)
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
        with open(file, "rb") as f:
            head = f.read(_NPY_HEADER_MAX)
        return _npy(head, path, file)
    if file.suffix.lower() == ".safetensors" or tensor is not None:
        return _safetensors(file, tensor)
    raise BadInput(f"{path}: not a .npy or .safetensors file")


_NPY_HEADER_MAX = 1 << 20  # numpy's own readers refuse longer headers
_STDIN_CHUNK = 64 << 20


def _stdin() -> bytes:
    """All of stdin, refused (before memory runs out) when it outgrows what is available."""
    chunks, size = [], 0
    while chunk := sys.stdin.buffer.read(_STDIN_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        check_room("stdin", size, factor=3)  # the chunks, the joined bytes, and room to work
    return b"".join(chunks)


def check_room(label: str, nbytes: int, factor: int = 1) -> None:
    """Refuse, before allocating, `factor` times `nbytes` that would not fit in memory."""
    need, have = factor * nbytes, available_memory()
    if need > have:
        raise BadInput(
            f"{label}: this needs about {human_size(need)} of memory and {human_size(have)} is available"
        )


def _npy(data: bytes, label: str, file: Path | None) -> Stored:
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
    size = len(data) if file is None else file.stat().st_size
    if size - start < count * dtype.itemsize:
        raise BadInput(
            f"{label}: truncated: the header promises {count * dtype.itemsize} bytes of data "
            f"and {size - start} follow"
        )
    return Stored(
        label, tuple(shape), kind, None, dtype, fortran, file, start, data if file is None else None
    )


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


def _safetensors(file: Path, tensor: str | None) -> Stored:
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
        code, shape, (begin, end) = (
            info["dtype"],
            [int(n) for n in info["shape"]],
            info["data_offsets"],
        )
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
    storage = np.dtype("<u2" if dtype == "bfloat16" else FORMATS[dtype].npy)
    return Stored(
        f"{file}:{tensor}",
        tuple(shape),
        dtype,
        _spec_from(metadata, tensor),
        storage,
        False,
        file,
        data_start + begin,
    )


def _spec_from(metadata: dict, name: str) -> TableSpec | None:
    """The TableSpec pe-cli stored in the metadata, if it did and it still validates."""
    from dataclasses import fields

    prefix = f"{name}."
    params = {k[len(prefix) :]: v for k, v in metadata.items() if k.startswith(prefix)}
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
