"""Rotary tables as MLX 0.32.4 computes them on the CPU, and mlx-lm 0.32.2's rope modules: the
variant mlx.

MLX rotates q and k in place (mx.fast.rope) and keeps no table; its table is what rotating unit
vectors gives, x1 = 1 and x2 = 0 in every pair: cos(angle) and sin(angle), times the scale an
mlx-lm module multiplies x by first. On the CPU mx.fast.rope is a chain of ordinary MLX ops,
each rounding to float32 (mlx/fast.cpp's fallback; the CPU build has no rope kernel):

    positions   (arange(T) + offset) * scale                     float32, offset an int32
    frequencies exp(arange(0, -dims/2, -1) * (logf(base) / (dims/2)))   with base=, MLX's exp
                1 / freqs                                         with freqs= (periods)
    angles      positions * frequencies
    cos, sin    MLX's Cephes sin and cos (fused multiply-adds), libm's sinf and cosf past 2^23
    the table   cos and sin rounded once to x's dtype (float32, float16, bfloat16), times the
                module's input scale, rounded again, where it has one

mlx-lm's initialize_rope chooses the module by rope_type (mlx_lm/models/rope_utils.py):

    default, linear   nn.RoPE(dims, base, scale = 1 / factor)
    dynamic           DynamicNTKScalingRoPE: the base grown in float64 from the table's end, then
                      the base= path
    llama3            Llama3RoPE: freqs = base**(2i/dims) in float32 (libm's powf), long
                      wavelengths times factor, a blend between
    yarn              YarnRoPE: extrapolated and interpolated periods mixed along a ramp; x
                      multiplied by mscale(factor, mscale) / mscale(factor, mscale_all_dim)
                      where that is not 1. It reads no attention_factor and no truncate
    longrope          SuScaledRoPE: long_factor * base**(2i/dims) at every length (mlx-lm never
                      uses short_factor), x multiplied by sqrt(1 + ln(max / original) /
                      ln(original)) from max_position_embeddings (not factor or
                      attention_factor); pairs always half (traditional=False)
    proportional      ProportionalRoPE: factor * base**(2i/head dim) for the first
                      int(head dim * partial_rotary_factor) dims, infinite periods past them

A partial rotary table is the rotated dims only, as hf-rope's: mx.fast.rope leaves the rest of
x as it is. The numbers are x86-64 Linux's (glibc's logf, powf, sinf and cosf, called here
from the machine's own libm as MLX calls them); MLX's Metal and CUDA kernels compute
otherwise and are not reproduced.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..base import variant
from .pairing import both_parts, lay_out
from .tokens import positions_end
from .types import longrope_length, rotary_dim

VARIANTS: dict = {}

_TYPES = ("default", "linear", "dynamic", "llama3", "yarn", "longrope", "proportional")
_DTYPES = ("float32", "float16", "bfloat16")
_LIBM_PAST = 2.0**23  # MLX hands sin and cos of larger |angles| to libm (sincos_checked)
_CHUNK = 1 << 16  # elements per step of the sin/cos kernel: its temporaries stay in cache


class Call(NamedTuple):
    """How an mlx-lm rope module calls mx.fast.rope, and what it does to x before."""

    dims: int  # the rotated dims
    base: float | None  # the base= path, or None for freqs=
    scale: float  # the positions' scale (linear: 1 / factor)
    periods: object  # freqs=: float32 periods (numpy), or None
    input_scale: float | None  # x[..., :dims] multiplied by it before rotating, or None


# ---------------------------------------------------------------------------------------------
# MLX's float32 kernels (mlx/backend/cpu/simd/math.h): Cephes' polynomials with std::fma, which
# is one rounding on x86-64 (the CPU build's Simd is scalar there)


def _exp(x):
    """simd::exp: 2^round(x log2 e) times a degree-6 polynomial in the rest."""
    import numpy as np

    from ...numerics.float32 import F32, F64, fma

    x = np.asarray(x, F32)
    scaled = x * F32(1.442695)
    whole = np.floor(scaled.astype(F64) + 0.5).astype(F32)
    rest = scaled - whole
    poly = F32(1.535336188319500e-4)
    for c in (
        1.339887440266574e-3,
        9.618437357674640e-3,
        5.550332471162809e-2,
        2.402264791363012e-1,
        6.931472028550421e-1,
        1.0,
    ):
        poly = fma(poly, rest, F32(c))
    power = ((whole.astype(np.int32) + 127) << 23).astype(np.int32).view(F32)
    value = power * poly
    value = np.where(x > 88.0, F32(np.inf), value)
    return np.where(x < -88.0, F32(0), value).astype(F32)


def _sincos_kernel(x):
    """simd::sincos for |x| <= 2^23: Cody-Waite reduction by pi/4 in three fused steps, then the
    sine and cosine polynomials of the remainder, chosen and signed by the octant."""
    import numpy as np

    from ...numerics.float32 import F32, fma

    sin_negative = x < 0
    x = np.abs(x)
    octant = (x * F32(1.27323954473516)).astype(np.uint32)  # 4/pi, truncated
    octant = (octant + np.uint32(1)) & np.uint32(0xFFFFFFFE)
    y = octant.astype(F32)
    swap = (octant & np.uint32(2)) != 0
    x = fma(y, F32(-0.78515625), x)
    x = fma(y, F32(-2.4187564849853515625e-4), x)
    x = fma(y, F32(-3.77489497744594108e-8), x)
    sin_negative ^= (octant & np.uint32(4)) != 0
    cos_positive = ((octant - np.uint32(2)) & np.uint32(4)) != 0  # wraps around at octant 0
    z = x * x
    cosine = fma(z, F32(2.443315711809948e-5), F32(-1.388731625493765e-3))
    sine = fma(z, F32(-1.9515295891e-4), F32(8.3321608736e-3))
    cosine = fma(cosine, z, F32(4.166664568298827e-2))
    sine = fma(sine, z, F32(-1.6666654611e-1))
    cosine = cosine * z * z
    sine = fma(x, sine * z, x)
    cosine = fma(z, F32(-0.5), cosine) + F32(1.0)
    sin_value = np.where(swap, cosine, sine)
    cos_value = np.where(swap, sine, cosine)
    return (
        np.where(sin_negative, -sin_value, sin_value),
        np.where(cos_positive, cos_value, -cos_value),
    )


def sincos(angles):
    """MLX's float32 sin and cos of float32 angles (any shape)."""
    import numpy as np

    from ...numerics.float32 import F32, libm_map

    flat = np.ascontiguousarray(angles, F32).reshape(-1)
    sin, cos = np.empty_like(flat), np.empty_like(flat)
    large = np.abs(flat) > F32(_LIBM_PAST)
    for start in range(0, len(flat), _CHUNK):
        part = np.where(large[start : start + _CHUNK], F32(0), flat[start : start + _CHUNK])
        sin[start : start + _CHUNK], cos[start : start + _CHUNK] = _sincos_kernel(part)
    if np.any(large):
        sin[large], cos[large] = libm_map("sinf", flat[large]), libm_map("cosf", flat[large])
    return sin.reshape(np.shape(angles)), cos.reshape(np.shape(angles))


