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
* The result, about 1 ulp of float64 from the truth, is rounded once to the output format.
  Elements that land so near a rounding midpoint that the float64 value cannot decide
  (about one in 2**20 for float32 output) are recomputed with `decimal` at 60 digits.

The same kernel runs on numpy arrays (CPU) and torch tensors (any device).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from .dtypes import FORMATS
from .spec import POSITION_BITS

CHUNK_BITS = 53 - POSITION_BITS
CHUNKS = 6  # w/(2*pi) to 2**-126: p * truncation < 2**-94 turns
_DIGITS = 70

# pi to 80 digits (a constant, not a computation)
PI = Decimal(
    "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986"
)
_TWO_PI_HI = float(2 * PI)
_TWO_PI_LO = float(2 * PI - Decimal(_TWO_PI_HI))
_SPLITTER = 134217729.0  # 2**27 + 1, Dekker's split for float64


def angular_frequencies(exponents: list[Fraction], base: float) -> list[Decimal]:
    """w_i = base**(-e_i) to 70 digits, for the exact float64 value of base."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        log_base = Decimal(base).ln()
        return [
            (-(Decimal(e.numerator) / Decimal(e.denominator)) * log_base).exp() for e in exponents
        ]


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


def sin_cos(xp, positions, chunks):
    """sin and cos of 2*pi*p*f for a column of positions and a row of chunked turns f.

    positions: (rows, 1) float64 holding integers below 2**POSITION_BITS.
    chunks: (CHUNKS, n) float64 from `chunk_table`.
    Returns two (rows, n) float64 arrays, each element within about 1 ulp of the truth.
    """
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
    angle = hi * _TWO_PI_HI
    a_hi, a_lo = _split(hi)
    c_hi, c_lo = _split(_TWO_PI_HI)
    err = ((a_hi * c_hi - angle) + a_hi * c_lo + a_lo * c_hi) + a_lo * c_lo
    angle_lo = err + hi * _TWO_PI_LO + lo * _TWO_PI_HI

    sin_hi, cos_hi = xp.sin(angle), xp.cos(angle)
    sin_r = sin_hi + cos_hi * angle_lo
    cos_r = cos_hi - sin_hi * angle_lo

    # undo the quarter-turn reduction: quadrant in {-2..2}, taken modulo 4
    q = quadrant % 4
    sin_out = xp.where(q == 0, sin_r, xp.where(q == 1, cos_r, xp.where(q == 2, -sin_r, -cos_r)))
    cos_out = xp.where(q == 0, cos_r, xp.where(q == 1, -sin_r, xp.where(q == 2, -cos_r, sin_r)))
    return sin_out, cos_out


# How far (relative) a float64 result may be from the truth and still count as deciding the
# rounding: 2**-46 is 128 ulp, two orders of magnitude above the kernel's measured error.
SUSPECT_RELATIVE = 2.0**-46


def round_to(xp, values, dtype: str):
    """Round float64 values once to `dtype`'s grid, returned as float64.

    Also returns a mask of the elements whose float64 value lies so near a midpoint of that
    grid that its error could have decided the rounding. torch's own float64 -> float16 and
    float64 -> bfloat16 casts go through float32 and round twice; this does not.
    """
    fmt = FORMATS[dtype]
    if dtype == "float64":
        return values, None
    _, exponent = xp.frexp(values)  # values = m * 2**exponent, 0.5 <= |m| < 1
    quantum_exp = xp.clip(exponent - fmt.precision, fmt.min_exponent, None)
    scaled = values * _pow2(xp, -quantum_exp)
    nearest = xp.round(scaled)  # ties to even, in numpy and torch
    rounded = nearest * _pow2(xp, quantum_exp)
    distance = xp.abs(xp.abs(scaled - nearest) - 0.5)  # in quanta, from the midpoint
    suspect = distance <= xp.abs(scaled) * SUSPECT_RELATIVE
    return rounded, suspect


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
