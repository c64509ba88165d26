"""The one engine: a TableSpec in, row blocks (or a whole Table) out, for every family.

The exact variant streams in blocks with bounded memory: on the CPU through the C fast path
(numerics/fast.py, slices of about 1 MiB from two threads) where it is built, the dtype is
narrow and the family offers its columns, else through the exact kernel on numpy (no torch
import); on other devices through the same kernel on torch. A family computes its rows
(`exact_rows`) from correctly rounded sinusoids the engine hands it. Seed and library variants
compute the whole table at once in their own arithmetic, because that is what makes them
bit-identical to the notebooks and libraries. `blocks` gives the blocks in order; `fill` hands
them to a callback from the threads that computed them, for writers that place them by offset.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .core.dtypes import FORMATS, as_torch, cast_exact, host_bits, host_float
from .core.errors import BadInput, Unavailable
from .core.limits import available_memory, human_size, one_thread
from .families import FAMILIES, find_variant
from .numerics import exact, fast
from .numerics.sinusoids import Sinusoids, Workspace
from .spec import TableSpec, keyword_help, keyword_signature, spec_from_keywords

# float64 work arrays per block: sin, cos and the kernel's temporaries, about 12 of them
_WORK_BYTES = 48 * 2**20
_WORK_ARRAYS = 12
_WORKERS = 2  # fast-path slices computed at once (the C kernel releases the GIL)
_AHEAD = 4  # slices computed ahead of the consumer


def _import_torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - torch is a dependency
        raise Unavailable(f"this needs torch, which failed to import: {e}") from None
    return torch


def resolve_device(device: str) -> str:
    """'auto' → the best available; a device that is not here → Unavailable."""
    if device == "cpu":
        return device
    torch = _import_torch()
    kind = device.split(":")[0]
    has_cuda = torch.cuda.is_available()
    has_mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if kind == "auto":
        return "cuda" if has_cuda else "mps" if has_mps else "cpu"
    if kind == "cuda" and not has_cuda:
        if torch.backends.cuda.is_built():
            why = (
                f"built with CUDA {torch.version.cuda}, finds no GPU: none here, or its driver "
                "is missing or too old): use --device cpu, or check the driver with nvidia-smi"
            )
        else:
            why = (
                "built without CUDA): use --device cpu, or install a CUDA build of torch "
                "(on Linux PyPI's own: pip install --force-reinstall torch; elsewhere see "
                "pytorch.org/get-started)"
            )
        raise Unavailable(
            f"--device {device}: CUDA is not available here (torch {torch.__version__}, {why}"
        )
    if kind == "cuda" and ":" in device:
        index = device.split(":", 1)[1]
        if not index.isdigit() or int(index) >= torch.cuda.device_count():
            raise Unavailable(
                f"--device {device}: there are {torch.cuda.device_count()} CUDA devices"
            )
    if kind == "mps" and not has_mps:
        why = (
            "Apple silicon or an AMD GPU with macOS 12.3 or later"
            if torch.backends.mps.is_built()
            else f"a torch built with MPS, as macOS's are (this is {torch.__version__})"
        )
        raise Unavailable(
            f"--device {device}: Apple MPS is not available here: it needs {why}; use --device cpu"
        )
    return device


def memory_needed(spec: TableSpec, whole: bool) -> int:
    """Bytes the engine will hold at once: the table (when whole) and the working set."""
    held = spec.nbytes if whole else 0
    variant = find_variant(spec)
    if variant is None:
        return held + _WORK_BYTES
    compute = 8 if spec.compute_dtype == "float64" or variant.kind != "seed" else 4
    # notebook or library arithmetic: angles, sin, cos and the zeros table in the compute
    # dtype (float64 numpy angles for some libraries), then a float64 copy to round once
    return held + spec.rows * spec.cols * (4 * compute + 8)


def check_memory(spec: TableSpec, whole: bool) -> None:
    need, have = memory_needed(spec, whole), available_memory()
    if need > have:
        raise BadInput(
            f"a {' x '.join(map(str, spec.dims))} {spec.dtype} table needs about {human_size(need)} of "
            f"memory here and {human_size(have)} is available; use fewer positions"
            + ("" if find_variant(spec) is not None else ", or write it to a file (it streams)")
        )


def rows_per_block(spec: TableSpec) -> int:
    per_row = max(1, (spec.cols + 1) // 2)  # frequencies (or ALiBi keys) computed per row
    return max(1, min(spec.rows, _WORK_BYTES // (8 * _WORK_ARRAYS * per_row)))


def _sinusoids(spec: TableSpec) -> Sinusoids | None:
    found = FAMILIES[spec.family].frequencies(spec)
    return None if found is None else _kernel_constants(tuple(found.values), found.factor)


@lru_cache(maxsize=16)  # identification builds many tables of the same frequencies
def _kernel_constants(frequencies: tuple, scale) -> Sinusoids:
    return Sinusoids(list(frequencies), scale)


def _fast_plan(spec: TableSpec, device: str):
    """(sinusoids, kernel columns) of a table the C fast path fills, or None where it does not:
    it serves exact tables on the CPU in the narrow dtypes, of families that give its columns,
    whose sines and cosines carry no factor or one below fast.MAX_SCALE (RoPE's attention
    factor, multiplied into the kernel's anchors)."""
    if find_variant(spec) is not None or device != "cpu" or not fast.available(spec.dtype):
        return None
    columns = FAMILIES[spec.family].fast_columns(spec)
    if columns is None:
        return None
    sinusoids = _sinusoids(spec)
    fits = sinusoids.scale is None or 0 < sinusoids.scale < fast.MAX_SCALE
    return (sinusoids, columns) if fits else None


def _kernel_blocks(
    spec: TableSpec,
    device: str,
    rows: int,
    use_torch: bool | None = None,
    start: int = 0,
    stop: int | None = None,
):
    """Rows start..stop of the exact table in blocks of `rows`, every element from the exact
    kernel: numpy on the CPU, torch on other devices (use_torch=True runs the torch path on the
    CPU, which is how it is tested without a GPU)."""
    if use_torch is None:
        # MPS has no float64: there the exact table is computed on the CPU and moved
        use_torch = not (device == "cpu" or device.startswith("mps"))
    xp = _import_torch() if use_torch else np
    work = Workspace(xp, device, spec.dtype, _sinusoids(spec))
    family = FAMILIES[spec.family]
    stop = spec.rows if stop is None else stop
    for first in range(start, stop, rows):
        out = family.exact_rows(spec, first, min(stop, first + rows), work)
        if xp is not np and isinstance(out, np.ndarray):
            out = xp.from_numpy(out).to(device)
        block = cast_exact(out, spec.dtype)
        if device != "cpu" and isinstance(block, np.ndarray):
            block = as_torch(block, spec.dtype).to(device)
        yield block


class _Slices:
    """The fast path's slices of a table, each finished by its family; a slice whose undecided
    elements are too many for the kernel to list takes the exact kernel instead."""

    def __init__(self, spec: TableSpec, plan):
        self.spec, self.family = spec, FAMILIES[spec.family]
        sinusoids, columns = plan
        self.rotation = fast.Rotation(sinusoids, spec.offset, spec.rows, columns, spec.dtype)
        self.starts = self.rotation.starts

    def buffer(self) -> np.ndarray:
        return self.rotation.buffer()

    def block(self, start: int, out=None) -> np.ndarray:
        stop = min(start + self.rotation.slice_rows, self.spec.rows)
        raw = self.rotation.block(start, out)
        if raw is None:
            return next(_kernel_blocks(self.spec, "cpu", stop - start, start=start, stop=stop))
        return self.family.fast_finish(self.spec, raw, start, stop)


def _fast_blocks(spec: TableSpec, plan, transient: bool = False) -> Iterator:
    """The fast path's slices in order, computed by _WORKERS threads up to _AHEAD ahead of the
    consumer; `transient`: in a ring of buffers, each valid until the next is asked for."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    slices = _Slices(spec, plan)
    if len(slices.starts) == 1:
        yield slices.block(0)
        return
    # when slice k is submitted, slices k - _AHEAD .. k - 1 are pending and k - _AHEAD - 1,
    # yielded last, is done with: _AHEAD + 1 buffers go round
    ring = [slices.buffer() for _ in range(_AHEAD + 1)] if transient else None
    pool = ThreadPoolExecutor(max_workers=_WORKERS)
    pending = deque()
    try:
        for k, start in enumerate(slices.starts):
            pending.append(pool.submit(slices.block, start, ring[k % len(ring)] if ring else None))
            if len(pending) > _AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _formula_table(spec: TableSpec, device: str):
    """A seed or library variant's whole table, in its own arithmetic (libraries build on the
    CPU, where their numbers are defined, and the table moves to the device)."""
    torch = _import_torch()
    with one_thread(
        torch
    ):  # every run of a command gives the same table (the library's on most runs)
        table = find_variant(spec).compute(spec, device).contiguous().to(device)
    if table.dtype == getattr(torch, spec.dtype):
        return table
    # one rounding from the computed values to the output dtype (torch's own casts from
    # float32 or float64 to float16/bfloat16 round twice)
    rounded, _ = exact.round_to(torch, table.to(torch.float64), spec.dtype)
    return cast_exact(rounded, spec.dtype)


def prepare(spec: TableSpec) -> str:
    """Check, before any work or output, that the table can be built here; return the device."""
    device = resolve_device(spec.device)
    check_memory(spec, whole=find_variant(spec) is not None)
    compute = spec.compute_dtype or "float32"
    if find_variant(spec) is not None and spec.last_position > FORMATS[compute].max_value:
        raise BadInput(
            f"positions up to {spec.last_position} overflow {compute} (largest "
            f"{FORMATS[compute].max_value:g}); the notebook's table would be NaN there"
        )
    return device


def blocks(spec: TableSpec, rows: int | None = None, transient: bool = False) -> Iterator:
    """Row blocks of the table seen as 2-D (spec.rows, spec.cols), in order, on the spec's device.

    numpy arrays on the CPU (bfloat16 as uint16 bits), torch tensors elsewhere. Everything
    that can be refused is refused here, before the first block is asked for. `transient`
    blocks may share memory: each is valid only until the next is asked for (for consumers
    that write each block out at once).
    """
    device = prepare(spec)
    return _blocks(
        spec, device, rows, transient, _fast_plan(spec, device) if rows is None else None
    )


def _blocks(spec: TableSpec, device: str, rows: int | None, transient: bool, plan) -> Iterator:
    if find_variant(spec) is not None:
        return iter([_formula_table(spec, device)])
    if plan is not None:
        return _fast_blocks(spec, plan, transient)
    return _kernel_blocks(spec, device, rows or rows_per_block(spec))


def rows(spec: TableSpec, runs: list[tuple[int, int]]) -> np.ndarray:
    """Rows start..stop-1 of each (start, stop) run of an exact table, one after another, as
    a host numpy block, without the rows between them: from the exact kernel, the bits the
    fast path writes (for looking at a few rows of a long table; a seed or library variant
    computes its whole table: build it)."""
    if find_variant(spec) is not None:
        raise ValueError("engine.rows serves exact tables; build a variant's table whole")
    parts = [
        block
        for start, stop in runs
        for block in _kernel_blocks(spec, "cpu", rows_per_block(spec), start=start, stop=stop)
    ]
    return np.concatenate(parts) if parts else np.zeros((0, spec.cols))


def fill(spec: TableSpec, emit) -> None:
    """Hand every row block of the table to emit(first_row, block), for consumers that place
    blocks by position: on the fast path from _WORKERS threads at once, in no particular
    order, each block valid only during its call (a writer's pwrite: every slice leaves from
    the processor that computed it, while it is in cache); else in order from this thread.
    The first exception, from emit or the work, stops every thread and is raised here."""
    import threading

    device = prepare(spec)
    plan = _fast_plan(spec, device)
    if plan is None:
        first = 0
        for block in _blocks(spec, device, None, True, None):
            emit(first, block)
            first += len(block)
        return
    slices = _Slices(spec, plan)
    stop, errors = threading.Event(), []

    def work(worker: int) -> None:
        buffer = slices.buffer()
        try:
            for start in slices.starts[worker::_WORKERS]:
                if stop.is_set():
                    return
                emit(start, slices.block(start, buffer))
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            errors.append(e)
            stop.set()

    workers = range(min(_WORKERS, len(slices.starts)))
    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:  # an interrupt in this thread stops the workers after their current slice
        stop.set()
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]


@dataclass
class Table:
    """A built table: its spec, its values (2-D, on the spec's device) and the time it took."""

    spec: TableSpec
    values: object  # np.ndarray (bfloat16 as uint16 bits) or torch.Tensor
    seconds: float

    def numpy(self) -> np.ndarray:
        """The table as a numpy array in the spec's shape. numpy has no bfloat16: use .torch()."""
        if self.spec.dtype == "bfloat16":
            raise BadInput("numpy has no bfloat16; use Table.torch(), or dtype float32")
        return host_bits(self.values).reshape(self.spec.dims)

    def float64(self) -> np.ndarray:
        """The values widened exactly to float64 (any dtype), in the spec's shape."""
        return host_float(self.values, self.spec.dtype).astype(np.float64).reshape(self.spec.dims)

    def torch(self):
        """The table as a torch tensor in the spec's shape, on the spec's device."""
        return as_torch(self.values, self.spec.dtype).reshape(self.spec.dims)


def build(spec: TableSpec | None = None, **params) -> Table:
    """Build a whole table: `build(d_model=512, seq_len=1024)`, `build(preset="flux",
    grid="64x64", text_tokens=512)` or `build(TableSpec(...))`. A keyword that is no table
    parameter is refused with the nearest one's name. The parameters:

    """
    if spec is None:
        spec = spec_from_keywords(**params)
    elif params:
        raise TypeError("pass a TableSpec or keyword parameters, not both")
    check_memory(spec, whole=True)
    started = time.perf_counter()
    parts = list(blocks(spec))
    if len(parts) == 1:
        values = parts[0]
    elif isinstance(parts[0], np.ndarray):
        values = np.concatenate(parts)
    else:
        values = _import_torch().cat(parts)
    return Table(spec, values, time.perf_counter() - started)


# help() and editors see every parameter by name, from their declarations
build.__signature__ = keyword_signature(
    inspect.Parameter(
        "spec", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation="TableSpec | None"
    )
)
build.__doc__ = build.__doc__.rstrip() + "\n\n" + keyword_help()
