"""Rotary caches as ONNX Runtime GenAI 0.18.0's model builder bakes them into the ONNX graph:
the variant ort-genai.

The builder (models/builders/base.py, Model.make_rotary_embedding_caches) computes cos_cache and
sin_cache once, for positions 0 .. max_position_embeddings - 1, and stores them as initializers
of (positions, rotary dim / 2): one column per frequency, --convention single; its
RotaryEmbedding op pairs the halves of the rotary dims (or adjacent dims) from them. They are
cast to the model's io dtype (float32, float16 or bfloat16) unless the builder keeps RoPE in
float32 (Qwen's builders do). Frequencies over dim = int(head_dim * partial_rotary_factor):

    default   1 / (1 * base**(arange(0, dim, 2).float() / dim))                transformers'
    llama3    (LlamaModel only) a Python loop over the float32 frequencies: long wavelengths
              / factor, (1 - smooth) * w / factor + smooth * w in the medium band. Each step is
              transformers' float32 operation on one element: transformers' table
    linear    1 / (factor * base**x) (transformers: (1 / base**x) / factor)
    yarn      inv_freq / factor * ramp + inv_freq * (1 - ramp), transformers' direction, but
              the correction bounds head_dim / 2 * ln(original / (beta * 2 pi)) / ln(base) in
              float64, never rounded (transformers floors and ceils them unless truncate is
              false), the ramp over head_dim / 2 frequencies (partial rotary fails there), the
              interpolated frequencies inv_freq / factor (transformers: 1 / (factor *
              base**x)), and cos and sin times mscale(factor, mscale) / mscale(factor,
              mscale_all_dim) where both are given, mscale itself where only it is, else
              0.1 ln(factor) + 1 (transformers reads attention_factor first, which the builder
              never does)

Positions are int64 arange converted to float32, angles torch.outer's float32 products, cos and
sin torch's on the CPU, times the factor (1 but for YaRN). The builder's LlamaModel reads only
llama3 scaling: a Llama config with linear or YaRN scaling is built there as plain RoPE, which
is --variant ort-genai without the scaling. Its YaRN takes beta_fast and beta_slow as 0 where a
config leaves them out and divides by zero; it is refused here likewise.
"""

from __future__ import annotations

from ..base import variant
from .frameworks import framework_table, plain_rotary
from .pairing import both_parts
from .types import hf_inv_freq

VARIANTS: dict = {}

_READS = {  # the rope parameters the builder reads, by rope_type
    "default": {"partial_rotary_factor"},
    "linear": {"factor", "partial_rotary_factor"},
    "llama3": {
        "factor",
        "low_freq_factor",
        "high_freq_factor",
        "original_max_position_embeddings",
        "partial_rotary_factor",
    },
    "yarn": {
        "factor",
        "beta_fast",
        "beta_slow",
        "original_max_position_embeddings",
        "mscale",
        "mscale_all_dim",
        "truncate",
        "partial_rotary_factor",
    },
}


def _ramp_bounds(rope: dict, head_dim: int, base: float) -> tuple[float, float]:
    """The builder's unrounded YaRN correction bounds (numpy float64): the frequency index
    that turns beta times over the original length, over head_dim / 2 frequencies."""
    import numpy as np

    half = head_dim / 2
    original = rope["original_max_position_embeddings"]

    def bound(turns):
        return half * np.log(original / (turns * 2 * np.pi)) / np.log(base)

    return bound(rope["beta_fast"]), bound(rope["beta_slow"])


def yarn_factor(rope: dict) -> float:
    """What the builder multiplies YaRN's cos and sin by (numpy float64, as it computes it)."""
    import numpy as np

    factor = rope["factor"]
    mscale, all_dim = rope.get("mscale", 0), rope.get("mscale_all_dim", 0)

    def of(scale):
        return 0.1 * scale * np.log(factor) + 1.0 if factor > 1 else 1.0

    if mscale > 0 and all_dim > 0:
        return float(of(mscale) / of(all_dim))
    if mscale > 0:
        return float(mscale)
    return 1.0 if factor <= 1.0 else 0.1 * np.log(factor) + 1.0


def inv_freq(torch, spec):
    """The builder's float32 frequencies for a spec (rotary dim / 2 of them), and the factor
    its cos and sin carry."""
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    if kind in ("default", "llama3"):  # transformers' arithmetic, operation for operation
        frequencies, _ = hf_inv_freq(torch, spec, lambda: spec.last_position + 1)
        return frequencies, 1.0
    dim = int(rope.get("partial_rotary_factor", 1.0) * spec.d_model)
    powers = spec.base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
    if kind == "linear":
        return 1.0 / (rope["factor"] * powers), 1.0
    frequencies = 1.0 / powers
    low, high = _ramp_bounds(rope, spec.d_model, spec.base)
    ramp = (torch.arange(spec.d_model / 2, dtype=torch.float32) - low) / (high - low)
    kept = 1 - ramp.clamp(0, 1)  # the share of each frequency left as it is
    frequencies = frequencies / rope["factor"] * (1 - kept) + frequencies * kept
    return frequencies, yarn_factor(rope)


def _yarn_refusal(rope: dict, spec) -> str | None:
    for key in ("beta_fast", "beta_slow", "original_max_position_embeddings"):
        if not rope.get(key):
            return (
                f"ORT-GenAI's builder reads YaRN's {key} from the config and fails without it "
                "(beta_fast and beta_slow are 0 there, and it divides by zero): give it"
            )
    if rope.get("truncate", False):
        return (
            "ORT-GenAI's builder never rounds YaRN's correction bounds (it reads no truncate): "
            "give truncate=false or leave it out"
        )
    low, high = _ramp_bounds(rope, spec.d_model, spec.base)
    if not 0 < low < high < spec.d_model / 2 - 1:
        return (
            f"ORT-GenAI's builder asserts 0 < low < high < head_dim / 2 - 1 for YaRN's "
            f"correction bounds (got {low:.4g} and {high:.4g})"
        )
    return None


def _refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    why = plain_rotary(spec, "ort-genai")
    if why:
        return why
    if kind not in _READS:
        return (
            f"ORT-GenAI 0.18.0's builder bakes no rope_type {kind} into a cos/sin cache "
            "(default, linear, llama3, yarn)"
        )
    extra = sorted(set(rope) - _READS[kind] - {"rope_type"})
    if extra:
        return f"ORT-GenAI's builder reads no {', '.join(extra)} for rope_type {kind}"
    dim = int(rope.get("partial_rotary_factor", 1.0) * spec.d_model)
    if dim % 2 or dim < 2:
        return f"ORT-GenAI's cache holds rotary dim / 2 columns: the rotary dim {dim} must be even"
    if kind == "yarn":
        if dim != spec.d_model:
            return "ORT-GenAI's YaRN ramp runs over head_dim / 2 frequencies: no partial rotary"
        why = _yarn_refusal(rope, spec)
        if why:
            return why
    if spec.dtype not in ("float32", "float16", "bfloat16"):
        return f"ORT-GenAI's caches are float32, float16 or bfloat16 (got --dtype {spec.dtype})"
    return None


@variant(
    VARIANTS,
    "ort-genai",
    framework="ORT-GenAI",
    follows="transformers",
    source="onnxruntime-genai 0.18.0 model builder, cos_cache and sin_cache (default, linear, "
    "llama3, yarn): transformers' table but for linear's and YaRN's frequencies and YaRN's "
    "factor",
    conventions=("single",),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _ort_genai_rope(spec, device):
    import torch

    frequencies, factor = inv_freq(torch, spec)
    return framework_table(spec, frequencies, factor, polar=False)
