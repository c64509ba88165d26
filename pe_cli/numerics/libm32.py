"""The machine's C math library in float32, through ctypes, and an exact float32 fused
multiply-add in numpy: what an engine's C code computes (ggml's CPU rope calls libm's powf,
logf, cosf and sinf, and its x86 build fuses two multiply-adds).

libm's float32 functions are not correctly rounded (glibc's cosf and sinf differ from the
float64 values rounded in about 1% of RoPE's angles), so no numpy function can stand in for
them: each element goes through libm itself, about 0.4 us a call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import numpy as np

from ..core.errors import Unavailable

F32 = np.float32


@cache
def libm():
    """The C math library the process has loaded (glibc's libm.so.6 on Linux), with the
    float32 functions' signatures declared."""
    name = ctypes.util.find_library("m") or "libm.so.6"
    try:
        library = ctypes.CDLL(name)
    except OSError as e:
        raise Unavailable(f"the C math library ({name}) cannot be loaded here: {e}") from e
    one, two = [ctypes.c_float], [ctypes.c_float] * 2
    for function, arguments in (
        ("powf", two),
        ("logf", one),
        ("cosf", one),
        ("sinf", one),
        ("floorf", one),
        ("ceilf", one),
        ("fmaf", [ctypes.c_float] * 3),
    ):
        found = getattr(library, function)
        found.restype, found.argtypes = ctypes.c_float, arguments
    return library


def scalar(function: str, *arguments) -> np.float32:
    """One libm float32 call (powf, logf, floorf, ceilf, fmaf) on float32 arguments."""
    return F32(getattr(libm(), function)(*(float(F32(a)) for a in arguments)))


def elementwise(function: str, values) -> np.ndarray:
    """libm's cosf or sinf of every element of a float32 array, one call each."""
    values = np.asarray(values, dtype=F32)
    call = getattr(libm(), function)
    out = np.fromiter(map(call, values.ravel().tolist()), dtype=F32, count=values.size)
    return out.reshape(values.shape)


def fma32(a, b, c) -> np.ndarray:
    """round32(a*b + c), once, for float32 arrays (C's fmaf, vfmadd on x86), results in
    float32's normal range or zero.

    a*b is exact in float64 (24 + 24 bits); s = a*b + c rounded to float64, and TwoSum gives
    its error e exactly. Rounding to odd (s moved one float64 ulp towards e when e != 0 and s
    is even) keeps the sticky bit, and a float64 rounded to odd rounds to float32 as the exact
    sum does (53 >= 24 + 2 bits), with no double rounding."""
    product = np.asarray(a, F32).astype(np.float64) * np.asarray(b, F32).astype(np.float64)
    addend = np.asarray(c, F32).astype(np.float64)
    total = product + addend
    virtual = total - addend
    error = (product - virtual) + (addend - (total - virtual))
    bits = np.atleast_1d(total).view(np.uint64)
    even = (bits & np.uint64(1)) == 0
    inexact = np.atleast_1d(error) != 0
    towards = np.where(np.atleast_1d(error) > 0, np.inf, -np.inf)
    odd = np.where(even & inexact, np.nextafter(np.atleast_1d(total), towards), total)
    return odd.astype(F32).reshape(np.shape(total))
