"""The one writer: tables to .npy, .safetensors, csv/tsv or raw bytes, in a file or a pipe.

Files are written to a temporary file in the destination folder and renamed into place, so an
interrupted or failed write leaves no partial file and any old file as it was. Tables stream
block by block: a table never has to fit in memory to be written.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from . import __version__
from .dtypes import host_bits, host_float
from .engine import blocks, fill, gib, preallocate, prepare
from .errors import BadInput, OutputError, PeError
from .render import progress
from .spec import TableSpec

OUTPUT_FORMATS = ("npy", "safetensors", "csv", "tsv", "raw")
_BINARY = {"npy", "safetensors", "raw"}
_EXTENSIONS = {
    ".npy": "npy", ".safetensors": "safetensors", ".csv": "csv", ".tsv": "tsv",
    ".raw": "raw", ".bin": "raw",
}
_TEXT_BYTES_PER_VALUE = 12  # for the disk-space estimate of csv/tsv


@dataclass
class Written:
    """What a write produced: where, in which format, how many bytes."""

    destination: str
    format: str
    nbytes: int


def output_format(destination: str, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in OUTPUT_FORMATS:
            raise BadInput(f"unknown format {fmt!r}; choose from {', '.join(OUTPUT_FORMATS)}")
        return fmt
    if destination == "-":
        return "npy"
    if Path(destination).is_dir():
        raise BadInput(f"{destination} is a directory")
    suffix = Path(destination).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise BadInput(
            f"cannot tell the format of {destination!r} from its extension; "
            f"use .npy, .safetensors, .csv, .tsv or .raw, or pass --format"
        )
    return _EXTENSIONS[suffix]


def _check_tables(tables: dict[str, TableSpec], fmt: str) -> None:
    if not tables:
        raise BadInput("nothing to write")
    if fmt != "safetensors" and len(tables) > 1:
        raise BadInput(f"{fmt} holds one table and {len(tables)} were asked for; use .safetensors")
    for spec in tables.values():
        if fmt == "npy" and spec.dtype == "bfloat16":
            raise BadInput(
                "npy has no bfloat16; write .safetensors (dtype BF16), or use --dtype float32, "
                "which holds every bfloat16 value exactly"
            )
        prepare(spec)


def _is_special(destination: str) -> bool:
    path = Path(destination)
    return path.exists() and not path.is_file() and not path.is_dir()


def _check_destination(destination: str, fmt: str, force: bool, nbytes: int) -> None:
    if destination == "-":
        if fmt in _BINARY and sys.stdout.isatty() and not force:
            raise BadInput(
                "refusing to write binary data to a terminal; redirect or pipe it, "
                "use --format csv, or pass --force"
            )
        return
    if _is_special(destination):
        return
    path = Path(destination)
    if path.exists() and not force:
        raise BadInput(f"{destination} exists; pass --force to replace it")
    folder = path.parent
    if not folder.is_dir():
        raise BadInput(f"folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BadInput(f"cannot write in folder {str(folder)!r} (permission denied)")
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if nbytes > free:
        raise BadInput(f"{destination} needs about {gib(nbytes)} and {gib(free)} is free there")


def _npy_header(spec: TableSpec) -> bytes:
    import io

    buffer = io.BytesIO()
    header = {"descr": spec.format.npy, "fortran_order": False, "shape": spec.dims}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def _safetensors_layout(tables: dict[str, TableSpec]):
    # widest dtype first, as the safetensors library orders tensors, so every tensor's data
    # starts at a multiple of its item size
    order = sorted(tables, key=lambda name: (-tables[name].format.itemsize, name))
    metadata = {"pe_cli.version": __version__}
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


def _text_rows(bits: np.ndarray, dtype: str, start: int, separator: str) -> bytes:
    # numpy's shortest repr that reads back to the same value (bfloat16 via its exact float32)
    text = host_float(bits, dtype).astype(str)
    lines = [separator.join((str(start + i), *row)) for i, row in enumerate(text.tolist())]
    return ("\n".join(lines) + "\n").encode()


def _estimate_bytes(tables: dict[str, TableSpec], fmt: str) -> int:
    """The size of the output: exact for binary formats, an estimate for text."""
    if fmt in ("csv", "tsv"):
        return sum(s.rows * (s.cols + 1) * _TEXT_BYTES_PER_VALUE for s in tables.values())
    data = sum(s.nbytes for s in tables.values())
    if fmt == "safetensors":
        return data + len(_safetensors_layout(tables)[1])
    if fmt == "npy":
        return data + len(_npy_header(next(iter(tables.values()))))
    return data


class _Sink:
    """Writes everything it is given: a buffered pipe write can return short when the reader
    goes away, and only the next write reports the broken pipe."""

    def __init__(self, out: BinaryIO, advance):
        self.out = out
        self.count = 0
        self.advance = advance

    def write(self, data) -> None:
        view = memoryview(data).cast("B")
        size = len(view)
        while view:
            view = view[self.out.write(view) :]
        self.count += size
        self.advance(size)


def _stream(out: BinaryIO, tables: dict[str, TableSpec], fmt: str, label: str, placed: bool = False) -> int:
    """Write the tables in `fmt`; return the number of bytes written. `placed`: out is a new
    regular file, and binary formats are written by position (see _place)."""
    with progress(label, _estimate_bytes(tables, fmt)) as advance:
        if placed and fmt in ("npy", "safetensors"):
            return _place(out.fileno(), tables, fmt, advance)
        return _stream_into(_Sink(out, advance), tables, fmt)


def _little_endian(block) -> np.ndarray:
    bits = np.ascontiguousarray(host_bits(block))
    return bits.astype(bits.dtype.newbyteorder("<"), copy=False)


def _stream_into(out: _Sink, tables: dict[str, TableSpec], fmt: str) -> int:
    if fmt == "safetensors":
        order, header = _safetensors_layout(tables)
        out.write(header)
    else:
        order = list(tables)
    for name in order:
        spec = tables[name]
        if fmt == "npy":
            out.write(_npy_header(spec))
        elif fmt in ("csv", "tsv"):
            separator = "," if fmt == "csv" else "\t"
            columns = [f"d{j}" for j in range(spec.cols)]
            out.write((separator.join(["position", *columns]) + "\n").encode())
        row = spec.offset
        for block in blocks(spec, transient=True):
            if fmt in ("csv", "tsv"):
                out.write(_text_rows(np.ascontiguousarray(host_bits(block)), spec.dtype, row, separator))
            else:
                out.write(memoryview(_little_endian(block)))
            row += len(block)
    return out.count


def _place(fd: int, tables: dict[str, TableSpec], fmt: str, advance) -> int:
    """Binary formats into a new file by position: the header, then each block at its own
    offset, written by whichever thread computed it (engine.fill)."""
    if fmt == "safetensors":
        order, header = _safetensors_layout(tables)
    else:
        order, header = list(tables), _npy_header(next(iter(tables.values())))

    def put(data, offset: int) -> None:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):  # a short write goes on where it stopped
            done += os.pwrite(fd, view[done:], offset + done)
        advance(done)

    preallocate(fd, _estimate_bytes(tables, fmt))
    put(header, 0)
    offset = len(header)
    for name in order:
        spec = tables[name]
        row_bytes = spec.cols * spec.format.itemsize
        fill(spec, lambda first, block, base=offset: put(_little_endian(block), base + first * row_bytes))
        offset += spec.nbytes
    return offset


def _raise_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


@contextmanager
def _atomic(destination: str, force: bool):
    """A temporary file beside the destination, renamed onto it only when complete."""
    path = Path(destination)
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as e:
        raise BadInput(f"cannot write in folder {str(path.parent)!r} ({e.strerror})") from None
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    previous = None
    try:
        try:
            previous = signal.signal(signal.SIGTERM, _raise_on_sigterm)
        except ValueError:  # not the main thread: leave signals alone
            previous = None
        # no fsync: the rename makes the file whole or absent for any interruption of this
        # process; surviving a power cut as well needs `sync` (as after np.save or dd)
        # unbuffered: every write is a whole block, which a buffer would only copy once more
        with os.fdopen(fd, "wb", buffering=0) as out:
            yield out
        if force:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)  # fails rather than replace a file that appeared
            except FileExistsError:
                raise BadInput(f"{destination} exists; pass --force to replace it") from None
            os.unlink(temporary)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def write(
    destination: str,
    tables: dict[str, TableSpec] | TableSpec,
    fmt: str | None = None,
    force: bool = False,
) -> Written:
    """Write one or more named tables to a path, or to stdout when destination is '-'."""
    if isinstance(tables, TableSpec):
        tables = {"pe": tables}
    fmt = output_format(destination, fmt)
    _check_tables(tables, fmt)
    _check_destination(destination, fmt, force, _estimate_bytes(tables, fmt))
    try:
        if destination == "-":
            out = sys.stdout.buffer
            nbytes = _stream(out, tables, fmt, "stdout")
            out.flush()
        elif _is_special(destination):
            # a device or FIFO (/dev/null, a named pipe): written in place, never replaced
            with open(destination, "wb") as out:
                nbytes = _stream(out, tables, fmt, Path(destination).name)
        else:
            with _atomic(destination, force) as out:
                nbytes = _stream(out, tables, fmt, Path(destination).name, placed=True)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputError(f"writing {destination}: {e.strerror or e}") from None
    return Written(destination, fmt, nbytes)


# ---------------------------------------------------------------------------------------------
# Reading: .npy and .safetensors files a user hands us. Nothing is unpickled or executed.

_SAFETENSORS_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}
_SAFETENSORS_OTHER = {"I8", "U8", "I16", "U16", "I32", "U32", "I64", "U64", "BOOL", "F8_E4M3", "F8_E5M2"}
_NPY_DTYPES = {"f8": "float64", "f4": "float32", "f2": "float16"}


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
    from .engine import available_memory

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
    kind = _NPY_DTYPES.get(f"{dtype.kind}{dtype.itemsize}")
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
    if code not in _SAFETENSORS_DTYPES:
        what = "an integer or boolean" if code in _SAFETENSORS_OTHER else f"a {code}"
        raise BadInput(f"{file}:{tensor} is {what} tensor, not a floating-point table")
    dtype = _SAFETENSORS_DTYPES[code]
    from .dtypes import FORMATS

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
