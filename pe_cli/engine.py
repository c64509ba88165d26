"""The one engine: a TableSpec in, row blocks (or a whole Table) out, for every family
(sinusoidal, rope, alibi, sincos2d: families.py holds their exact mathematics).

The exact variant streams in blocks with bounded memory: on the CPU through the C fast path
(angle addition from exactly computed rows, slices of about 1 MiB from two threads) where it
is built and the dtype is narrow, else through the exact kernel on numpy (no torch import);
on other devices through the same kernel on torch. Seed and library variants compute the
whole table at once in their own arithmetic, because that is what makes them bit-identical to
the notebooks and libraries. `blocks` gives the blocks in order; `fill` hands them to a
callback from the threads that computed them, for writers that place them by offset.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Iterator

import numpy as np

from . import exact
from .conventions import CONVENTIONS
from .dtypes import FORMATS, host_bits, host_float, torch_dtype
from .errors import BadInput, Unavailable
from .spec import TableSpec
from .variants import LIBRARY_VARIANTS, SEED_VARIANTS

# float64 work arrays per block: sin, cos and the kernel's temporaries, about 12 of them
_WORK_BYTES = 48 * 2**20
_WORK_ARRAYS = 12


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
        raise Unavailable(
            f"--device {device}: CUDA is not available here (torch {torch.__version__}, "
            f"{'built with' if torch.backends.cuda.is_built() else 'built without'} CUDA)"
        )
    if kind == "cuda" and ":" in device:
        index = device.split(":", 1)[1]
        if not index.isdigit() or int(index) >= torch.cuda.device_count():
            raise Unavailable(
                f"--device {device}: there are {torch.cuda.device_count()} CUDA devices"
            )
    if kind == "mps" and not has_mps:
        raise Unavailable(f"--device {device}: Apple MPS is not available here")
    return device


def available_memory() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


def memory_needed(spec: TableSpec, whole: bool) -> int:
    """Bytes the engine will hold at once: the table (when whole) and the working set."""
    held = spec.nbytes if whole else 0
    if spec.variant == "exact":
        return held + _WORK_BYTES
    compute = 8 if spec.compute_dtype == "float64" or spec.variant in LIBRARY_VARIANTS else 4
    # notebook or library arithmetic: angles, sin, cos and the zeros table in the compute
    # dtype (float64 numpy angles for some libraries), then a float64 copy to round once
    return held + spec.rows * spec.cols * (4 * compute + 8)


def check_memory(spec: TableSpec, whole: bool) -> None:
    need, have = memory_needed(spec, whole), available_memory()
    if need > have:
        raise BadInput(
            f"a {' x '.join(map(str, spec.dims))} {spec.dtype} table needs about {gib(need)} of "
            f"memory here and {gib(have)} is available; use fewer positions"
            + ("" if spec.variant != "exact" else ", or write it to a file (it streams)")
        )


def rows_per_block(spec: TableSpec) -> int:
    per_row = max(1, (spec.cols + 1) // 2)  # frequencies (or ALiBi keys) computed per row
    return max(1, min(spec.rows, _WORK_BYTES // (8 * _WORK_ARRAYS * per_row)))


try:  # the C fast path (setup.py builds it where a compiler is present)
    from . import _rotate
except ImportError:  # pragma: no cover - exercised by the fallback test
    _rotate = None

def preallocate(fd: int, nbytes: int) -> None:
    """Reserve a new file's blocks in one call (fallocate, through the C extension where it is
    built): writes then skip the file system's block reservation page by page, about 10%
    faster on this project's machine."""
    if _rotate is not None:
        _rotate.preallocate(fd, nbytes)


