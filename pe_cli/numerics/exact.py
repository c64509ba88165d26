"""Correctly rounded sin(p*w) and cos(p*w) for integer positions p, in float64 array code.

The trap in every notebook is the argument: p*w in float32 (or even float64) carries an
absolute error that grows with p, and near a zero of sin that error is the whole answer.
Here the angle is kept in turns, t = p * w / (2*pi), and reduced modulo 1 exactly:

* w / (2*pi) is computed once per frequency to 70 digits (stdlib `decimal`) and cut into
  CHUNKS pieces of CHUNK_BITS bits each; p < 2**POSITION_BITS, so every product p*piece is
  an exact float64, and so is the sum of the first two pieces' fractional parts.
* The fraction is reduced to the nearest quarter turn and carried as a double-double;
  2*pi times it gives the angle on [-pi/4, pi/4], where libm's sin and cos are within about
  half an ulp (measured: 0.51 ulp for numpy and torch on x86-64).
* For float32, float16 and bfloat16 output the result, about 1 ulp of float64 from the
  truth, is rounded once (`sin_cos`, `round_to`); for float64 output sin and cos are
  evaluated in double-double (`sin_cos_correct`). Elements that land so near a rounding
  midpoint that the computed value cannot decide (11 in 33.5 million for float32) are
  recomputed with `decimal` at 60 digits.

The same kernel runs on numpy arrays (CPU) and torch tensors (any device).
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from ..core.dtypes import FORMATS
from ..core.limits import POSITION_BITS
from .frequencies import DIGITS as _DIGITS
from .frequencies import PI

CHUNK_BITS = 53 - POSITION_BITS
CHUNKS = 6  # w/(2*pi) to 2**-126: p * truncation < 2**-94 turns

_TWO_PI_HI = float(2 * PI)
_TWO_PI_LO = float(2 * PI - Decimal(_TWO_PI_HI))
_SPLITTER = 134217729.0  # 2**27 + 1, Dekker's split for float64


def turns(frequencies: list[Decimal]) -> list[Decimal]:
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        return [w / (2 * PI) for w in frequencies]


def chunk_table(turn_list: list[Decimal]) -> np.ndarray:
    """(CHUNKS, n) float64: row k holds bits k*CHUNK_BITS+1 .. (k+1)*CHUNK_BITS of each turn."""
    width = CHUNKS * CHUNK_BITS
    table = np.zeros((CHUNKS, len(turn_list)))
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        for j, f in enumerate(turn_list):
            fixed = int(f * (Decimal(2) ** width))  # floor: f > 0
            for k in range(CHUNKS):
                shift = width - (k + 1) * CHUNK_BITS
                piece = (fixed >> shift) & ((1 << CHUNK_BITS) - 1)
                table[k, j] = math.ldexp(piece, -(k + 1) * CHUNK_BITS)
    return table


def _two_sum(xp, a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _reduced_angle(xp, positions, chunks):
    """The angle 2*pi*p*f reduced to [-pi/4, pi/4] as a double-double, and its quadrant."""
    head = positions * chunks[0]
    head = head - xp.round(head)  # exact: p*m_0 is an integer times 2**-21
    second = positions * chunks[1]
    second = second - xp.round(second)
    frac = head + second  # exact: a multiple of 2**-42 below 1 in magnitude
    frac = frac - xp.round(frac)
    quadrant = xp.round(frac * 4)
    frac = frac - quadrant * 0.25  # exact, |frac| <= 1/8
    hi, lo = _two_sum(xp, frac, positions * chunks[2])
    for k in range(3, CHUNKS):
        hi, err = _two_sum(xp, hi, positions * chunks[k])
        lo = lo + err
    hi, lo = _two_sum(xp, hi, lo)
    # angle = 2*pi*(hi + lo) as a double-double (Dekker's product, no FMA needed)
    angle, err = _two_prod(hi, _TWO_PI_HI)
    angle, angle_lo = _fast_two_sum(angle, err + hi * _TWO_PI_LO + lo * _TWO_PI_HI)
    return angle, angle_lo, quadrant % 4


def _by_quadrant(xp, q, sin_r, cos_r):
    """sin and cos of (x + q*pi/2) from sin x and cos x."""
    sin_out = xp.where(q == 0, sin_r, xp.where(q == 1, cos_r, xp.where(q == 2, -sin_r, -cos_r)))
    cos_out = xp.where(q == 0, cos_r, xp.where(q == 1, -sin_r, xp.where(q == 2, -cos_r, sin_r)))
    return sin_out, cos_out


def sin_cos(xp, positions, chunks):
    """sin and cos of 2*pi*p*f for positions p and chunked turns f (broadcast together).

    positions: float64 holding integers below 2**POSITION_BITS, e.g. a (rows, 1) column.
    chunks: (CHUNKS, n) float64 from `chunk_table`.
    Returns two float64 arrays, each element within about 1 ulp of the truth.
    """
    angle, angle_lo, q = _reduced_angle(xp, positions, chunks)
    sin_hi, cos_hi = xp.sin(angle), xp.cos(angle)
    return _by_quadrant(xp, q, sin_hi + cos_hi * angle_lo, cos_hi - sin_hi * angle_lo)


# Double-double sin and cos, for float64 output and the fast path's tables: the reduced angle
# x = a_k + t with a_k = k*pi/1024 from a table and |t| <= pi/2048, where short series in
# double are accurate to about 2**-95 (the largest term rounded in double, t^4/24, is below
# 2.4e-13); sin(a_k + t) and cos(a_k + t) are then assembled in double-double. The reduced
# angle may pass pi/4 by up to 2*pi*2**-10 (its chunks beyond the second are not reduced):
# _MARGIN more steps on each side.
_STEPS = 1024
_MARGIN = 4


def _dd(value: Decimal) -> tuple[float, float]:
    hi = float(value)
    return hi, float(value - Decimal(hi))


@functools.cache
def _step_table() -> np.ndarray:
    """k*pi/1024, sin and cos of it, as double-double pairs, for |k| <= 256 + _MARGIN: the
    series for k = 1 at 50 digits, the other steps by angle addition (each adds about 1e-50)."""
    steps = _STEPS // 4 + _MARGIN
    with localcontext() as ctx:
        ctx.prec = 50
        sin_1, cos_1 = _taylor_sin_cos(PI / _STEPS)
        sin_k, cos_k, half = Decimal(0), Decimal(1), []
        for k in range(steps + 1):
            half.append((PI * k / _STEPS, sin_k, cos_k))
            sin_k, cos_k = sin_k * cos_1 + cos_k * sin_1, cos_k * cos_1 - sin_k * sin_1
        # inside the context: a negation or subtraction outside it would round to 28 digits
        rows = [(-a, -s, c) for a, s, c in reversed(half[1:])] + half
        return np.array([(*_dd(a), *_dd(s), *_dd(c)) for a, s, c in rows]).T.copy()


def _fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


def _two_prod(a, b):
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    return _fast_two_sum(p, e + (ah * bl + al * bh))


def dd_add(xp, ah, al, bh, bl):
    s, e = _two_sum(xp, ah, bh)
    return _fast_two_sum(s, e + (al + bl))


def dd_divide(ah, al, bh, bl):
    """A double-double over another: q = ah / bh, then the remainder a - q*b (Dekker's product
    exact, the difference exact by Sterbenz) over bh, to about 2**-100 relative."""
    q = ah / bh
    p, e = _two_prod(q, bh)
    return _fast_two_sum(q, ((ah - p) - e + al - q * bl) / bh)


def dd_sqrt(xp, hi, lo):
    """The square root of a double-double >= 0: x = sqrt(hi), then one Newton step (a - x*x)
    / 2x with x*x exact; 0 stays 0."""
    x = xp.sqrt(hi)
    p, e = _two_prod(x, x)
    safe = xp.where(x > 0, x, 1.0)
    return _fast_two_sum(x, xp.where(x > 0, ((hi - p) - e + lo) / (2 * safe), 0.0))


def sin_cos_dd(xp, positions, chunks):
    """sin and cos of 2*pi*p*f as double-doubles ((hi, lo), (hi, lo)), to about 2**-88."""
    angle, angle_lo, q = _reduced_angle(xp, positions, chunks)
    table = _step_table()
    if xp is not np:
        table = xp.from_numpy(table).to(angle.device)
    k = xp.round(angle * (_STEPS / math.pi))
    first = _STEPS // 4 + _MARGIN
    index = (k + first).long() if xp is not np else (k + first).astype(np.int64)
    a_hi, a_lo, sa_hi, sa_lo, ca_hi, ca_lo = (row[index] for row in table)
    t_hi, t_lo = _fast_two_sum(angle - a_hi, angle_lo - a_lo)  # angle - a_hi is exact
    # t^2 in double-double; the series' leading terms in double-double, the rest in double
    tt_hi, tt_lo = _two_prod(t_hi, t_hi)
    tt_lo = tt_lo + 2 * t_hi * t_lo
    t2 = tt_hi
    sixth_hi = tt_hi / 6
    p, e = _two_prod(sixth_hi, 6.0)
    sixth_lo = ((tt_hi - p) - e + tt_lo) / 6
    sin_tail = t2 * t2 * (1 / 120 - t2 * (1 / 5040 - t2 / 362880))
    w_hi, w_lo = _fast_two_sum(-sixth_hi, sin_tail - sixth_lo)
    one_w_hi, one_w_lo = _fast_two_sum(1.0, w_hi)
    st_hi, st_lo = dd_mul(t_hi, t_lo, one_w_hi, one_w_lo + w_lo)  # sin t = t (1 + w)
    cos_tail = t2 * t2 * (1 / 24 - t2 * (1 / 720 - t2 / 40320))
    v_hi, v_lo = _fast_two_sum(-0.5 * tt_hi, cos_tail - 0.5 * tt_lo)
    ct_hi, ct_lo = _fast_two_sum(1.0, v_hi)
    ct_lo = ct_lo + v_lo  # cos t = 1 + v
    # sin(a + t) = sin a cos t + cos a sin t; cos(a + t) = cos a cos t - sin a sin t
    s1 = dd_mul(sa_hi, sa_lo, ct_hi, ct_lo)
    s2 = dd_mul(ca_hi, ca_lo, st_hi, st_lo)
    sin_hi, sin_lo = dd_add(xp, *s1, *s2)
    c1 = dd_mul(ca_hi, ca_lo, ct_hi, ct_lo)
    c2 = dd_mul(sa_hi, sa_lo, st_hi, st_lo)
    cos_hi, cos_lo = dd_add(xp, *c1, -c2[0], -c2[1])
    sin_out, cos_out = _by_quadrant(xp, q, sin_hi, cos_hi)
    sin_low, cos_low = _by_quadrant(xp, q, sin_lo, cos_lo)
    return (sin_out, sin_low), (cos_out, cos_low)


def rotate_dd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sin and cos of x + y from those of x (a) and y (b), all double-doubles stacked as four
    planes (sin hi, cos hi, sin lo, cos lo), numpy, broadcast together. Adds about 2**-104 to
    the inputs' errors."""
    sin_a, cos_a, sin_b, cos_b = (a[0], a[2]), (a[1], a[3]), (b[0], b[2]), (b[1], b[3])
    sin = dd_add(np, *dd_mul(*sin_a, *cos_b), *dd_mul(*cos_a, *sin_b))
    sin_sin = dd_mul(*sin_a, *sin_b)
    cos = dd_add(np, *dd_mul(*cos_a, *cos_b), -sin_sin[0], -sin_sin[1])
    return np.stack(np.broadcast_arrays(sin[0], cos[0], sin[1], cos[1]))


