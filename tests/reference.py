"""An independent arbitrary-precision reference, written from the issue's formulas with mpmath.

Nothing here imports pe_cli: the accuracy tests compare pe-cli against this, never against
pe-cli's own code.
"""

from functools import cache

import mpmath

mpmath.mp.prec = 256

PRECISION = {
    "float32": (24, -149),
    "float16": (11, -24),
    "bfloat16": (8, -133),
    "float64": (53, -1074),
}


@cache
def _frequency(convention: str, d: int, base: float, i: int, min_timescale: float = 1.0):
    b = mpmath.mpf(base)
    if convention in ("vaswani", "concat"):
        return mpmath.power(b, -mpmath.mpf(2 * i) / d)
    n = d // 2
    m = mpmath.mpf(min_timescale)
    return m * mpmath.exp(-i * mpmath.log(b / m) / max(n - 1, 1))


def value(
    convention: str, d: int, base: float, p: int, j: int, padding_idx=None, min_timescale=1.0
):
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


# ---------------------------------------------------------------------------------------------
# RoPE, ALiBi and 2-D sin-cos, from Hugging Face's modeling_rope_utils documentation, Press et
# al. (2022), MAE and timm, in mpmath


def rope_frequencies(dim: int, base: float, rope: dict, end: int):
    """(inverse frequencies, attention factor) of a rope_type; `end` is last position + 1."""
    b = mpmath.mpf(base)
    n = dim // 2
    plain = [b ** (-mpmath.mpf(2 * i) / dim) for i in range(n)]
    kind = rope.get("rope_type", "default")
    factor = mpmath.mpf(rope["factor"]) if "factor" in rope else None
    one = mpmath.mpf(1)
    if kind == "default":
        return plain, one
    if kind == "linear":
        return [w / factor for w in plain], one
    if kind == "dynamic":
        limit = rope["max_position_embeddings"]
        grown = b * (factor * max(end, limit) / limit - (factor - 1)) ** (
            mpmath.mpf(dim) / (dim - 2)
        )
        return [grown ** (-mpmath.mpf(2 * i) / dim) for i in range(n)], one
    if kind == "ntk_alpha":  # HunYuan: theta * alpha^(dim / (dim - 2)), at any length
        grown = b * mpmath.mpf(rope["alpha"]) ** (mpmath.mpf(dim) / (dim - 2))
        return [grown ** (-mpmath.mpf(2 * i) / dim) for i in range(n)], one
    original = rope["original_max_position_embeddings"]
    if kind == "yarn":

        def dim_of(rotations):
            return dim * mpmath.log(original / (rotations * 2 * mpmath.pi)) / (2 * mpmath.log(b))

        low, high = (
            dim_of(mpmath.mpf(rope.get("beta_fast", 32))),
            dim_of(mpmath.mpf(rope.get("beta_slow", 1))),
        )
        if rope.get("truncate", True):
            low, high = mpmath.floor(low), mpmath.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += mpmath.mpf("0.001")
        ramp = [min(max((i - low) / (high - low), 0), 1) for i in range(n)]
        ws = [w * (1 - r) + w / factor * r for w, r in zip(plain, ramp)]
        if "attention_factor" in rope:
            return ws, mpmath.mpf(rope["attention_factor"])

        def m(scale, k):
            return one if scale <= 1 else mpmath.mpf("0.1") * k * mpmath.log(scale) + 1

        if rope.get("mscale") and rope.get("mscale_all_dim"):
            return ws, m(factor, mpmath.mpf(rope["mscale"])) / m(
                factor, mpmath.mpf(rope["mscale_all_dim"])
            )
        return ws, m(factor, 1)
    if kind == "longrope":
        if factor is None:
            factor = mpmath.mpf(rope["max_position_embeddings"]) / original
        chosen = rope["long_factor"] if end > original else rope["short_factor"]
        ws = [w / mpmath.mpf(f) for w, f in zip(plain, chosen)]
        attention = (
            mpmath.sqrt(1 + mpmath.log(factor) / mpmath.log(original)) if factor > 1 else one
        )
        return ws, mpmath.mpf(rope["attention_factor"]) if "attention_factor" in rope else attention
    low, high = mpmath.mpf(rope["low_freq_factor"]), mpmath.mpf(rope["high_freq_factor"])
    ws = []
    for w in plain:
        wavelength = 2 * mpmath.pi / w
        if wavelength > original / low:
            ws.append(w / factor)
        elif wavelength < original / high:
            ws.append(w)
        else:
            smooth = (original / wavelength - low) / (high - low)
            ws.append((1 - smooth) * w / factor + smooth * w)
    return ws, one


def alibi_slopes(heads: int):
    """Press et al.'s get_slopes: 2**(-8k/n) for a power of two n; else those of the power of
    two below and every other slope of twice that."""

    def power_of_two(n):
        return [mpmath.mpf(2) ** (-mpmath.mpf(8 * k) / n) for k in range(1, n + 1)]

    below = 2 ** int(mpmath.floor(mpmath.log(heads, 2) + mpmath.mpf("1e-30")))
    return power_of_two(below) + power_of_two(2 * below)[0::2][: heads - below]
