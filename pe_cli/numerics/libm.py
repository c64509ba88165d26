"""The C library's own float32 sinf, cosf and powf over numpy arrays: what XLA's CPU backend
calls for float32 sin, cos and pow. jax[cpu] 0.10.2's jnp.sin, jnp.cos and jnp.power are
these, bit for bit, on x86-64 Linux (glibc); numpy's and torch's float32 sin and cos are not
(their own vectorized kernels). `_libm.c`, built at install, loops in C; without it each element
is one ctypes call, the same numbers more slowly."""

from __future__ import annotations

import numpy as np

try:
    from . import _libm
except ImportError:  # no C compiler at install: ctypes, element by element
    _libm = None


def _ctypes_call(name: str, *first):
    import ctypes
    import ctypes.util

    library = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    function = getattr(library, name)
    function.restype = ctypes.c_float
    function.argtypes = [ctypes.c_float] * (len(first) + 1)
    return lambda x: function(*first, float(x))


def _apply(name: str, values, *first) -> np.ndarray:
    values = np.ascontiguousarray(values, dtype=np.float32)
    out = np.empty_like(values)
    if _libm is not None:
        getattr(_libm, name)(*first, values, out)
        return out
    call = _ctypes_call(name, *first)
    out.reshape(-1)[:] = np.fromiter(map(call, values.reshape(-1)), np.float32, values.size)
    return out


def sinf(angles) -> np.ndarray:
    return _apply("sinf", angles)


def cosf(angles) -> np.ndarray:
    return _apply("cosf", angles)


def powf(base: float, exponents) -> np.ndarray:
    """powf(float32(base), x) for each float32 x."""
    return _apply("powf", exponents, float(np.float32(base)))
