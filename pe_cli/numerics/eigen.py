"""TensorFlow's float32 exp, sin and cos on the CPU, reproduced in numpy.

TensorFlow evaluates these with Eigen's packet math: exp by a split of x into m*ln 2 + r and
a degree-6 polynomial in r; sin and cos by reduction modulo pi/2 (four float32 pieces of
pi/2 for moderate arguments, a 2/pi fixed-point product for large ones) and short
polynomials. The x86-64 wheels do not fuse multiply-adds here, so every step below rounds
to float32 on its own. Eigen works in packets of 8 floats (AVX) and leaves the last
(size mod 8) elements of a tensor to the C library's scalar expf/sinf/cosf; `tensorflow_op`
does the same. The constants are Eigen's; the conformance tests compare the results with
TensorFlow itself, bit for bit.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from .frequencies import PI

F32 = np.float32


def _madd(a, b, c):
    return (a * b).astype(F32) + c  # two roundings: no fused multiply-add


def exp(x: np.ndarray) -> np.ndarray:
    x = np.minimum(x.astype(F32), F32(88.723))
    m = np.floor(_madd(x, F32(1.44269504088896341), F32(0.5)))
    r = _madd(m, F32(-0.693359375), x)
    r = _madd(m, F32(2.12194440e-4), r)
    r2 = r * r
    p_even = _madd(r2, F32(1.37449637986719608306884765625e-3), F32(4.166965186595916748046875e-2))
    p_odd = _madd(r2, F32(8.36894474923610687255859375e-3), F32(0.16666518151760101318359375))
    p_even = _madd(r2, p_even, F32(0.49999988079071044921875))
    y = _madd(r, p_odd, p_even)
    y = _madd(r2, y, r + F32(1))
    y = np.ldexp(y, m.astype(np.int32)).astype(F32)
    return np.where(x < F32(-104), F32(0), y)


def _two_over_pi_windows() -> np.ndarray:
    """32-bit windows, at 8-bit steps, over the first 24 bytes of 1/(2 pi) in binary."""
    with localcontext() as ctx:
        ctx.prec = 80
        stream = int(Decimal(1) / (2 * PI) * (Decimal(2) ** 192)).to_bytes(24, "big")
    padded = stream + bytes(2)
    return np.array(
        [int.from_bytes(bytes(3) + padded[: k + 1], "big") & 0xFFFFFFFF for k in range(26)],
        dtype=np.uint64,
    )


_TWO_OVER_PI = _two_over_pi_windows()


def _reduce_large(x: np.ndarray):
    """x - q*pi/2 and q for large positive float32 x, from a 2/pi fixed-point product."""
    u64 = np.uint64
    bits = x.view(np.uint32).astype(u64)
    e = (bits >> u64(23)) - u64(118)
    mantissa = ((bits & u64(0x7FFFFF)) | u64(0x800000)) << (e & u64(7))
    i = (e >> u64(3)).astype(np.int64)
    p = mantissa * _TWO_OVER_PI[i + 7]
    p = mantissa * _TWO_OVER_PI[i + 3] + (p >> u64(32))
    p = (((mantissa * _TWO_OVER_PI[i - 1]) & u64(0xFFFFFFFF)) << u64(32)) + p
    q = (p + (u64(1) << u64(61))) >> u64(62)
    p = p - (q << u64(62))
    remainder = p.view(np.int64).astype(np.float64) * 3.4061215800865545e-19  # pi/2 * 2**-62
    return remainder.astype(F32), q.astype(np.int32)


def _sin_or_cos(angle: np.ndarray, sine: bool) -> np.ndarray:
    angle = np.ascontiguousarray(angle, dtype=F32)
    x = np.abs(angle)
    y = x * F32(0.636619746685028076171875)  # 2/pi
    y_round = y + F32(12582912)  # 1.5 * 2**23: the low bits hold the nearest integer
    octant = y_round.view(np.int32).copy()
    y = y_round - F32(12582912)
    for piece in (
        -1.5703125,
        -0.000483989715576171875,
        1.62865035235881805419921875e-07,
        5.5644315544167710640977020375430583953857421875e-11,
    ):
        x = _madd(y, F32(piece), x)
    large = np.abs(angle) >= (F32(25966.0) if sine else F32(18838.0))
    if large.any():
        x[large], octant[large] = _reduce_large(np.abs(angle[large]))
    sign = (angle.view(np.int32) ^ (octant << 30)) if sine else ((octant + 1) << 30)
    sign = (sign & np.int32(-(2**31))).view(np.uint32)
    x2 = x * x
    cos_poly = F32(2.4372266125283204019069671630859375e-05)
    for c in (-0.00138865201734006404876708984375, 0.041666619479656219482421875, -0.5, 1.0):
        cos_poly = _madd(cos_poly, x2, F32(c))
    sin_poly = F32(-0.0001959234114083702898469196984621021329076029360294342041015625)
    for c in (
        0.0083326873655616851693794799871284340042620897293090820312500000,
        -0.1666666203982298255503735617821803316473960876464843750000000000,
    ):
        sin_poly = _madd(sin_poly, x2, F32(c))
    sin_poly = _madd(sin_poly * x2, x, x)
    even = (octant & 1) == 0
    chosen = np.where(even, sin_poly, cos_poly) if sine else np.where(even, cos_poly, sin_poly)
    return (chosen.astype(F32).view(np.uint32) ^ sign).view(F32)


def sin(angle: np.ndarray) -> np.ndarray:
    return _sin_or_cos(angle, True)


def cos(angle: np.ndarray) -> np.ndarray:
    return _sin_or_cos(angle, False)


PACKET = 8  # floats per AVX packet, TensorFlow's x86-64 baseline


def _libm(name: str):
    """The C library's scalar float function, as Eigen's scalar path calls it."""
    import ctypes
    import ctypes.util
    import math

    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
        function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
        return function
    except (OSError, AttributeError):  # no C library to ask: its float results, nearly always
        double = getattr(math, name[:-1])
        return lambda x: float(np.float32(double(x)))


def tensorflow_op(packet_op, scalar_name: str, x: np.ndarray) -> np.ndarray:
    """An elementwise TensorFlow op over a whole tensor: packets, then a scalar tail."""
    flat = np.ascontiguousarray(x, dtype=F32).reshape(-1)
    whole = len(flat) - len(flat) % PACKET
    out = np.empty_like(flat)
    out[:whole] = packet_op(flat[:whole])
    scalar = _libm(scalar_name)
    out[whole:] = [scalar(float(v)) for v in flat[whole:]]
    return out.reshape(np.shape(x))
