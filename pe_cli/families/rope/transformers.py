"""Rotary tables as Hugging Face transformers 5.23 computes them: modeling_rope_utils'
ROPE_INIT_FUNCTIONS for inv_freq and the attention factor (GPT-NeoX's default, which honours
partial_rotary_factor), then the rotary embedding's forward: float32 angles p*w,
cat((freqs, freqs)), cos/sin times the attention factor. The variant hf-rope, and the
precision recipes that run one of its stages in a lower dtype."""

from __future__ import annotations

from ..base import variant
from .layouts import axes_plan
from .pairing import both_parts, lay_out
from .query_scale import torch_values
from .tokens import axes_positions, line_positions, positions_end
from .types import hf_inv_freq

VARIANTS: dict = {}


def hf_part(freqs, part: str, attention_factor):  # cos or sin of the angles, times the factor
    return (freqs.cos() if part == "cos" else freqs.sin()) * attention_factor


def hf_table(spec, lowered: str | None = None):
    """transformers' table of a spec, with one stage in --compute-dtype where `lowered` says."""
    # lowered: which stage runs in --compute-dtype (the precision failures reported in ports)
    import torch

    low = getattr(torch, spec.compute_dtype or "bfloat16")
    laws, columns = axes_plan(spec) if spec.axes else ([(None, None)], None)
    inv_freq, attention_factor = hf_inv_freq(torch, spec, lambda: positions_end(spec), laws[0][0])
    if lowered == "inv_freq":  # the buffer cast by model.to(dtype), widened again in forward
        inv_freq = inv_freq.to(low)
    if spec.part == "inv_freq":
        return inv_freq.float()[None, :]
    if spec.part == "query-scale":
        return torch_values(torch, dict(spec.rope), line_positions(spec)).float()[:, None]
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
    engine="transformers",
    source="transformers 5.23 modeling_rope_utils ROPE_INIT_FUNCTIONS and the "
    "rotary embedding's forward (GPT-NeoX, Llama; Cohere's interleaved; DeepSeek-V2's polar)",
    conventions=("half", "interleaved", "single"),
    **_HF,
)
@both_parts
def _hf_rope(spec, device):
    return hf_table(spec)


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
    )(both_parts(lambda spec, device, stage=_stage: hf_table(spec, stage)))
