"""Rotary tables as litgpt 0.5.13's build_rope_cache computes them: the variant litgpt.

litgpt keeps cos and sin buffers of (positions, rotary dim), [cos(p w) | cos(p w)] (the half
layout: idx_theta.repeat(1, 2)), in float32, cast with the model to its dtype. Its frequencies,
over n = int(head_size * rotary_percentage) (transformers' partial_rotary_factor), by the
extra_config its Config converts a model's rope_scaling into:

    none          theta = 1 / base**(arange(0, n, 2).float() / n)              transformers'
    linear        theta / factor (no beta_fast and no original_max_seq_len)   transformers'
    llama3        smooth = clamp((original / wavelength - low) / (high - low), 0, 1),
                  (1 - smooth) * (theta / factor) + smooth * theta at every frequency
                  (transformers: ((1 - smooth) * theta) / factor in the medium band only)
    yarn          interpolation 1 / (factor * base**x) and extrapolation 1 / base**x mixed as
                  interpolation * (1 - ramp) + extrapolation * ramp: the ramp the other way
                  round from transformers' (the fastest frequencies are the interpolated
                  ones), its upper correction bound clamped to n / 2 - 1 (transformers: n - 1),
                  and cos, sin times mscale(factor, mscale) / mscale(factor, mscale_all_dim)
                  only where the config gives mscale or mscale_all_dim (else 1: no attention
                  factor, where transformers takes 0.1 ln(factor) + 1)

Positions are arange(seq_len).float() (rope_condense_ratio 1), angles torch.outer's float32
products, cos and sin torch's on the CPU.
"""

from __future__ import annotations

import math

from ..base import variant
from .frameworks import framework_table, plain_rotary
from .pairing import both_parts
from .types import rotary_dim

VARIANTS: dict = {}

_TYPES = ("default", "linear", "llama3", "yarn")


def _mscale(factor: float, mscale: float = 1.0) -> float:  # litgpt's yarn_get_mscale
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def inv_freq(torch, rope: dict, n: int, base: float):
    """litgpt's theta (float32, n / 2 frequencies) and the factor its cos and sin carry."""
    theta = 1.0 / (base ** (torch.arange(0, n, 2).float() / n))
    kind = rope.get("rope_type", "default")
    if kind == "default":
        return theta, 1.0
    factor = rope["factor"]
    if kind == "linear":
        return theta / factor, 1.0
    if kind == "llama3":
        original = rope["original_max_position_embeddings"]
        low, high = rope["low_freq_factor"], rope["high_freq_factor"]
        wavelength = 2 * torch.pi / theta
        smooth = ((original / wavelength - low) / (high - low)).clamp(min=0.0, max=1.0)
        return (1 - smooth) * (theta / factor) + smooth * theta, 1.0
    # yarn
    mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")
    if mscale and all_dim:
        attention = _mscale(factor, mscale) / _mscale(factor, all_dim)
    elif all_dim:
        attention = _mscale(factor, all_dim)
    elif mscale:
        attention = _mscale(factor, mscale)
    else:
        attention = 1.0
    powers = base ** (torch.arange(0, n, 2).float() / n)
    extrapolation, interpolation = 1.0 / powers, 1.0 / (factor * powers)
    original = rope.get("original_max_position_embeddings", 4096)

    def correction_dim(rotations):
        return (n * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(rope.get("beta_fast") or 32.0)
    high = correction_dim(rope.get("beta_slow") or 1.0)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, n // 2 - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(n // 2, dtype=torch.float32) - low) / (high - low)).clamp(0.0, 1.0)
    return interpolation * (1 - ramp) + extrapolation * ramp, attention


def _refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    why = plain_rotary(spec, "litgpt")
    if why:
        return why
    if kind not in _TYPES:
        return f"litgpt 0.5.13's build_rope_cache has no rope_type {kind} (default, linear, llama3, yarn)"
    for key in ("attention_factor", "ntk_factor"):
        if key in rope:
            return f"litgpt's build_rope_cache reads no {key}"
    n = rotary_dim(spec.d_model, rope)
    if n % 2 or n < 2:
        return f"litgpt's cache pairs the rotary dims: the rotary dim {n} must be even"
    if spec.dtype not in ("float32", "bfloat16", "float16"):
        return f"litgpt's cos and sin are float32, bfloat16 or float16 (got --dtype {spec.dtype})"
    return None


@variant(
    VARIANTS,
    "litgpt",
    framework="litgpt",
    follows="transformers",
    source="litgpt 0.5.13 build_rope_cache (default, linear, llama3 and yarn extra_config): "
    "transformers' table but for llama3's order of operations and YaRN's reversed ramp and "
    "attention factor",
    conventions=("half", "single"),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _litgpt_rope(spec, device):
    import torch

    rope = dict(spec.rope)
    theta, attention = inv_freq(torch, rope, rotary_dim(spec.d_model, rope), spec.base)
    return framework_table(spec, theta, attention, polar=False)