# Fast path geometry: a table is cut into groups of _GROUP rows, each anchored at an exactly
# computed row and reached from it in coarse steps of _FINE rows, then fine steps of one row,
# both from exactly computed tables. The kernel fills slices of a group of about _SLICE_BYTES,
# small enough to be written out while still in the processor's cache.
_FINE = 64
_COARSE = 64
_GROUP = _FINE * _COARSE
_ANCHORS = 16  # group anchors computed at once (numpy's cost is per call, not per row)
_SLICE_BYTES = 1 << 20
_FAST_KINDS = {"float32": 0, "float16": 1, "bfloat16": 2}
_WORKERS = 2  # slices computed at once (the C kernel releases the GIL)
_AHEAD = 4  # slices computed ahead of the consumer


class _Plan:
    """Per-table constants of the exact variant, computed once: the frequencies in turns, their
    chunks for the kernel, and the factor every sin and cos is multiplied by (RoPE's attention
    factor; None for 1)."""

    def __init__(self, spec: TableSpec):
        frequencies, scale = family_frequencies(spec)
        self.frequencies = frequencies
        self.turns = exact.turns(frequencies)
        self.chunks = exact.chunk_table(self.turns)
        self.scale = None if scale == 1 else scale
        self.scale_dd = None if self.scale is None else exact.dd(self.scale)
        self.convention = CONVENTIONS.get(spec.convention)

    def sin_cos_dd(self, positions) -> np.ndarray:
        """sin and cos as double-doubles for a list of positions: (4, rows, n) planes, sin hi,
        cos hi, sin lo, cos lo (the C kernel's tables), each within about 2**-88."""
        column = np.asarray(positions, dtype=np.float64)[:, None]
        (sin_hi, sin_lo), (cos_hi, cos_lo) = exact.sin_cos_dd(np, column, self.chunks)
        return np.ascontiguousarray(np.stack([sin_hi, cos_hi, sin_lo, cos_lo]))

    def steps_dd(self, step: int, count: int) -> np.ndarray:
        """sin_cos_dd of positions k*step for k < count, quicker: rows k < r and k = m*r
        (r*r >= count) computed, every other row one double-double rotation of two of them."""
        r = math.isqrt(count - 1) + 1
        low = self.sin_cos_dd([k * step for k in range(r)])
        high = self.sin_cos_dd([m * r * step for m in range(-(-count // r))])
        rows = exact.rotate_dd(high[:, :, None, :], low[:, None, :, :])  # (4, m, k, n)
        _, m, k, n = rows.shape
        return np.ascontiguousarray(rows.reshape(4, m * k, n)[:, :count])

    def planes(self, xp, positions: list[int], dtype: str, device: str = "cpu", chunks=None):
        """sin and cos (times the scale) for integer positions, every frequency, each element
        correctly rounded to dtype (float64 arrays on dtype's grid)."""
        chunks = self.chunks if chunks is None else chunks
        if xp is np:
            column = np.array(positions, dtype=np.float64)[:, None]
        else:
            column = xp.tensor(positions, dtype=xp.float64, device=device)[:, None]
        if dtype == "float64":
            results = exact.sin_cos_correct(xp, column, chunks, self.scale_dd)
        else:
            values = exact.sin_cos(xp, column, chunks)
            if self.scale is not None:
                values = [v * self.scale_dd[0] for v in values]
            results = [exact.round_to(xp, v, dtype) for v in values]
        planes = []
        for plane, (rounded, suspect) in enumerate(results):
            _fix_suspects(xp, rounded, suspect, positions, self, plane, dtype)
            planes.append(rounded)
        return planes


def family_frequencies(spec: TableSpec):
    """The exact angular frequencies (Decimal) of a spec's family and convention, and the
    factor every sin and cos is multiplied by."""
    from .families import rope_frequencies, rotary_dim, sincos2d_exponents

    if spec.family == "rope":
        dim = rotary_dim(spec.d_model, spec.rope_parameters)
        return rope_frequencies(dim, spec.base, spec.rope_parameters, spec.last_position + 1)
    if spec.family == "sincos2d":
        return exact.angular_frequencies(sincos2d_exponents(spec.d_model), spec.base), 1
    exponents = CONVENTIONS[spec.convention].exponents(spec.d_model)
    return exact.angular_frequencies(exponents, spec.base, spec.min_timescale), 1


def fast_path_available(spec: TableSpec, device: str) -> bool:
    if _rotate is None or device != "cpu" or spec.dtype not in _FAST_KINDS:
        return False
    if spec.family == "rope":  # cos and sin tables without an attention factor to round in
        return spec.part != "inv_freq" and family_frequencies(spec)[1] == 1
    return spec.family == "sinusoidal"


def _fix_suspects(xp, rounded, suspect, positions, plan, plane: int, dtype: str) -> None:
    """Recompute, in decimal, the few elements whose rounding the float64 value cannot decide."""
    if xp is np:
        rows, cols = np.nonzero(suspect)
        rows_h, cols_h = rows, cols
    else:
        rows, cols = xp.nonzero(suspect, as_tuple=True)
        rows_h, cols_h = rows.cpu().numpy(), cols.cpu().numpy()
    if len(rows_h) == 0:
        return
    values = []
    for i, j in zip(rows_h.tolist(), cols_h.tolist()):
        true = exact.decimal_sin_cos(positions[i], plan.turns[j])[plane]
        if plan.scale is not None:
            true = true * plan.scale
        values.append(exact.round_fraction(Fraction(true), dtype))
    if xp is np:
        rounded[rows, cols] = values
    else:
        rounded[rows, cols] = xp.tensor(values, dtype=rounded.dtype, device=rounded.device)


def _round_decimals(values, dtype: str) -> np.ndarray:
    return np.array([[exact.round_fraction(Fraction(v), dtype) for v in values]])


def _fill(spec: TableSpec, plan, xp, device: str, start: int, stop: int, chunks):
    """Rows start..stop of the exact table as float64 on dtype's grid (xp arrays)."""
    dtype = spec.dtype
    if spec.part == "inv_freq":
        return _round_decimals(plan.frequencies, dtype)
    if spec.family == "sincos2d":
        return _fill_sincos2d(spec, plan, xp, device, start, stop, chunks)
    positions = list(range(spec.offset + start, spec.offset + stop))
    sin, cos = plan.planes(xp, positions, dtype, device, chunks)
    if spec.family == "rope":
        return _rope_layout(xp, cos if spec.part == "cos" else sin, spec.convention)
    out = np.empty((stop - start, spec.d_model)) if xp is np else xp.empty(
        (stop - start, spec.d_model), dtype=xp.float64, device=device
    )
    plan.convention.place(out, sin, cos, spec.d_model)
    _zero_padding_row(out, spec, start, stop)
    return out


def _rope_layout(xp, plane, convention: str):
    """A RoPE part from its (rows, dim/2) plane: frequency i in columns i and i + dim/2
    (half) or 2i and 2i + 1 (interleaved)."""
    if convention == "half":
        return np.concatenate([plane, plane], axis=1) if xp is np else xp.cat([plane, plane], 1)
    return np.repeat(plane, 2, axis=1) if xp is np else plane.repeat_interleave(2, 1)


def _fill_sincos2d(spec, plan, xp, device, start, stop, chunks):
    from .families import SINCOS2D_BLOCKS

    width = spec.grid[1]
    patch = np.arange(start, stop) - int(spec.cls_token)
    live = patch >= 0
    coordinate = {"y": (patch[live] // width).tolist(), "x": (patch[live] % width).tolist()}
    planes = {c: plan.planes(xp, positions, spec.dtype, device, chunks) for c, positions in coordinate.items()}
    parts = [planes[c][0 if fn == "sin" else 1] for c, fn in SINCOS2D_BLOCKS[spec.convention]]
    table = np.concatenate(parts, axis=1) if xp is np else xp.cat(parts, 1)
    if live.all():
        return table
    out = np.zeros((stop - start, spec.d_model)) if xp is np else xp.zeros(
        (stop - start, spec.d_model), dtype=xp.float64, device=device
    )
    out[int(np.argmax(live)):] = table
    return out


def _alibi_blocks(spec: TableSpec, rows: int) -> Iterator:
    """ALiBi, exactly: each bias -m_h * distance rounded once (distance * m_h is a double-double
    product, the undecided few recomputed from the 70-digit slope)."""
    from .families import alibi_slopes

    slopes = alibi_slopes(spec.heads)
    if spec.part == "slopes":
        yield _cast(np, _round_decimals(slopes, spec.dtype), spec.dtype)
        return
    length = spec.seq_len
    keys = np.arange(length, dtype=np.float64)[None, :]
    factors = [exact.dd(m) for m in slopes]
    for start in range(0, spec.rows, rows):
        stop = min(spec.rows, start + rows)
        head, query = np.divmod(np.arange(start, stop), length)
        distance = query[:, None].astype(np.float64) - keys
        distance = np.abs(distance) if spec.part == "symmetric" else np.maximum(distance, 0)
        hi = np.empty_like(distance)
        lo = np.empty_like(distance)
        for h in np.unique(head).tolist():
            rows_h = head == h
            hi[rows_h], lo[rows_h] = exact.product_dd(np, distance[rows_h], factors[h])
        if spec.dtype == "float64":
            rounded, suspect = exact.decide_float64(np, hi, lo)
        else:
            rounded, suspect = exact.round_to(np, hi + lo, spec.dtype)
        for r, c in zip(*np.nonzero(suspect)):
            true = Fraction(slopes[head[r]]) * int(distance[r, c])
            rounded[r, c] = exact.round_fraction(true, spec.dtype)
        yield _cast(np, -rounded + 0.0, spec.dtype)  # + 0.0: no negative zeros


def _kernel_blocks(spec: TableSpec, device: str, rows: int, use_torch: bool | None = None):
    """The exact table in row blocks, every element from the exact kernel: numpy on the CPU,
    torch on other devices (use_torch=True runs the torch path on the CPU, which is how it is
    tested without a GPU)."""
    if spec.family == "alibi":
        for block in _alibi_blocks(spec, rows):
            yield block if device == "cpu" else _to_torch(block, spec.dtype).to(device)
        return
    plan = _Plan(spec)
    if use_torch is None:
        # MPS has no float64: there the exact table is computed on the CPU and moved
        use_torch = not (device == "cpu" or device.startswith("mps"))
    if use_torch:
        xp = _import_torch()
        chunks = xp.from_numpy(plan.chunks).to(device)
    else:
        xp, chunks = np, plan.chunks
    for start in range(0, spec.rows, rows):
        stop = min(spec.rows, start + rows)
        out = _fill(spec, plan, xp, device, start, stop, chunks)
        if xp is not np and isinstance(out, np.ndarray):
            out = xp.from_numpy(out).to(device)
        block = _cast(xp, out, spec.dtype)
        if device.startswith("mps"):
            block = _to_torch(block, spec.dtype).to(device)
        yield block


class _Rotation:
    """Slices of a table from the C kernel, the rare element it cannot decide recomputed in
    decimal."""

    def __init__(self, spec: TableSpec):
        self.spec = spec
        self.plan = _Plan(spec)
        n = len(self.plan.turns)
        self.n = n
        if spec.family == "rope":  # the kernel fills [sin | cos]; the part is laid out after
            self.width = 2 * n
            self.sin_col, self.cos_col = np.arange(n, dtype=np.int32), np.arange(n, 2 * n, dtype=np.int32)
            self.zero_col = np.empty(0, dtype=np.int32)
        else:
            self.width = spec.d_model
            self.sin_col, self.cos_col, self.zero_col = self.plan.convention.columns(spec.d_model)
        # the C kernel writes float32 rows as two arithmetic progressions of columns
        for col in (self.sin_col, self.cos_col[self.cos_col >= 0]):
            assert len(col) < 2 or np.all(np.diff(col) == col[1] - col[0]), "layout not affine"
        self.fine = self.plan.steps_dd(1, _FINE)
        self.coarse = self.plan.steps_dd(_FINE, -(-min(spec.seq_len, _GROUP) // _FINE))
        self.anchors = {}  # batches of _ANCHORS group anchors in progress, by batch number
        fmt = spec.format
        self.kind, self.precision, self.min_exponent = (
            _FAST_KINDS[spec.dtype], fmt.precision, fmt.min_exponent
        )
        rows = _SLICE_BYTES // (self.width * np.dtype(fmt.host).itemsize)
        self.slice_rows = 1 << (min(max(rows, _FINE), _GROUP).bit_length() - 1)  # divides _GROUP
        self.starts = range(0, spec.seq_len, self.slice_rows)  # the first row of each slice

    def buffer(self) -> np.ndarray:
        """Room for one slice, to hand to `block` again and again."""
        return np.empty((self.slice_rows, self.width), self.spec.format.host)

    def _anchor(self, row: int) -> np.ndarray:
        """The anchor of the group starting at `row`: (4, n) double-double planes."""
        batch, index = divmod(row // _GROUP, _ANCHORS)
        anchors = self.anchors.get(batch)
        if anchors is None:
            first = batch * _ANCHORS * _GROUP
            rows = range(first, min(first + _ANCHORS * _GROUP, self.spec.seq_len), _GROUP)
            anchors = self.anchors[batch] = self.plan.sin_cos_dd([self.spec.offset + r for r in rows])
            for old in list(self.anchors):  # list(): another thread may add one meanwhile
                if old < batch - 1:
                    self.anchors.pop(old, None)
        return np.ascontiguousarray(anchors[:, index])

    def block(self, start: int, out=None) -> np.ndarray:
        """The slice starting at row `start` (one of self.starts), in `out` when given."""
        spec, n = self.spec, self.n
        stop = min(start + self.slice_rows, spec.seq_len)
        rows, group = stop - start, start - start % _GROUP
        out = np.empty((rows, self.width), dtype=spec.format.host) if out is None else out[:rows]
        scratch = np.empty(4 * n)  # the coarse step's sin and cos, one row of narrow results
        suspects = np.empty(4 * n + 1024, dtype=np.int64)
        count = _rotate.rotate_block(
            out, self.kind, self.precision, self.min_exponent, rows, self.width, n, _FINE,
            self.coarse.shape[1], (start - group) // _FINE, self._anchor(group), self.coarse,
            self.fine, self.sin_col, self.cos_col, self.zero_col, scratch, suspects,
        )
        if count > len(suspects):  # too many to list: this slice takes the exact kernel
            first = spec.offset + start
            return next(_kernel_blocks(replace(spec, offset=first, seq_len=rows), "cpu", rows))
        if count:
            self._resolve(out, suspects[:count], spec.offset + start)
        if spec.family == "rope":
            return _rope_layout(np, out[:, n:] if spec.part == "cos" else out[:, :n], spec.convention)
        _zero_padding_row(out, spec, start, stop)
        return out

    def _resolve(self, out, suspects, first):
        index, plane = suspects // 2, suspects % 2
        row, freq = index // self.n, index % self.n
        dtype, turns = self.spec.dtype, self.plan.turns
        values = [
            exact.round_fraction(Fraction(exact.decimal_sin_cos(first + r, turns[f])[p]), dtype)
            for r, f, p in zip(row.tolist(), freq.tolist(), plane.tolist())
        ]
        columns = np.where(plane == 0, self.sin_col[freq], self.cos_col[freq])
        out[row, columns] = _cast(np, np.array(values), self.spec.dtype)


def _fast_blocks(spec: TableSpec, transient: bool = False) -> Iterator:
    """The fast path's slices in order, computed by _WORKERS threads up to _AHEAD ahead of the
    consumer; `transient`: in a ring of buffers, each valid until the next is asked for."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    rotation = _Rotation(spec)
    if len(rotation.starts) == 1:
        yield rotation.block(0)
        return
    # when slice k is submitted, slices k - _AHEAD .. k - 1 are pending and k - _AHEAD - 1,
    # yielded last, is done with: _AHEAD + 1 buffers go round
    ring = [rotation.buffer() for _ in range(_AHEAD + 1)] if transient else None
    pool = ThreadPoolExecutor(max_workers=_WORKERS)
    pending = deque()
    try:
        for k, start in enumerate(rotation.starts):
            pending.append(pool.submit(rotation.block, start, ring[k % len(ring)] if ring else None))
            if len(pending) > _AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _zero_padding_row(out, spec: TableSpec, start: int, stop: int) -> None:
    if spec.padding_idx is not None:
        row = spec.padding_idx - spec.offset
        if start <= row < stop:
            out[row - start] = 0


def _cast(xp, values, dtype: str):
    """Cast float64 values that already lie on dtype's grid (exact, whatever the library)."""
    if xp is not np:
        return values.to(torch_dtype(dtype))
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(dtype)


def _to_torch(block, dtype: str):
    torch = _import_torch()
    if not isinstance(block, np.ndarray):
        return block
    if dtype == "bfloat16":
        return torch.from_numpy(block.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(block)


def _formula_table(spec: TableSpec, device: str):
    """A seed or library variant's whole table, in its own arithmetic."""
    torch = _import_torch()
    if spec.variant in LIBRARY_VARIANTS:
        # the libraries build on the CPU; their numbers are defined there
        compute = "float32"
        table = LIBRARY_VARIANTS[spec.variant].compute(torch, np, spec).contiguous().to(device)
    else:
        compute = spec.compute_dtype or "float32"
        table = SEED_VARIANTS[spec.variant].compute(
            torch, spec.d_model, spec.offset, spec.seq_len, spec.base, torch_dtype(compute), device
        )
    if spec.dtype == compute:
        return table
    # one rounding from the computed values to the output dtype (torch's own casts from
    # float32 or float64 to float16/bfloat16 round twice)
    rounded, _ = exact.round_to(torch, table.to(torch.float64), spec.dtype)
    return _cast(torch, rounded, spec.dtype)


def prepare(spec: TableSpec) -> str:
    """Check, before any work or output, that the table can be built here; return the device."""
    device = resolve_device(spec.device)
    check_memory(spec, whole=spec.variant != "exact")
    compute = spec.compute_dtype or "float32"
    if spec.variant != "exact" and spec.last_position > FORMATS[compute].max_value:
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
    return _blocks(spec, prepare(spec), rows, transient)


def _blocks(spec: TableSpec, device: str, rows: int | None, transient: bool) -> Iterator:
    if spec.variant != "exact":
        return iter([_formula_table(spec, device)])
    if fast_path_available(spec, device) and rows is None:
        return _fast_blocks(spec, transient)
    return _kernel_blocks(spec, device, rows or rows_per_block(spec))


def fill(spec: TableSpec, emit) -> None:
    """Hand every row block of the table to emit(first_row, block), for consumers that place
    blocks by position: on the fast path from _WORKERS threads at once, in no particular
    order, each block valid only during its call (a writer's pwrite: every slice leaves from
    the processor that computed it, while it is in cache); else in order from this thread.
    The first exception, from emit or the work, stops every thread and is raised here."""
    import threading

    device = prepare(spec)
    if not (spec.variant == "exact" and fast_path_available(spec, device)):
        first = 0
        for block in _blocks(spec, device, None, transient=True):
            emit(first, block)
            first += len(block)
        return
    rotation = _Rotation(spec)
    stop, errors = threading.Event(), []

    def work(worker: int) -> None:
        buffer = rotation.buffer()
        try:
            for start in rotation.starts[worker::_WORKERS]:
                if stop.is_set():
                    return
                emit(start, rotation.block(start, buffer))
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            errors.append(e)
            stop.set()

    workers = range(min(_WORKERS, len(rotation.starts)))
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
        return _to_torch(self.values, self.spec.dtype).reshape(self.spec.dims)


def build(spec: TableSpec | None = None, **params) -> Table:
    """Build a whole table: `build(d_model=512, seq_len=1024)` or `build(TableSpec(...))`."""
    if spec is None:
        spec = TableSpec(**params)
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
