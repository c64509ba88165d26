"""Rotary tables as llama.cpp computes them: ggml's CPU rope (ggml-cpu ops.cpp,
ggml_rope_cache_init and rope_yarn, in llama-cpp-python 0.3.36's ggml 0.25.3), with the
arguments llama.cpp passes to ggml_rope_ext for a model converted by convert_hf_to_gguf and
loaded with default context parameters. The variant llama.cpp.

ggml rotates q and k in place and keeps no table; its cos and sin are what rotating unit
vectors gives, pair by pair. In float32, per position p:

    theta_scale = powf(freq_base, -2.0f / n_dims)              once, libm
    theta       = (float) p, then theta *= theta_scale after each pair (the error accumulates)
    extrap      = theta / freq_factor[i]                        rope_freqs, LongRoPE's factors
    interp      = freq_scale * extrap                           linear, YaRN: 1 / factor
    YaRN:  angle  = fma(interp, 1 - mix, extrap * mix)           mix = ramp(i) * ext_factor
           mscale = attn_factor * fma(0.1f, logf(1 / freq_scale), 1)
    cos = cosf(angle) * mscale,  sin = sinf(angle) * mscale     libm (glibc's sincosf)

The two fused multiply-adds are what GCC emits for x86-64's default build (AVX2 and FMA);
F16 tensors get the float32 value rounded once. NORM mode pairs columns (2i, 2i+1), NEOX
(i, i + n_dims/2); columns past n_dims are copied from the input unrotated, so the table,
like hf-rope's, has the rotary dim's columns. ggml's CUDA and Metal kernels compute theta
another way (pos * powf(theta_scale, i), pow(base, -i/n_dims)); this is the CPU's table.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ...core.errors import BadInput
from ..base import variant
from .pairing import both_parts, lay_out
from .tokens import line_positions, positions_end
from .types import longrope_length, rotary_dim

VARIANTS: dict = {}

# ggml_rope_ext's modes for the two pairings (ggml.h GGML_ROPE_TYPE_NEOX; NORM is 0)
MODES = {"interleaved": "NORM", "half": "NEOX"}
SOURCE = (
    "llama.cpp's ggml CPU rope (ggml 0.25.3 in llama-cpp-python 0.3.36, ggml_rope_ext), with "
    "the arguments llama.cpp gives a model converted by convert_hf_to_gguf"
)


class GgmlRope(NamedTuple):
    """The arguments of ggml_rope_ext that shape its table (llama-graph.cpp passes them)."""

    n_dims: int  # the rotary dim (n_rot)
    freq_base: float
    freq_scale: float = 1.0  # 1 / rope.scaling.factor
    ext_factor: float = 0.0  # 1 for YaRN
    attn_factor: float = 1.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    n_ctx_orig: int = 0
    freq_factors: tuple | None = None  # rope_freqs or rope_factors_long/short, one per pair


# ---------------------------------------------------------------------------------------------
# From Hugging Face's rope parameters to ggml_rope_ext's arguments, as convert_hf_to_gguf writes
# the GGUF and llama.cpp's generic loader (llama-model.cpp load_hparams, llama-context.cpp)
# reads it


def _refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    if spec.dtype not in ("float32", "float16"):
        return (
            f"--variant llama.cpp writes float32 or float16: ggml's CPU rope takes F32 and F16 "
            f"tensors, not {spec.dtype}"
        )
    if spec.axes or spec.ids is not None:
        return "--variant llama.cpp builds 1-D tables (ggml's M-RoPE modes are not modelled)"
    if spec.part == "inv_freq":
        return "--variant llama.cpp has no inv_freq: ggml multiplies theta by theta_scale pair after pair"
    if kind not in ("default", "linear", "yarn", "llama3", "longrope"):
        why = {
            "dynamic": "llama.cpp has no dynamic NTK scaling (convert_hf_to_gguf writes none)",
        }.get(kind, f"llama.cpp has no rope_type {kind}")
        return f"--variant llama.cpp: {why}"
    for key in ("mscale", "mscale_all_dim", "ntk_factor"):
        if key in rope:
            return (
                f"--variant llama.cpp does not model rope parameter {key} (llama.cpp reads "
                "YaRN's log multiplier for a few architectures only)"
            )
    dim = rotary_dim(spec.d_model, rope)
    if dim % 2:
        return f"--variant llama.cpp rotates pairs: the rotary dim must be even (got {dim})"
    return None


def _f32(value) -> float:
    import numpy as np

    return float(np.float32(value))


def _freq_scale(factor) -> float:
    """load_hparams: 1.0f / rope.scaling.factor (a float32 key), 1 where it is 0."""
    import numpy as np

    factor = np.float32(factor)
    return 1.0 if factor == 0 else float(np.float32(1) / factor)


def llama3_freq_factors(dim: int, base: float, rope: dict) -> tuple:
    """rope_freqs as convert_hf_to_gguf computes it for a llama3 model (conversion/llama.py,
    LlamaModel.generate_extra_tensors): torch float32 frequencies 1 / base**(2i/dim), their
    wavelengths 2*pi / w, and per frequency 1, factor, or 1 / ((1 - smooth) / factor + smooth),
    each step a torch float32 operation with the Python floats as scalars, as the converter
    runs it. torch's float32 power is the converter's: numpy's, or libm's powf, differ in a
    last bit for some bases."""
    import torch

    factor = rope["factor"]
    low, high = rope["low_freq_factor"], rope["high_freq_factor"]
    original = rope["original_max_position_embeddings"]
    frequencies = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factors = []
    for frequency in frequencies:  # each a 0-d float32 tensor, as the converter's loop has it
        wavelength = 2 * math.pi / frequency
        if wavelength < original / high:
            factors.append(1)
        elif wavelength > original / low:
            factors.append(factor)
        else:
            smooth = (original / wavelength - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return tuple(torch.tensor(factors, dtype=torch.float32).tolist())


def _mscale(scale: float) -> float:
    """llama-context.cpp's get_mscale(scale, 1) in float32: 0.1f * 1 * logf(scale) + 1."""
    from ...numerics.float32 import F32, libm

    return 1.0 if scale <= 1 else float(F32(F32(F32(0.1) * F32(1)) * libm("logf", scale)) + F32(1))


