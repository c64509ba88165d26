"""Rotary tables as torchtitan 0.3.0 caches them (models/common/rope.py): the variant torchtitan.

torchtitan has two caches. ComplexRoPE (Llama 3, Llama 4, DeepSeek-V3) keeps freqs_cis =
torch.polar(1, angle) in complex64, (positions, dim / 2), rotating adjacent pairs: pe-cli's
--convention single (its real part cos, its imaginary part sin) and interleaved. CosSinRoPE
(Qwen3, gpt-oss) keeps [cos | cos | sin | sin] in float32, the half pairing: --convention half.
Both rotate in float32 (query.float()) and cast the result, so a half dtype is the float32
table cast. Frequencies, by RoPE.Config.scaling:

    none     1 / base**(arange(0, dim, 2)[: dim // 2].float() / dim)          transformers'
    llama    transformers' llama3 blend, operation for operation (ComplexRoPE only)
    yarn     inv_freq / rope_factor * ramp + inv_freq * (1 - ramp) (transformers: 1 / (factor *
             base**x) for the interpolated frequencies), transformers' ramp and correction
             bounds (truncate as there), and no attention factor: torchtitan folds YaRN's
             mscale into the softmax scale, so its cos and sin stay on the unit circle

Positions are arange(max_seq_len) as int64 (ComplexRoPE) or float32 (CosSinRoPE), both rounded
once to float32 in torch.outer.
"""

from __future__ import annotations

import math

from ..base import variant
from .frameworks import framework_table, plain_rotary
from .pairing import both_parts
from .types import hf_inv_freq

VARIANTS: dict = {}


def yarn_inv_freq(torch, rope: dict, dim: int, base: float):
    """torchtitan's _yarn_inv_freq: float32, dim / 2 frequencies."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    original = rope.get("original_max_position_embeddings", 4096)

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(rope.get("beta_fast") or 32.0)
    high = correction_dim(rope.get("beta_slow") or 1.0)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    return inv_freq / rope["factor"] * ramp + inv_freq * (1 - ramp)


def _refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    why = plain_rotary(spec, "torchtitan")
    if why:
        return why
    if kind not in ("default", "llama3", "yarn"):
        return f"torchtitan 0.3.0's RoPE has no rope_type {kind} (default, llama3, yarn)"
    for key in ("partial_rotary_factor", "attention_factor", "ntk_factor", "mscale"):
        if key in rope and not (key == "mscale" and kind == "yarn"):
            return f"torchtitan's RoPE.Config has no {key}"
    if kind == "llama3" and spec.convention == "half":
        return (
            "torchtitan's CosSinRoPE (the half pairing) has no llama scaling: --convention "
            "single builds ComplexRoPE's"
        )
    if spec.d_model % 2:
        return f"torchtitan rotates pairs: the head dim must be even (got {spec.d_model})"
    if spec.dtype not in ("float32", "bfloat16", "float16"):
        return f"torchtitan's caches are float32 (got --dtype {spec.dtype})"
    return None


@variant(
    VARIANTS,
    "torchtitan",
    framework="torchtitan",
    follows="transformers",
    source="torchtitan 0.3.0 ComplexRoPE (freqs_cis, torch.polar) and CosSinRoPE (half "
    "pairing): transformers' table but for YaRN's frequencies and its attention factor",
    conventions=("single", "interleaved", "half"),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _torchtitan_rope(spec, device):
    import torch

    rope = dict(spec.rope)
    if rope.get("rope_type") == "yarn":
        inv_freq = yarn_inv_freq(torch, rope, spec.d_model, spec.base)
    else:
        inv_freq, _ = hf_inv_freq(torch, spec, lambda: spec.last_position + 1)
    return framework_table(spec, inv_freq, 1.0, polar=spec.convention != "half")