# ---------------------------------------------------------------------------------------------
# mx.fast.rope on the CPU


def positions(count: int, offset: int, scale: float):
    """(arange(count) + offset) * scale in float32."""
    import numpy as np

    from ...numerics.float32 import F32

    return (np.arange(count, dtype=F32) + F32(offset)) * F32(scale)


def inverse_frequencies(call: Call):
    """The frequencies mx.fast.rope turns the positions by: exp(-j * logf(base) / (dims/2))
    with base=, in MLX's exp; the reciprocals of the periods with freqs=."""
    import numpy as np

    from ...numerics.float32 import F32, libm

    if call.base is None:
        return F32(1) / call.periods
    half = call.dims // 2
    step = libm("logf", call.base) / F32(half)  # std::log(float) / int, in float32
    return _exp(np.arange(0, -half, -1, dtype=F32) * step)


def _powers(dims: int, base: float, count: int | None = None):
    """mlx-lm's base ** (arange(0, dims, 2) / dims): float32 exponents, libm's powf (mx.power).
    `count` exponents (proportional RoPE's rotated ones), default dims / 2."""
    import numpy as np

    from ...numerics.float32 import F32, libm

    exponents = np.arange(0, 2 * (dims // 2 if count is None else count), 2).astype(F32) / F32(dims)
    return np.array([libm("powf", base, e) for e in exponents], F32)


# ---------------------------------------------------------------------------------------------
# mlx-lm's rope modules, one per rope_type: (rope parameters, rotated dims, spec) -> Call


def _default(rope, dims, spec) -> Call:
    return Call(dims, spec.base, 1.0, None, None)


def _linear(rope, dims, spec) -> Call:  # nn.RoPE's scale, a float in the C++ binding
    return Call(dims, spec.base, 1 / rope["factor"], None, None)


def _dynamic(rope, dims, spec) -> Call:
    # DynamicNTKScalingRoPE.__call__, in Python floats, from max(L + offset, the model's length)
    factor, limit = rope["factor"], rope["max_position_embeddings"]
    length = max(positions_end(spec), limit)
    base = spec.base * ((factor * length / limit) - (factor - 1)) ** (dims / (dims - 2))
    return Call(dims, base, 1.0, None, None)


def _llama3(rope, dims, spec) -> Call:
    import numpy as np

    from ...numerics.float32 import F32

    factor, original = rope["factor"], rope["original_max_position_embeddings"]
    low, high = rope["low_freq_factor"], rope["high_freq_factor"]
    low_wavelength, high_wavelength = original / low, original / high  # Python floats
    periods = _powers(dims, spec.base)
    wavelengths = F32(2 * math.pi) * periods
    periods = np.where(wavelengths > F32(low_wavelength), periods * F32(factor), periods)
    medium = (wavelengths > F32(high_wavelength)) & (wavelengths < F32(low_wavelength))
    with np.errstate(divide="ignore", invalid="ignore"):  # equal factors: no medium band
        smooth = (F32(original) / wavelengths - F32(low)) / F32(high - low)
        blended = periods / ((F32(1) - smooth) / F32(factor) + smooth)
    return Call(dims, None, 1.0, np.where(medium, blended, periods).astype(F32), None)


def _yarn(rope, dims, spec) -> Call:
    import numpy as np

    from ...numerics.float32 import F32

    def given(key, default):
        return default if rope.get(key) is None else rope[key]

    factor, base = rope["factor"], spec.base
    original = given("original_max_position_embeddings", 4096)

    def correction_dim(rotations):
        return (dims * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    def m_scale(m):
        return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0

    low = max(math.floor(correction_dim(given("beta_fast", 32))), 0)
    high = min(math.ceil(correction_dim(given("beta_slow", 1))), dims - 1)
    if low == high:
        high += 0.001
    mscale = m_scale(given("mscale", 1)) / m_scale(given("mscale_all_dim", 0))
    extrapolated = _powers(dims, base)
    interpolated = F32(factor) * extrapolated
    ramp = np.clip((np.arange(dims // 2, dtype=F32) - F32(low)) / F32(high - low), 0, 1)
    mask = F32(1) - ramp.astype(F32)
    periods = (interpolated * extrapolated) / (interpolated * mask + extrapolated * (F32(1) - mask))
    return Call(dims, None, 1.0, periods.astype(F32), None if mscale == 1.0 else mscale)


def _longrope(rope, dims, spec) -> Call:
    import numpy as np

    from ...numerics.float32 import F32

    original = rope["original_max_position_embeddings"]
    # the model's max_position_embeddings over the original length (transformers' factor)
    grown = rope.get("max_position_embeddings") or rope["factor"] * original
    factor = grown / original
    mscale = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    periods = np.asarray(rope["long_factor"], F32) * _powers(dims, spec.base)
    return Call(dims, None, 1.0, periods.astype(F32), mscale)


def _proportional(rope, dims, spec) -> Call:
    import numpy as np

    from ...numerics.float32 import F32

    rotated = int(dims * rope.get("partial_rotary_factor", 1.0))
    periods = F32(rope.get("factor") or 1.0) * _powers(dims, spec.base, (rotated + 1) // 2)
    padding = np.full((dims - rotated) // 2, np.inf, F32)  # cos 1, sin 0: unrotated
    return Call(dims, None, 1.0, np.concatenate([periods, padding]).astype(F32), None)


_MODULES = {
    "default": _default,
    "linear": _linear,
    "dynamic": _dynamic,
    "llama3": _llama3,
    "yarn": _yarn,
    "longrope": _longrope,
    "proportional": _proportional,
}


def call_of(spec) -> Call:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    return _MODULES[kind](rope, rotary_dim(spec.d_model, rope), spec)


# ---------------------------------------------------------------------------------------------
# The variant


def _refusal(spec) -> str | None:
    from ...numerics.float32 import libm_available

    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    if spec.axes:
        return (
            "--variant mlx builds 1-D tables: mlx-lm's rope for M-RoPE (rope_type mrope) is a "
            "plain nn.RoPE, and MLX has no multi-axis RoPE"
        )
    if spec.ids is not None:
        return "mx.fast.rope turns positions offset, offset + 1, ...: give --offset, not --ids"
    if kind not in _TYPES:
        return f"mlx-lm 0.32.2's initialize_rope has no rope_type {kind}"
    if "ntk_factor" in rope:
        return "mlx-lm has no ntk_factor (diffusers' NTK scaling)"
    if kind == "longrope":
        if "long_factor" not in rope:
            return "mlx-lm's SuScaledRoPE uses long_factor at every length: give long_factor"
        wrong = longrope_length(rope, "long_factor", rotary_dim(spec.d_model, rope) // 2)
        if wrong:
            return wrong
        if spec.convention == "interleaved":
            return "mlx-lm's SuScaledRoPE pairs half (traditional=False): drop --convention"
    dims = rotary_dim(spec.d_model, rope)
    if dims % 2:
        return f"mx.fast.rope rotates pairs: the rotary dim {dims} must be even"
    if kind == "dynamic" and dims < 3:
        return "mlx-lm's dynamic NTK divides by rotary dim - 2: it needs a rotary dim >= 4"
    if spec.dtype not in _DTYPES:
        return f"MLX's rope rotates {', '.join(_DTYPES)} (got --dtype {spec.dtype})"
    if not 0 <= spec.offset < 2**31:
        return f"mx.fast.rope's offset is an int32 from 0 to 2^31 - 1 (got --offset {spec.offset})"
    if spec.seq_len > 2**24:
        return "MLX counts positions in float32 (arange), whole only up to 2^24 rows"
    missing = libm_available()
    if missing:
        return f"--variant mlx calls libm's logf, powf, sinf and cosf as MLX does: {missing}"
    return None


def mlx_table(spec):
    """The part of the table mx.fast.rope, called as mlx-lm calls it, gives: (rows, columns)
    float32 numpy, its values in spec.dtype."""
    import numpy as np

    from ...numerics.float32 import F32, round_to

    call = call_of(spec)
    inverse = inverse_frequencies(call)
    if spec.part == "inv_freq":
        return inverse[None, :]
    angles = positions(spec.seq_len, spec.offset, call.scale)[:, None] * inverse[None, :]
    if spec.part == "angle":
        return lay_out(angles, spec.convention)
    sin, cos = sincos(angles)
    plane = round_to(cos if spec.part == "cos" else sin, spec.dtype)
    if call.input_scale is not None:  # x * scale in x's dtype, then x1 * cos - x2 * sin
        scale = round_to(F32(call.input_scale), spec.dtype)
        plane = round_to(scale * plane, spec.dtype)
    return lay_out(np.ascontiguousarray(plane), spec.convention)


@variant(
    VARIANTS,
    "mlx",
    engine="mlx",
    source="MLX 0.32.4 mx.fast.rope on the CPU (x86-64 Linux, glibc's libm) as mlx-lm 0.32.2's "
    "initialize_rope calls it: nn.RoPE, DynamicNTKScalingRoPE, Llama3RoPE, YarnRoPE (times its "
    "mscale), SuScaledRoPE (long_factor at every length), ProportionalRoPE",
    conventions=("half", "interleaved", "single"),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _mlx_rope(spec, device):
    import torch

    table = torch.from_numpy(mlx_table(spec))
    if spec.part in ("cos", "sin"):  # already on the dtype's grid: the cast is exact
        return table.to(getattr(torch, spec.dtype))
    return table