def yarn_attn_factor(freq_scale: float) -> float:
    """The attn_factor llama.cpp passes for YaRN (llama-context.cpp): get_mscale(1/freq_scale),
    times 1 / (1 + 0.1f * logf(factor)), which cancels the mscale ggml multiplies in itself."""
    from ...numerics.float32 import F32, libm

    factor = F32(F32(1) / F32(freq_scale))
    cancel = F32(F32(1) / F32(F32(1) + F32(F32(0.1) * libm("logf", factor))))
    return float(F32(F32(_mscale(float(factor))) * cancel))


def ggml_arguments(spec) -> GgmlRope:
    """ggml_rope_ext's arguments for a table's rope parameters: what llama.cpp passes for the
    GGUF convert_hf_to_gguf writes from them.

    llama3: no scaling keys, the rope_freqs tensor. linear: freq_scale = 1/factor. yarn:
    freq_scale, ext_factor 1, n_ctx_orig = original_max_position_embeddings, and attn_factor
    as llama-context.cpp sets it; the generic loader reads no beta_fast, beta_slow,
    attention_factor or truncate (only grok's and mistral3's do), so ggml's 32 and 1 and a
    truncated ramp stand. longrope: rope_factors_long or _short, long when the table's length
    (llama.cpp's context, -c) passes the original length, and the converter's attention
    factor sqrt(1 + ln(max_position_embeddings / original) / ln(original)), or attention_factor
    where given."""
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    dim = rotary_dim(spec.d_model, rope)
    base = _f32(spec.base)
    if kind == "linear":
        return GgmlRope(dim, base, freq_scale=_freq_scale(rope["factor"]))
    if kind == "yarn":
        freq_scale = _freq_scale(rope["factor"])
        return GgmlRope(
            dim,
            base,
            freq_scale=freq_scale,
            ext_factor=1.0,
            attn_factor=yarn_attn_factor(freq_scale),
            n_ctx_orig=int(rope["original_max_position_embeddings"]),
        )
    if kind == "llama3":
        return GgmlRope(dim, base, freq_factors=llama3_freq_factors(dim, spec.base, rope))
    if kind == "longrope":
        original = rope["original_max_position_embeddings"]
        long = positions_end(spec) > original
        key = "long_factor" if long else "short_factor"
        if longrope_length(rope, key, dim // 2):
            raise BadInput(longrope_length(rope, key, dim // 2))
        chosen = rope[key]
        attention = rope.get("attention_factor")
        if attention is None:
            scale = (
                rope["max_position_embeddings"] / original
                if "max_position_embeddings" in rope
                else rope["factor"]
            )
            attention = math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1 else 1.0
        return GgmlRope(
            dim,
            base,
            attn_factor=_f32(attention),
            n_ctx_orig=int(original),
            freq_factors=tuple(_f32(f) for f in chosen),
        )
    return GgmlRope(dim, base)


# ---------------------------------------------------------------------------------------------
# ggml's CPU arithmetic


def yarn_corr_dims(rope: GgmlRope) -> tuple:
    """ggml.c's ggml_rope_yarn_corr_dims in float32: the pairs where YaRN's ramp starts and
    ends, floorf and ceilf of n_dims * logf(n_ctx_orig / (beta * 2 * pi)) / (2 * logf(base))."""
    import numpy as np

    from ...numerics.float32 import F32, libm

    def corr_dim(rotations):
        turns = F32(F32(F32(rotations) * F32(2)) * F32(math.pi))
        ratio = F32(F32(rope.n_ctx_orig) / turns)
        top = F32(F32(rope.n_dims) * libm("logf", ratio))
        return F32(top / F32(F32(2) * libm("logf", rope.freq_base)))

    start = F32(np.floor(corr_dim(rope.beta_fast)))
    end = F32(np.ceil(corr_dim(rope.beta_slow)))
    return max(F32(0), start), min(F32(rope.n_dims - 1), end)


def ggml_angles(positions, rope: GgmlRope):
    """The float32 angles ggml takes cosf and sinf of, (positions, n_dims/2), and the factor
    it multiplies them by (mscale)."""
    import numpy as np

    from ...numerics.float32 import F32, fma, libm

    half = rope.n_dims // 2
    theta_scale = libm("powf", rope.freq_base, F32(F32(-2.0) / F32(rope.n_dims)))
    theta = np.empty((len(positions), half), dtype=F32)
    running = np.asarray(positions, dtype=np.int64).astype(F32)  # (float) of the int32 position
    for pair in range(half):
        theta[:, pair] = running
        running = running * theta_scale
    if rope.freq_factors is not None:
        theta /= np.asarray(rope.freq_factors[:half], dtype=F32)
    extrap = theta
    interp = F32(rope.freq_scale) * extrap
    mscale = F32(rope.attn_factor)
    if rope.ext_factor == 0:
        return interp, mscale
    low, high = yarn_corr_dims(rope)
    # rope_yarn_ramp: y = (i0/2 - low) / max(0.001f, high - low), 1 - min(1, max(0, y))
    y = (np.arange(half).astype(F32) - low) / max(F32(0.001), F32(high - low))
    mix = (F32(1) - np.minimum(F32(1), np.maximum(F32(0), y))) * F32(rope.ext_factor)
    angles = fma(interp, (F32(1) - mix)[None, :], extrap * mix[None, :])
    grown = fma(F32(0.1), libm("logf", F32(F32(1) / F32(rope.freq_scale))), F32(1))
    return angles, F32(mscale * F32(grown))


def ggml_table(positions, rope: GgmlRope, part: str):
    """ggml's float32 cos or sin (times mscale), or angle, (positions, n_dims/2)."""
    from ...numerics.float32 import libm_map

    angles, mscale = ggml_angles(positions, rope)
    if part == "angle":
        return angles
    return libm_map("cosf" if part == "cos" else "sinf", angles) * mscale


@variant(
    VARIANTS,
    "llama.cpp",
    engine="llama.cpp",
    source=SOURCE,
    conventions=("interleaved", "half"),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _llamacpp_rope(spec, device):
    import torch

    plane = ggml_table(line_positions(spec), ggml_arguments(spec), spec.part)
    return torch.from_numpy(lay_out(plane, spec.convention))
