"""Rotary tables as keras-hub 0.32.0 computes them on Keras 3.15's torch backend: the variant
keras-hub.

keras-hub's RotaryEmbedding layer (Mistral, Qwen, Gemma and most of its models) and its
LlamaRotaryEmbedding (Llama, Llama 3) build cos and sin at each call, [cos(p w) | cos(p w)]
(the half layout: stack((freq, freq), axis=-2) reshaped), from float32 arange positions and
einsum's products, and cast them to the layer's compute dtype. Every op is a Keras op, which
the torch backend runs as the torch op of the same name, in float32:

    default   power(float32(base), -(arange(0, d, 2) / float32(d)))   (transformers: 1 / base**x)
    linear    the same, / float32(factor)
    dynamic   the same, / power(float32(factor), float32(d) / float32(max(1, d - 2))) (the base
              grown once, not from the table's length as transformers does)
    yarn      extrapolation 1 / base**x and interpolation 1 / (factor * base**x), transformers'
              blend, but the correction bounds computed in float32 tensors (ops.log) and the
              ramp's width max(high - low, 0.001); cos and sin cast to the compute dtype first,
              then times 0.1 * log(factor) + 1 computed in the compute dtype (transformers: in
              float64, the product in float32)
    llama3    LlamaRotaryEmbedding: 1 / base**x (transformers'), long wavelengths / factor, and
              (1 - smooth) * (inv_freq / factor) + smooth * inv_freq in the medium band

keras-hub's Llama models without llama3 scaling (LlamaRotaryEmbedding, 1 / base**x) compute
transformers' table: --variant hf-rope. The JAX and TensorFlow backends compute cos and sin
with XLA's and Eigen's kernels; they are not reproduced here.
"""

from __future__ import annotations

import math

from ..base import variant
from .frameworks import framework_table, plain_rotary
from .pairing import both_parts

VARIANTS: dict = {}

_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")


def _f32(torch, value):
    return torch.tensor(value, dtype=torch.float32)


def _yarn(torch, rope: dict, d: int, base: float):
    f32 = lambda value: _f32(torch, value)  # noqa: E731
    index = torch.arange(0, d, 2, dtype=torch.float32)
    powers = torch.pow(f32(base), index / f32(d))
    extrapolation = 1.0 / powers
    interpolation = 1.0 / (f32(rope["factor"]) * powers)
    original = f32(rope.get("original_max_position_embeddings", 4096))

    def correction_dim(rotations):
        turns = original / (f32(rotations) * 2 * math.pi)
        return (f32(d) * torch.log(turns)) / (2 * torch.log(f32(base)))

    low = correction_dim(rope.get("beta_fast") or 32.0)
    high = correction_dim(rope.get("beta_slow") or 1.0)
    if rope.get("truncate", True):
        low, high = torch.floor(low), torch.ceil(high)
    low = torch.maximum(low, f32(0))
    high = torch.minimum(high, f32(d - 1))
    width = torch.maximum(high - low, f32(0.001))
    ramp = torch.clip((torch.arange(0, d // 2, dtype=torch.float32) - low) / width, 0, 1)
    keep = 1 - ramp
    return interpolation * (1 - keep) + extrapolation * keep


def _llama3(torch, rope: dict, d: int, base: float):
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / _f32(torch, d)))
    original, factor = rope["original_max_position_embeddings"], rope["factor"]
    low, high = rope["low_freq_factor"], rope["high_freq_factor"]
    low_wavelength, high_wavelength = original / low, original / high
    wavelength = 2 * math.pi / inv_freq
    inv_freq = torch.where(wavelength > low_wavelength, inv_freq / factor, inv_freq)
    smooth = ((original / wavelength) - low) / (high - low)
    smoothed = (1 - smooth) * (inv_freq / factor) + (smooth * inv_freq)
    medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
    return torch.where(medium, smoothed, inv_freq)


def inv_freq(torch, rope: dict, d: int, base: float):
    """keras-hub's inverse frequencies on the torch backend (float32, d / 2 of them)."""
    kind = rope.get("rope_type", "default")
    if kind == "llama3":
        return _llama3(torch, rope, d, base)
    if kind == "yarn":
        return _yarn(torch, rope, d, base)
    index = torch.arange(0, d, 2, dtype=torch.float32) / _f32(torch, d)
    inverse = torch.pow(_f32(torch, base), -index)
    if kind == "linear":
        return inverse / _f32(torch, rope["factor"])
    if kind == "dynamic":
        exponent = _f32(torch, d) / _f32(torch, max(1, d - 2))
        return inverse / torch.pow(_f32(torch, rope["factor"]), exponent)
    return inverse


def refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    why = plain_rotary(spec, "keras-hub")
    if why:
        return why
    if kind not in _TYPES:
        return f"keras-hub 0.32.0's rotary layers have no rope_type {kind}"
    extra = sorted(set(rope) & {"partial_rotary_factor", "attention_factor", "ntk_factor"})
    extra += sorted(set(rope) & {"mscale", "mscale_all_dim"})
    if extra:
        return f"keras-hub's RotaryEmbedding takes no {', '.join(extra)}"
    if spec.d_model % 2:
        return f"keras-hub rotates two halves: the head dim must be even (got {spec.d_model})"
    if spec.dtype not in ("float32", "bfloat16", "float16"):
        return f"keras-hub's compute dtypes are float32, bfloat16, float16 (got {spec.dtype})"
    return None


@variant(
    VARIANTS,
    "keras-hub",
    framework="keras-hub",
    source="keras-hub 0.32.0 RotaryEmbedding and LlamaRotaryEmbedding (llama3) on Keras 3.15.1's "
    "torch backend: power(base, -x), YaRN's float32 bounds and its factor in the compute dtype",
    conventions=("half",),
    refuse=refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _keras_hub_rope(spec, device):
    import torch

    rope = dict(spec.rope)
    table = framework_table(spec, inv_freq(torch, rope, spec.d_model, spec.base), 1.0, False)
    if rope.get("rope_type") != "yarn" or spec.part not in ("cos", "sin"):
        return table
    # cos and sin cast to the compute dtype, then times 0.1 * log(factor) + 1 in it
    low = getattr(torch, spec.dtype)
    factor = _f32(torch, 0.1).to(low) * torch.log(_f32(torch, rope["factor"]).to(low))
    return table.to(low) * (factor + _f32(torch, 1.0).to(low))