def decide_float64(xp, hi, lo, error=0.0):
    """A normalized double-double's value correctly rounded to float64 (hi), and a mask of the
    elements so near a midpoint that the double-double's own error (relative, and an absolute
    `error` where it has one) could decide it."""
    neighbour = xp.nextafter(hi, hi + xp.where(lo >= 0, 1.0, -1.0))
    distance = xp.abs(neighbour - hi) * 0.5 - xp.abs(lo)
    return hi, ((distance <= xp.abs(hi) * DOUBLE_DOUBLE_RELATIVE) & (hi != 0)) | (distance < error)


def sin_cos_correct(xp, positions, chunks, scale: tuple[float, float] | None = None):
    """sin and cos (times a scale given as a double-double) correctly rounded to float64, and
    masks of the elements the double-double result cannot decide (about 2**-35 of them; the
    caller recomputes those)."""
    results = []
    for hi, lo in sin_cos_dd(xp, positions, chunks):
        if scale is not None:
            hi, lo = dd_mul(hi, lo, *scale)
        results.append(decide_float64(xp, hi, lo))
    return results


def product_dd(xp, integers, factor: tuple[float, float]):
    """integers * (hi + lo) as a normalized double-double: exact in hi*n (Dekker), n < 2**32."""
    hi, lo = factor
    p, e = _two_prod(integers, hi)
    return _fast_two_sum(p, e + integers * lo)


