"""float32 arithmetic as a C library's compiled code does it, in numpy: the fused multiply-add
(one rounding of a*b + c), the one rounding of float32 values to float16 or bfloat16, and the
machine's own libm float functions (logf, powf, sinf, cosf) through ctypes.

An engine's float32 kernels (MLX's Cephes sin/cos, its exp) are chains of these; numpy has
every plain float32 operation correctly rounded, but no fused multiply-add and no bfloat16.
A C library's float functions are not correctly rounded (glibc's logf and powf differ from the
float64 result rounded once in about 1 in 10,000 arguments), so the library that computed a
table is called, not modelled.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import numpy as np

from ..core.errors import Unavailable

F32 = np.float32
F64 = np.float64

# a float64 whose 29 bits below float32's last place are 1000...0 lies halfway between two
# float32 values: rounding it again may differ from rounding the exact value once
_BELOW_FLOAT32 = np.uint64((1 << 29) - 1)
_HALFWAY = np.uint64(1 << 28)
_SMALLEST_NORMAL = 2.0**-126


def fma(a, b, c) -> np.ndarray:
    """a*b + c of float32 values (arrays or scalars) rounded once to float32, as the FMA
    instruction (std::fma) gives it.

    The product of two float32 values is exact in float64, so only the sum rounds before the
    final rounding to float32. That double rounding differs from one rounding only where the
    float64 sum falls halfway between two float32 values (or below float32's normal range);
    there the sum's error (TwoSum) moves it one float64 ulp toward the exact value (rounding
    to odd), which float32 rounding then gets right."""
    product = np.asarray(a, F32).astype(F64) * np.asarray(b, F32).astype(F64)
    addend = np.asarray(c, F32).astype(F64)
    total = product + addend
    bits = np.asarray(total).view(np.uint64)
    doubtful = ((bits & _BELOW_FLOAT32) == _HALFWAY) | (np.abs(total) < _SMALLEST_NORMAL)
    if np.any(doubtful):
        total = np.array(total, dtype=F64)  # writable, whatever the inputs' shapes
        product, addend = (
            np.broadcast_to(product, total.shape),
            np.broadcast_to(addend, total.shape),
        )
        p, q, s = product[doubtful], addend[doubtful], total[doubtful]
        virtual = s - p
        error = (p - (s - virtual)) + (q - virtual)  # TwoSum: s + error == p + q exactly
        even = (s.view(np.uint64) & np.uint64(1)) == 0
        nudge = (error != 0) & even
        s[nudge] = np.nextafter(s[nudge], np.where(error[nudge] > 0, np.inf, -np.inf))
        total[doubtful] = s
    return np.asarray(total).astype(F32)


def round_to(values, dtype: str) -> np.ndarray:
    """float32 values rounded once, to nearest even, to float32, float16 or bfloat16, and
    held as float32 (which holds both exactly)."""
    values = np.asarray(values, F32)
    if dtype == "float32":
        return values
    if dtype == "float16":
        return values.astype(np.float16).astype(F32)
    if dtype == "bfloat16":  # keep the top 16 bits, rounding the 16 below to nearest even
        bits = values.view(np.uint32)
        with np.errstate(over="ignore"):  # only NaNs wrap around, and they are kept as they are
            bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(
                0xFFFF0000
            )
        return np.where(np.isnan(values), values, bits.view(F32))
    raise ValueError(f"no float32 rounding to {dtype}")


@cache
def c_libm():
    """The machine's C math library (glibc's libm.so.6 on Linux), its float functions'
    signatures declared; Unavailable where it cannot be loaded."""
    name = ctypes.util.find_library("m")
    if name is None:
        raise Unavailable("no C math library (libm) is found on this machine")
    try:
        library = ctypes.CDLL(name)
    except OSError as error:
        raise Unavailable(f"the C math library {name} cannot be loaded ({error})") from None
    for function, arguments in (
        ("logf", 1),
        ("sinf", 1),
        ("cosf", 1),
        ("powf", 2),
        ("fmaf", 3),
    ):
        try:
            found = getattr(library, function)
        except AttributeError:
            raise Unavailable(f"the C math library has no {function}") from None
        found.restype = ctypes.c_float
        found.argtypes = [ctypes.c_float] * arguments
    return library


def libm_available() -> str | None:
    """None where the machine's libm loads, else why not."""
    try:
        c_libm()
    except Unavailable as error:
        return str(error)
    return None


def libm(function: str, *arguments) -> np.float32:
    """The machine's libm float function (logf, powf, sinf, cosf) of float32 arguments."""
    return F32(getattr(c_libm(), function)(*(float(F32(x)) for x in arguments)))


def libm_map(function: str, values) -> np.ndarray:
    """A one-argument libm float function (sinf, cosf) of each element, one call each (about
    0.4 us an element)."""
    call = getattr(c_libm(), function)
    values = np.asarray(values, F32)
    found = np.fromiter(map(call, values.reshape(-1).tolist()), dtype=F32, count=values.size)
    return found.reshape(values.shape)
