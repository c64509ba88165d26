"""Exact frequencies, in stdlib `decimal` at 70 digits, from the float64 values a user gives.

Families compute their frequencies (and factors such as RoPE's attention factor or ALiBi's
slopes) here or with the same context; numbers are exact to about 1e-70 relative, far below
anything a float64 table can show. No numpy: families use this at import time.
"""

from __future__ import annotations

from decimal import Decimal, getcontext, localcontext
from fractions import Fraction
from functools import lru_cache

DIGITS = 70

# pi to 80 digits (a constant, not a computation)
PI = Decimal("3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986")


def context():
    """The decimal context exact frequencies are computed in (`with context(): ...`)."""
    ctx = getcontext().copy()
    ctx.prec = DIGITS
    return localcontext(ctx)


def power_law(exponents: list[Fraction], base: float, scale: float = 1.0) -> list[Decimal]:
    """w_i = scale * (base/scale)**(-e_i) to 70 digits, for the exact float64 values of base
    and scale (scale is tensor2tensor's min_timescale, 1 everywhere else)."""
    return list(_power_law(tuple(exponents), base, scale))


@lru_cache(maxsize=64)  # identification builds many tables of the same frequencies
def _power_law(exponents: tuple[Fraction, ...], base: float, scale: float) -> tuple[Decimal, ...]:
    with context():
        log_scale = Decimal(scale).ln()
        log_ratio = Decimal(base).ln() - log_scale
        return tuple(
            (log_scale - (Decimal(e.numerator) / Decimal(e.denominator)) * log_ratio).exp()
            for e in exponents
        )
