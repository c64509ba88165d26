"""An independent arbitrary-precision reference, written from the issue's formulas with mpmath.

Nothing here imports pe_cli: the accuracy tests compare pe-cli against this, never against
pe-cli's own code.
"""

from functools import lru_cache

import mpmath

mpmath.mp.prec = 256

PRECISION = {"float32": (24, -149), "float16": (11, -24), "bfloat16": (8, -133), "float64": (53, -1074)}


@lru_cache(maxsize=None)
def _frequency(convention: str, d: int, base: float, i: int, min_timescale: float = 1.0):
    b = mpmath.mpf(base)
    if convention in ("vaswani", "concat"):
        return mpmath.power(b, -mpmath.mpf(2 * i) / d)
    n = d // 2
    m = mpmath.mpf(min_timescale)
    return m * mpmath.exp(-i * mpmath.log(b / m) / max(n - 1, 1))


def value(convention: str, d: int, base: float, p: int, j: int, padding_idx=None, min_timescale=1.0):
    """The true value of column j at position p, as an mpf."""
    if padding_idx is not None and p == padding_idx:
        return mpmath.mpf(0)
    if convention == "vaswani":
        fn, i = (mpmath.sin if j % 2 == 0 else mpmath.cos), j // 2
    elif convention == "concat":
        half = (d + 1) // 2
        fn, i = (mpmath.sin, j) if j < half else (mpmath.cos, j - half)
    else:
        n = d // 2
        if j >= 2 * n:
            return mpmath.mpf(0)
        fn, i = (mpmath.sin, j) if j < n else (mpmath.cos, j - n)
    return fn(p * _frequency(convention, d, base, i, min_timescale))


def round_to(x, dtype: str) -> float:
    """x correctly rounded to dtype (nearest, ties to even), as a Python float."""
    precision, min_exponent = PRECISION[dtype]
    if x == 0:
        return 0.0
    exponent = int(mpmath.floor(mpmath.log(abs(x), 2)))
    while mpmath.power(2, exponent) > abs(x):
        exponent -= 1
    while mpmath.power(2, exponent + 1) <= abs(x):
        exponent += 1
    quantum = mpmath.power(2, max(exponent - precision + 1, min_exponent))
    return float(mpmath.nint(x / quantum) * quantum)


def ulps(computed: float, x, dtype: str) -> float:
    """|computed - x| in units of the last place of dtype at x."""
    precision, min_exponent = PRECISION[dtype]
    if x == 0:
        return 0.0 if computed == 0 else float("inf")
    exponent = int(mpmath.floor(mpmath.log(abs(x), 2)))
    quantum = mpmath.power(2, max(exponent - precision + 1, min_exponent))
    return float(abs(mpmath.mpf(computed) - x) / quantum)
