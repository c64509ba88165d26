"""Rotary tables as Hugging Face transformers 5.23 computes them: modeling_rope_utils'
ROPE_INIT_FUNCTIONS for inv_freq and the attention factor (GPT-NeoX's default, which honours
partial_rotary_factor), then the rotary embedding's forward: float32 angles p*w,
cat((freqs, freqs)), cos/sin times the attention factor. The variant hf-rope, and the
precision recipes that run one of its stages in a lower dtype."""

from __future__ import annotations

import math

from ..base import variant
from .layouts import axes_plan
from .pairing import both_parts, lay_out
from .parameters import rotary_dim, rotated_count
from .tokens import axes_positions, line_positions, positions_end

VARIANTS: dict = {}


def hf_inv_freq(torch, spec, dim: int | None = None):
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    base, dim = spec.base * rope.get("ntk_factor", 1.0), dim or rotary_dim(spec.d_model, rope)
    factor = rope.get("factor")
    attention_factor = 1.0
    exponents = hf_exponents(torch, dim)
    if kind == "dynamic":
        limit = rope["max_position_embeddings"]
        end = positions_end(spec)
        if end > limit:  # the forward pass regrows base from the int64 tensor max(position) + 1
            length = torch.maximum(torch.tensor(end), torch.tensor(limit, dtype=torch.int64))
        else:  # the frequencies made at construction, from max_position_embeddings
            length = limit
        base = base * ((factor * length / limit) - (factor - 1)) ** (dim / (dim - 2))
    if kind == "yarn":
        return _hf_yarn(torch, rope, base, dim, factor)
    if (
        kind == "proportional"
    ):  # Gemma 4: the first int(p * head_dim // 2) angles rotate, the rest are 0
        rotated = rotated_count(spec.d_model, rope)
        exponents = torch.arange(0, 2 * rotated, 2, dtype=torch.int64).float() / dim
        inv_freq = torch.cat((1.0 / (base**exponents), torch.zeros(dim // 2 - rotated)))
        return inv_freq / (factor or 1.0), attention_factor
    if kind == "longrope":
        original = rope["original_max_position_embeddings"]
        if factor is None:
            factor = rope["max_position_embeddings"] / original
        attention_factor = rope.get("attention_factor")
        if attention_factor is None:
            attention_factor = longrope_attention(factor, original)
        long = positions_end(spec) > original
        ext = torch.tensor(rope["long_factor" if long else "short_factor"], dtype=torch.float32)
        return longrope_inv_freq(ext, base**exponents), attention_factor
    inv_freq = 1.0 / (base**exponents)
    if kind == "linear":
        inv_freq /= factor
    if kind == "llama3":
        inv_freq = _hf_llama3(torch, rope, inv_freq)
    return inv_freq, attention_factor


def hf_exponents(torch, dim: int):  # 2i / dim in float32, from int64 arange(0, dim, 2)
    return torch.arange(0, dim, 2, dtype=torch.int64).float() / dim


def longrope_attention(factor: float, original: int) -> float:  # Phi-3's, in Python floats
    return 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))


def longrope_inv_freq(ext, powers):  # 1 / (factor * base**(2i / dim)), each step in float32
    return 1.0 / (ext * powers)


def hf_part(freqs, part: str, attention_factor):  # cos or sin of the angles, times the factor
    return (freqs.cos() if part == "cos" else freqs.sin()) * attention_factor


def _hf_yarn(torch, rope, base, dim, factor):
    original = rope["original_max_position_embeddings"]
    attention_factor = rope.get("attention_factor")
    if attention_factor is None:

        def m_scale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")
        if mscale and all_dim:
            attention_factor = float(m_scale(factor, mscale) / m_scale(factor, all_dim))
        else:
            attention_factor = m_scale(factor)

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(rope.get("beta_fast") or 32)
    high = correction_dim(rope.get("beta_slow") or 1)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** hf_exponents(torch, dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - ramp.to(dtype=torch.float)
    return interpolation * (1 - keep) + extrapolation * keep, attention_factor


def _hf_llama3(torch, rope, inv_freq):
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    original = rope["original_max_position_embeddings"]
    low_wavelength, high_wavelength = original / low, original / high
    wavelength = 2 * math.pi / inv_freq
    scaled = torch.where(wavelength > low_wavelength, inv_freq / factor, inv_freq)
    smooth = (original / wavelength - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < high_wavelength) * ~(wavelength > low_wavelength)
    return torch.where(medium, smoothed, scaled)


def _rope_table(spec, lowered: str | None = None):
    # lowered: which stage runs in --compute-dtype (the precision failures reported in ports)
    import torch

    low = getattr(torch, spec.compute_dtype or "bfloat16")
    laws, columns = axes_plan(spec) if spec.axes else ([(None, None)], None)
    inv_freq, attention_factor = hf_inv_freq(torch, spec, laws[0][0])
    if lowered == "inv_freq":  # the buffer cast by model.to(dtype), widened again in forward
        inv_freq = inv_freq.to(low)
    if spec.part == "inv_freq":
        return inv_freq.float()[None, :]
    if spec.axes:  # (tokens, axes): every axis's angles, then each column's axis and frequency
        positions = torch.from_numpy(axes_positions(spec))
    else:
        positions = torch.from_numpy(line_positions(spec))[None, :]
    if lowered == "positions":
        positions = positions.to(low)
    freqs = positions[..., None].float() * inv_freq.float()
    if lowered == "table":  # angles and cos/sin in the low dtype (autocast without a guard)
        freqs = freqs.to(low)
    if spec.part == "angle":  # the angles themselves (Stable Audio 3's cat((freqs, freqs)))
        plane = freqs
    elif spec.arithmetic == "polar":  # DeepSeek-V2, Llama 4: torch.polar(1, angle) in complex64
        value = torch.polar(torch.ones_like(freqs), freqs) * attention_factor
        plane = value.real if spec.part == "cos" else value.imag
    else:  # cos and sin of each angle (the same numbers in cat((freqs, freqs)) or repeat_interleave)
        plane = hf_part(freqs, spec.part, attention_factor)
    if columns is not None:
        axis, frequency = (torch.tensor(list(c)) for c in zip(*columns))
        return plane[:, axis, frequency].float()
    return lay_out(plane[0], spec.convention).float()


_HF = dict(parameters=frozenset({"base", "offset"}))


@variant(
    VARIANTS,
    "hf-rope",
    source="transformers 5.23 modeling_rope_utils ROPE_INIT_FUNCTIONS and the "
    "rotary embedding's forward (GPT-NeoX, Llama; Cohere's interleaved; DeepSeek-V2's polar)",
    conventions=("half", "interleaved", "single"),
    **_HF,
)
@both_parts
def _hf_rope(spec, device):
    return _rope_table(spec)


for _stage, _what in (
    ("inv_freq", "inv_freq"),
    ("positions", "the positions"),
    ("table", "the angles and cos/sin"),
):
    variant(
        VARIANTS,
        f"rope-{_stage.replace('_', '-')}",
        kind="recipe",
        source=f"hf-rope with {_what} in --compute-dtype (default bfloat16)",
        conventions=("half", "interleaved", "single"),
        **_HF,
    )(both_parts(lambda spec, device, stage=_stage: _rope_table(spec, stage)))
