"""Rotary tables of the training frameworks whose arithmetic is transformers' own, operation for
operation: the variants megatron-core and llama-models. Each is --variant hf-rope's table (cos and
sin, or llama-models' torch.polar) over the rope types and parameters the framework has, and is
named beside transformers where both make the table (`follows`).

Megatron-core 0.16.1 (models/common/embeddings): RotaryEmbedding's inv_freq is
1 / base**(arange(0, dim, 2, float32) / dim), dim = int(kv_channels * rotary_percent); llama3
scaling (rope_scaling=True) takes the factor and fixes low_freq_factor 1, high_freq_factor 4 and
8192 original positions, and blends (1 - smooth) * inv_freq / factor + smooth * inv_freq as
transformers does; YarnRotaryEmbedding mixes 1 / (factor * base**x) and 1 / base**x along
transformers' ramp (correction_range_round_to_int is transformers' truncate) and multiplies cos
and sin by mscale(factor, mscale) / mscale(factor, mscale_all_dim). Positions are float32
arange + offset, angles torch.outer, cos and sin in float32 (times the factor), cast to the
activations' dtype in apply_rotary_pos_emb:

    cos, sin    [cos(p w_0) .. cos(p w_{n-1}) | the same]         the half layout
    interleaved [cos(p w_0), cos(p w_0), cos(p w_1), ...]          rotary_interleaved=True

Its linear scaling (seq_len_interpolation_factor) multiplies the positions by 1 / factor, which
transformers does not; it is refused, as are the rope types Megatron lacks.

Meta's llama-models 0.3.0 (llama3/model.py and llama4/model.py precompute_freqs_cis): the same
inv_freq, apply_scaling with low_freq_factor 1 and 8192 original positions (Llama 3 fixes the
factor at 8 and high_freq_factor at 4; Llama 4 passes both), float32 angles and
torch.polar(1, angle) in complex64: freqs_cis, one column per frequency (--convention single;
its real part cos, its imaginary part sin), rotating adjacent pairs (interleaved). It rotates
in float32 (xq.float() * freqs_cis) and keeps no half table.
"""

from __future__ import annotations

from ..base import variant
from .pairing import both_parts, lay_out
from .tokens import line_positions
from .transformers import hf_table

VARIANTS: dict = {}

_FLOAT32_POSITIONS = 2**24  # float32 arange + offset counts whole positions up to here
_LLAMA_MODELS_KEYS = {
    "rope_type",
    "factor",
    "low_freq_factor",
    "high_freq_factor",
    "original_max_position_embeddings",
}


def plain_rotary(spec, name: str) -> str | None:
    if spec.axes:
        return f"--variant {name} builds one position axis (no M-RoPE or vision layout)"
    if spec.ids is not None:
        return f"--variant {name}'s rows are positions offset, offset + 1, ...: give --offset"
    if spec.offset + spec.seq_len > _FLOAT32_POSITIONS:
        return f"{name} counts positions in float32 (arange + offset), whole only up to 2^24"
    return None


def _llama3_fixed(rope, what: str, fixed: dict) -> str | None:
    for key, value in fixed.items():
        if float(rope.get(key, value)) != value:
            return f"{what} fixes {key} at {value:g} (got {rope[key]:g})"
    return None


def _megatron_refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    why = plain_rotary(spec, "megatron-core")
    if why:
        return why
    if kind not in ("default", "llama3", "yarn"):
        if kind == "linear":
            return (
                "megatron-core's linear scaling (seq_len_interpolation_factor) multiplies the "
                "positions by 1 / factor, not transformers' inv_freq / factor; it is not "
                "reproduced"
            )
        return f"megatron-core 0.16.1 has no rope_type {kind} (default, llama3 and yarn only)"
    if "ntk_factor" in rope or "attention_factor" in rope:
        key = "ntk_factor" if "ntk_factor" in rope else "attention_factor"
        return f"megatron-core has no {key}"
    if kind == "llama3":
        fixed = {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
        fixed["original_max_position_embeddings"] = 8192.0
        return _llama3_fixed(rope, "megatron-core's RotaryEmbedding._apply_scaling", fixed)
    if kind == "yarn" and spec.convention != "half":
        return "megatron-core's YarnRotaryEmbedding pairs half only (it asserts not interleaved)"
    if kind == "yarn" and rope.get("partial_rotary_factor", 1.0) != 1.0:
        return "megatron-core's YarnRotaryEmbedding takes its frequencies over the whole head dim"
    if spec.dtype not in ("float32", "bfloat16", "float16"):
        return f"megatron-core rotates float32, bfloat16 or float16 (got --dtype {spec.dtype})"
    return None


@variant(
    VARIANTS,
    "megatron-core",
    framework="megatron-core",
    follows="transformers",
    source="megatron-core 0.16.1 RotaryEmbedding (llama3 rope_scaling) and YarnRotaryEmbedding, "
    "cos and sin as apply_rotary_pos_emb casts them: transformers' arithmetic",
    conventions=("half", "interleaved"),
    refuse=_megatron_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _megatron_rope(spec, device):
    return hf_table(spec.replace(arithmetic="cos-sin"))


def _llama_models_refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    why = plain_rotary(spec, "llama-models")
    if why:
        return why
    if kind not in ("default", "llama3"):
        return f"llama-models' precompute_freqs_cis has no rope_type {kind} (default, llama3)"
    extra = sorted(set(rope) - _LLAMA_MODELS_KEYS)
    if extra:
        return f"llama-models' precompute_freqs_cis takes no {', '.join(extra)}"
    if kind == "llama3":
        fixed = {"low_freq_factor": 1.0, "original_max_position_embeddings": 8192.0}
        why = _llama3_fixed(rope, "llama-models' apply_scaling", fixed)
        if why:
            return why
    if spec.d_model % 2:
        return f"llama-models rotates pairs: the head dim must be even (got {spec.d_model})"
    if spec.dtype != "float32":
        return (
            "llama-models keeps freqs_cis in complex64 and rotates in float32 (xq.float()): "
            "its table has no other dtype"
        )
    return None


@variant(
    VARIANTS,
    "llama-models",
    framework="llama-models",
    follows="transformers",
    source="llama-models 0.3.0 precompute_freqs_cis (llama3 and llama4 model.py): "
    "torch.polar in complex64, transformers' arithmetic with --rope-arithmetic polar",
    conventions=("single", "interleaved"),
    refuse=_llama_models_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _llama_models_rope(spec, device):
    return hf_table(spec.replace(arithmetic="polar"))


def framework_table(spec, inv_freq, attention: float, polar: bool):
    """The part of a 1-D table a framework builds from its own float32 inv_freq: float32
    positions times inv_freq (torch.outer's products), cos and sin (or torch.polar in complex64)
    times the attention factor, laid out in spec's pairing; float32, the dtype cast after."""
    import torch

    positions = torch.from_numpy(line_positions(spec))
    if spec.part == "inv_freq":
        return inv_freq.float()[None, :]
    angles = positions[:, None].float() * inv_freq.float()[None, :]
    if spec.part == "angle":
        return lay_out(angles, spec.convention).float()
    if polar:
        value = torch.polar(torch.ones_like(angles), angles) * attention
        plane = value.real if spec.part == "cos" else value.imag
    else:
        plane = (angles.cos() if spec.part == "cos" else angles.sin()) * attention
    return lay_out(plane, spec.convention).float()
