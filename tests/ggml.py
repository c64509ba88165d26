"""ggml itself, for the conformance tests of --variant llama.cpp: ggml_rope_ext called through
ctypes on the shared libraries tools/build_ggml.sh builds from llama-cpp-python's sdist
(libggml-base.so, libggml-cpu.so), in $PE_CLI_GGML_LIB_DIR or else build/ggml/cmake/src; and
llama.cpp's sources beside them (build/ggml/llama.cpp, or $PE_CLI_LLAMA_CPP_SOURCE), whose
convert_hf_to_gguf code the tests run.

ggml keeps no table: it rotates its input. Rotating unit vectors reads one: with 1 in the
first column of each pair and 0 in the second, ggml-cpu's rotate_pairs writes
x0*cos - x1*sin = cos in the first and x0*sin + x1*cos = sin in the second. Columns past
n_dims are filled with a marker that must come back unchanged.

tests/markers.py counts this module as the reference library "ggml".
"""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILT = ROOT / "build" / "ggml"
LIB_DIR = Path(os.environ.get("PE_CLI_GGML_LIB_DIR") or BUILT / "cmake" / "src")
SOURCE = Path(os.environ.get("PE_CLI_LLAMA_CPP_SOURCE") or BUILT / "llama.cpp")
MODES = {"interleaved": 0, "half": 2}  # NORM, GGML_ROPE_TYPE_NEOX
_TYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1}  # GGML_TYPE_F32, F16
_I32 = 26  # GGML_TYPE_I32
UNROTATED = 7.0


class _InitParams(ctypes.Structure):  # struct ggml_init_params
    _fields_ = [
        ("mem_size", ctypes.c_size_t),
        ("mem_buffer", ctypes.c_void_p),
        ("no_alloc", ctypes.c_bool),
    ]


def unavailable() -> str | None:
    """Why ggml cannot be called here, or None."""
    missing = [n for n in ("libggml-base.so", "libggml-cpu.so") if not (LIB_DIR / n).is_file()]
    if missing:
        return f"ggml is not built in {LIB_DIR} (tools/build_ggml.sh builds it)"
    try:
        _libraries()
    except OSError as e:
        return f"ggml in {LIB_DIR} cannot be loaded: {e}"
    return None


@cache
def _libraries():
    base = ctypes.CDLL(str(LIB_DIR / "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    cpu = ctypes.CDLL(str(LIB_DIR / "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)
    pointer, i32, f32, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_float, ctypes.c_int64
    signatures = {
        (base, "ggml_init"): ([_InitParams], pointer),
        (base, "ggml_free"): ([pointer], None),
        (base, "ggml_new_tensor_1d"): ([pointer, i32, i64], pointer),
        (base, "ggml_new_tensor_3d"): ([pointer, i32, i64, i64, i64], pointer),
        (base, "ggml_get_data"): ([pointer], pointer),
        (base, "ggml_nbytes"): ([pointer], ctypes.c_size_t),
        (base, "ggml_rope_ext"): ([pointer] * 4 + [i32] * 3 + [f32] * 6, pointer),
        (base, "ggml_new_graph"): ([pointer], pointer),
        (base, "ggml_build_forward_expand"): ([pointer, pointer], None),
        (base, "ggml_graph_overhead"): ([], ctypes.c_size_t),
        (base, "ggml_tensor_overhead"): ([], ctypes.c_size_t),
        (cpu, "ggml_cpu_init"): ([], None),
        (cpu, "ggml_graph_compute_with_ctx"): ([pointer, pointer, i32], i32),
    }
    for (library, name), (arguments, result) in signatures.items():
        function = getattr(library, name)
        function.argtypes, function.restype = arguments, result
    cpu.ggml_cpu_init()
    return base, cpu


def _put(base, tensor, values: np.ndarray) -> None:
    values = np.ascontiguousarray(values)
    assert base.ggml_nbytes(tensor) == values.nbytes
    ctypes.memmove(base.ggml_get_data(tensor), values.ctypes.data, values.nbytes)


def rope_ext(x, positions, n_dims, mode, *, freq_factors=None, **arguments):
    """ggml_rope_ext(x (positions, head dim), positions, freq_factors, n_dims, mode, ...) on
    the CPU: the rotated x, its dtype (F32 or F16). `arguments`: freq_base, freq_scale,
    ext_factor, attn_factor, beta_fast, beta_slow (floats), n_ctx_orig (int)."""
    base, cpu = _libraries()
    x = np.ascontiguousarray(x)
    rows, head_dim = x.shape
    memory = 3 * x.nbytes + 4 * rows + 4 * head_dim + (1 << 22)
    memory += 16 * base.ggml_tensor_overhead() + base.ggml_graph_overhead()
    context = base.ggml_init(_InitParams(memory, None, False))
    assert context
    try:
        a = base.ggml_new_tensor_3d(context, _TYPES[x.dtype], head_dim, 1, rows)
        _put(base, a, x)
        b = base.ggml_new_tensor_1d(context, _I32, rows)
        _put(base, b, np.asarray(positions, dtype=np.int32))
        c = None
        if freq_factors is not None:
            # ggml-cpu reads a factor for every pair of the head, rotated or not; llama.cpp's
            # tensors hold n_dims/2: the rest are padding, never used
            factors = np.ones(max(head_dim // 2, len(freq_factors)), dtype=np.float32)
            factors[: len(freq_factors)] = freq_factors
            c = base.ggml_new_tensor_1d(context, 0, len(factors))
            _put(base, c, factors)
        given = {
            "freq_base": 10000.0,
            "freq_scale": 1.0,
            "ext_factor": 0.0,
            "attn_factor": 1.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "n_ctx_orig": 0,
        } | arguments
        out = base.ggml_rope_ext(
            context,
            a,
            b,
            c,
            n_dims,
            mode,
            int(given["n_ctx_orig"]),
            *(
                float(given[k])
                for k in (
                    "freq_base",
                    "freq_scale",
                    "ext_factor",
                    "attn_factor",
                    "beta_fast",
                    "beta_slow",
                )
            ),
        )
        graph = base.ggml_new_graph(context)
        base.ggml_build_forward_expand(graph, out)
        assert cpu.ggml_graph_compute_with_ctx(context, graph, 2) == 0
        result = np.empty_like(x)
        ctypes.memmove(result.ctypes.data, base.ggml_get_data(out), result.nbytes)
        return result
    finally:
        base.ggml_free(context)


def table(positions, head_dim, n_dims, convention, dtype=np.float32, part="cos", **arguments):
    """ggml's cos or sin table laid out as pe-cli lays out a rope table of that convention,
    (positions, n_dims): each rotated pair's value in both its columns."""
    positions = np.asarray(positions)
    half = n_dims // 2
    if convention == "interleaved":
        first, second = np.arange(half) * 2, np.arange(half) * 2 + 1
    else:
        first, second = np.arange(half), np.arange(half) + half
    out = np.empty((len(positions), n_dims), dtype=dtype)
    step = 16384
    for start in range(0, len(positions), step):
        chunk = positions[start : start + step]
        x = np.zeros((len(chunk), head_dim), dtype=dtype)
        x[:, first] = 1
        x[:, n_dims:] = UNROTATED
        y = rope_ext(x, chunk, n_dims, MODES[convention], **arguments)
        assert np.all(y[:, n_dims:] == dtype(UNROTATED)), "ggml changed an unrotated column"
        plane = y[:, first if part == "cos" else second]
        out[start : start + len(chunk), first] = plane
        out[start : start + len(chunk), second] = plane
    return out