def scale_dd(planes: np.ndarray, factor: tuple[float, float]) -> np.ndarray:
    """(4, ...) double-double planes (sin hi, cos hi, sin lo, cos lo) times a double-double
    factor, each product within a few units of 2**-104 relative."""
    sin_hi, sin_lo = dd_mul(planes[0], planes[2], factor[0], factor[1])
    cos_hi, cos_lo = dd_mul(planes[1], planes[3], factor[0], factor[1])
    return np.ascontiguousarray(np.stack([sin_hi, cos_hi, sin_lo, cos_lo]))


def dd(value: Decimal) -> tuple[float, float]:
    """A Decimal as a double-double (hi, lo)."""
    return _dd(value)


# The double-double evaluation's error bound (relative): its series are accurate to about
# 2**-88; 2**-80 leaves a margin.
DOUBLE_DOUBLE_RELATIVE = 2.0**-80


# How far (relative) a float64 result may be from the truth and still count as deciding the
# rounding: 2**-46 is 128 ulp, two orders of magnitude above the kernel's measured error.
SUSPECT_RELATIVE = 2.0**-46


def round_to(xp, values, dtype: str, error=0.0):
    """Round float64 values once to `dtype`'s grid, returned as float64.

    Also returns a mask of the elements whose float64 value lies so near a midpoint of that
    grid that its error (relative, and an absolute `error` where it has one) could have decided
    the rounding. torch's own float64 -> float16 and float64 -> bfloat16 casts go through
    float32 and round twice; this does not.
    """
    fmt = FORMATS[dtype]
    _, exponent = xp.frexp(values)  # values = m * 2**exponent, 0.5 <= |m| < 1
    quantum_exp = xp.clip(exponent - fmt.precision, fmt.min_exponent, None)
    scaled = values * _pow2(xp, -quantum_exp)
    nearest = xp.round(scaled)  # ties to even, in numpy and torch
    rounded = nearest * _pow2(xp, quantum_exp)
    distance = xp.abs(xp.abs(scaled - nearest) - 0.5)  # in quanta, from the midpoint
    suspect = distance <= xp.abs(scaled) * SUSPECT_RELATIVE + error * _pow2(xp, -quantum_exp)
    return rounded, suspect


