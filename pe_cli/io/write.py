"""The one writer: tables to .npy, .safetensors, csv/tsv or raw bytes, in a file or a pipe.

Files are written to a temporary file in the destination folder and renamed into place, so an
interrupted or failed write leaves no partial file and any old file as it was. Tables stream
block by block: a table never has to fit in memory to be written.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..core.dtypes import host_bits, host_float
from ..core.errors import BadInput, OutputError
from ..core.limits import human_size
from ..engine import blocks, fill, prepare
from ..numerics.fast import preallocate
from ..spec import TableSpec
from .formats import BINARY, EXTENSIONS, OUTPUT_FORMATS, npy_header, safetensors_layout

_TEXT_BYTES_PER_VALUE = 12  # for the disk-space estimate of csv/tsv


@dataclass
class Written:
    """What a write produced: where, in which format, how many bytes."""

    destination: str
    format: str
    nbytes: int


def output_format(destination: str, fmt: str | None) -> str:
    """The format a destination is written in: `fmt`, else its extension's (npy for '-'); a
    `fmt` that another format's extension contradicts is refused (x.npy holding CSV)."""
    suffix = "" if destination == "-" else Path(destination).suffix.lower()
    if fmt is not None:
        if fmt not in OUTPUT_FORMATS:
            raise BadInput(f"unknown format {fmt!r}; choose from {', '.join(OUTPUT_FORMATS)}")
        named = EXTENSIONS.get(suffix, fmt)
        if named != fmt:
            ours = [ext for ext, found in EXTENSIONS.items() if found == fmt]
            raise BadInput(
                f"--format {fmt} contradicts the name {destination} ({suffix} is {named}); "
                f"drop --format, or name the file {' or '.join(ours)}"
            )
        return fmt
    if destination == "-":
        return "npy"
    if Path(destination).is_dir():
        raise BadInput(f"{destination} is a directory")
    if suffix not in EXTENSIONS:
        raise BadInput(
            f"cannot tell the format of {destination!r} from its extension; "
            f"use .npy, .safetensors, .csv, .tsv or .raw, or pass --format"
        )
    return EXTENSIONS[suffix]


def _check_tables(tables: dict[str, TableSpec], fmt: str) -> None:
    if not tables:
        raise BadInput("nothing to write")
    if fmt != "safetensors" and len(tables) > 1:
        raise BadInput(
            f"{fmt} holds one table, and these are {len(tables)} ({', '.join(tables)}); write "
            "them to a .safetensors file, or one at a time"
        )
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
        if fmt in BINARY and sys.stdout.isatty() and not force:
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
        raise BadInput(
            f"{destination} needs about {human_size(nbytes)} and {human_size(free)} is free there"
        )


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
        return data + len(safetensors_layout(tables)[1])
    if fmt == "npy":
        return data + len(npy_header(next(iter(tables.values()))))
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


def _no_progress(label: str, total: int):
    return nullcontext(lambda nbytes: None)


def _stream(
    out: BinaryIO,
    tables: dict[str, TableSpec],
    fmt: str,
    label: str,
    placed: bool = False,
    progress=_no_progress,
) -> int:
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
        order, header = safetensors_layout(tables)
        out.write(header)
    else:
        order = list(tables)
    for name in order:
        spec = tables[name]
        if fmt == "npy":
            out.write(npy_header(spec))
        elif fmt in ("csv", "tsv"):
            separator = "," if fmt == "csv" else "\t"
            columns = [f"d{j}" for j in range(spec.cols)]
            out.write((separator.join(["position", *columns]) + "\n").encode())
        row = spec.offset
        for block in blocks(spec, transient=True):
            if fmt in ("csv", "tsv"):
                out.write(
                    _text_rows(np.ascontiguousarray(host_bits(block)), spec.dtype, row, separator)
                )
            else:
                out.write(memoryview(_little_endian(block)))
            row += len(block)
    return out.count


def _place(fd: int, tables: dict[str, TableSpec], fmt: str, advance) -> int:
    """Binary formats into a new file by position: the header, then each block at its own
    offset, written by whichever thread computed it (engine.fill)."""
    if fmt == "safetensors":
        order, header = safetensors_layout(tables)
    else:
        order, header = list(tables), npy_header(next(iter(tables.values())))

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
        fill(
            spec,
            lambda first, block, base=offset, size=row_bytes: put(
                _little_endian(block), base + first * size
            ),
        )
        offset += spec.nbytes
    return offset


def _raise_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


@contextmanager
def _atomic(destination: str, force: bool):
    """A temporary file beside the destination, renamed onto it only when complete."""
    path = Path(destination)
    try:
        fd, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".partial"
        )
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


def write_file(destination: str, data: bytes, force: bool = False) -> None:
    """Any other file pe-cli writes (a figure), whole or not at all; --force to replace one."""
    try:
        with _atomic(destination, force) as out:
            left = memoryview(data)
            while left:  # an unbuffered file may take part of it at a time
                left = left[out.write(left) :]
    except OSError as e:
        raise OutputError(f"writing {destination}: {e.strerror or e}") from None


def write(
    destination: str,
    tables: dict[str, TableSpec] | TableSpec,
    fmt: str | None = None,
    force: bool = False,
    progress=_no_progress,
) -> Written:
    """Write one or more named tables to a path, or to stdout when destination is '-'.

    `progress(label, total_bytes)` is a context manager giving advance(nbytes), called as the
    bytes go out (the command line's progress bar); by default nothing is shown."""
    if isinstance(tables, TableSpec):
        tables = {"pe": tables}
    fmt = output_format(destination, fmt)
    _check_tables(tables, fmt)
    _check_destination(destination, fmt, force, _estimate_bytes(tables, fmt))
    try:
        if destination == "-":
            out = sys.stdout.buffer
            nbytes = _stream(out, tables, fmt, "stdout", progress=progress)
            out.flush()
        elif _is_special(destination):
            # a device or FIFO (/dev/null, a named pipe): written in place, never replaced
            with open(destination, "wb") as out:
                nbytes = _stream(out, tables, fmt, Path(destination).name, progress=progress)
        else:
            with _atomic(destination, force) as out:
                nbytes = _stream(
                    out, tables, fmt, Path(destination).name, placed=True, progress=progress
                )
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputError(f"writing {destination}: {e.strerror or e}") from None
    return Written(destination, fmt, nbytes)