def grid_error(xp, values, dtype: str):
    """How far float64 values are from `dtype`'s nearest value, |x - round(x)|, in float64.
    A normal value is rounded in its bits (the dropped ones to nearest, ties to even; a carry
    runs into the exponent as it should), and x less it is exact (Sterbenz); below the dtype's
    least normal value, to its fixed quantum (float16's, from 6.1e-5 down: bfloat16's and
    float32's, 1.2e-38, are below any sine a table has but 0, which both ways leave as 0)."""
    fmt = FORMATS[dtype]
    drop = 53 - fmt.precision
    bits = values.view(np.int64 if xp is np else xp.int64)
    kept = (bits >> drop) & 1
    kept += bits
    kept += (1 << (drop - 1)) - 1
    kept >>= drop
    kept <<= drop
    error = kept.view(values.dtype)
    error -= values
    error = xp.abs(error, out=error) if xp is np else error.abs_()
    least = 2.0 ** (fmt.min_exponent + fmt.precision - 1)
    if least > 2.0**-100:
        small = xp.abs(values) < least
        if bool(small.any()):
            quantum = 2.0**fmt.min_exponent
            tiny = values[small]
            error[small] = xp.abs(tiny - xp.round(tiny / quantum) * quantum)
    return error


def _pow2(xp, exponent):
    # 2**e built from its bits: torch.ldexp computes 2**e in float32, which overflows at 2**128
    biased = exponent + 1023
    if xp is np:
        return (biased.astype(np.int64) << 52).view(np.float64)
    return (biased.to(xp.int64) << 52).view(xp.float64)


# ---------------------------------------------------------------------------------------------
# The slow path: a handful of elements, recomputed in decimal arithmetic.

_SLOW_DIGITS = 60


def _taylor_sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    eps = Decimal(10) ** -(_SLOW_DIGITS + 5)
    x2 = x * x
    sin, term, k = x, x, 1
    while abs(term) > eps:
        term = -term * x2 / ((2 * k) * (2 * k + 1))
        sin += term
        k += 1
    cos, term, k = Decimal(1), Decimal(1), 1
    while abs(term) > eps:
        term = -term * x2 / ((2 * k - 1) * (2 * k))
        cos += term
        k += 1
    return sin, cos


def decimal_sin_cos(position: int, turn: Decimal) -> tuple[Decimal, Decimal]:
    """sin and cos of 2*pi*position*turn to about 60 digits."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS + 12
        t = position * turn
        t -= t.to_integral_value()
        quadrant = int((t * 4).to_integral_value())
        s, c = _taylor_sin_cos(2 * PI * (t - Decimal(quadrant) / 4))
        # negated here: outside, the default context would round them to 28 digits
        return [(s, c), (c, -s), (-s, -c), (-c, s)][quadrant % 4]


def round_fraction(value: Fraction, dtype: str) -> float:
    """Correctly round an exact rational to `dtype` (ties to even), returned as a float."""
    fmt = FORMATS[dtype]
    if value == 0:
        return 0.0
    magnitude = abs(value)
    exponent = math.frexp(float(magnitude))[1]  # candidate: 2**(e-1) <= |v| < 2**e
    while Fraction(2) ** (exponent - 1) > magnitude:
        exponent -= 1
    while Fraction(2) ** exponent <= magnitude:
        exponent += 1
    quantum_exp = max(exponent - fmt.precision, fmt.min_exponent)
    return math.ldexp(round(value / Fraction(2) ** quantum_exp), quantum_exp)
