"""The DeepSeek family. V3's attention rotates its rotary part in interleaved pairs (2i, 2i+1)
where rope_interleave is true (its default), from the half-paired table its rotary module
makes; V3.2's attention always does, and its indexer does not (half pairs, by the same table).

DeepSeek-V4 keeps two tables, labelled main (theta rope_theta, no scaling) and compress
(compress_rope_theta, with the config's scaling and an attention factor of 1): its
sliding-window layers read main, its compressed ones compress. A config.json of its legacy
form (compress_ratios, rope_scaling, qk_rope_head_dim) is completed as DeepseekV4Config
completes it.

LongCat-Flash's decoder layers hold two attention sublayers each, each a layer of its cache:
its config derives num_hidden_layers as 2 * num_layers, and config.json gives num_layers."""

from __future__ import annotations

import json

from ....core.errors import BadInput
from .base import Schedule

# compress_ratios' values, as DeepseekV4Config reads them
_RATIOS = {
    0: "sliding_attention",
    4: "compressed_sparse_attention",
    128: "heavily_compressed_attention",
}


def _fill_longcat(node: dict, facts: dict) -> dict:
    layers = node.get("num_layers")
    if "num_hidden_layers" in node or isinstance(layers, bool) or not isinstance(layers, int):
        return node
    return {**node, "num_hidden_layers": 2 * layers}


def _fill_v4(node: dict, facts: dict) -> dict:
    node = json.loads(json.dumps(node))
    ratios = node.pop("compress_ratios", None)
    if node.get("layer_types") is None and ratios is not None:
        if not isinstance(ratios, list) or any(r not in _RATIOS for r in ratios):
            raise BadInput(
                f"compress_ratios holds values other than {', '.join(map(str, _RATIOS))}"
            )
        node["layer_types"] = [_RATIOS[r] for r in ratios]
    defaults = facts.get("defaults", {})
    count = node.get("num_hidden_layers", defaults.get("num_hidden_layers"))
    if isinstance(node.get("layer_types"), list):
        node["layer_types"] = node["layer_types"][:count]
    rope = node.get("rope_parameters") or {}
    if isinstance(rope.get("main"), dict) and isinstance(rope.get("compress"), dict):
        node["rope_parameters"] = {"main": rope["main"], "compress": rope["compress"]}
        return node
    head = node.get("head_dim", defaults.get("head_dim"))
    partial = node.get("partial_rotary_factor")
    if partial is None:
        rotary = node.pop("qk_rope_head_dim", None)
        main = (facts.get("rope_parameters") or {}).get("main") or {}  # the class's default
        partial = rotary / head if rotary is not None else main.get("partial_rotary_factor")
    if partial is None:
        raise BadInput("DeepSeek-V4's config gives no partial_rotary_factor nor qk_rope_head_dim")
    scaling = {**(node.pop("rope_scaling", None) or {}), **rope}
    if "type" in scaling:
        scaling.setdefault("rope_type", scaling.pop("type"))
    theta = node.pop("rope_theta", defaults.get("rope_theta"))
    compress = {
        **scaling,
        "rope_theta": node.pop("compress_rope_theta", defaults.get("compress_rope_theta")),
        "partial_rotary_factor": partial,
    }
    compress.setdefault("rope_type", "default")
    if compress["rope_type"] == "yarn":
        compress.setdefault("attention_factor", 1.0)
    main = {"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": partial}
    node["rope_parameters"] = {"main": main, "compress": compress}
    node.pop("partial_rotary_factor", None)
    return node


def mla_softmax(settings, rope: dict):
    """Multi-head latent attention's softmax scale (yarn_apply_mscale): qk_head_dim**-0.5, times
    mscale**2 with mscale = 0.1 * mscale_all_dim * ln(factor) + 1 where the rope type is not
    default and mscale_all_dim is given; None where it is qk_head_dim**-0.5 alone."""
    import math

    factor, weight = rope.get("factor"), rope.get("mscale_all_dim")
    if rope.get("rope_type", "default") == "default" or not weight or not factor:
        return None
    head = settings.get("qk_nope_head_dim") + settings.get("qk_rope_head_dim")
    mscale = 0.1 * weight * math.log(factor) + 1.0 if factor > 1 else 1.0
    scale = head ** (-0.5) * mscale * mscale
    return scale, (
        f"qk_head_dim {head} ** -0.5 times mscale {mscale:.9g} squared (factor {factor:g}, "
        f"mscale_all_dim {weight:g})"
    )


def mla_passed(settings):
    """Multi-head latent attention's query and key dims that no rotation touches: the
    qk_nope_head_dim beside the qk_rope_head_dim it rotates."""
    dims = settings.get("qk_nope_head_dim")
    return (int(dims), "qk_nope_head_dim") if dims else None


def _label_v4(settings, index: int, layer_type):
    return "main" if layer_type == "sliding_attention" else "compress"


def _interleaved(settings, index: int, layer_type):
    return "interleaved" if settings.get("rope_interleave") else None


SCHEDULES = (
    Schedule(
        ("deepseek_v3", "glm4_moe_lite", "youtu", "axk1"),
        keys=("rope_interleave", "qk_nope_head_dim"),
        applied=_interleaved,
        softmax=mla_softmax,
        passed=mla_passed,
    ),
    # DeepSeek-V3.2's indexer rotates the first qk_rope_head_dim of its heads in half pairs
    Schedule(
        ("deepseek_v32",),
        keys=("qk_nope_head_dim",),
        applied=lambda settings, index, layer_type: "interleaved",
        softmax=mla_softmax,
        passed=mla_passed,
        components={"indexer": "half"},
    ),
    Schedule(
        ("glm_moe_dsa", "bailing_hybrid", "axk2"),
        keys=("qk_nope_head_dim",),
        applied=lambda settings, index, layer_type: "interleaved",
        softmax=mla_softmax,
        passed=mla_passed,
    ),
    Schedule(
        ("longcat_flash",),
        keys=("qk_nope_head_dim", "num_layers"),
        fill=_fill_longcat,
        applied=lambda settings, index, layer_type: "interleaved",
        softmax=mla_softmax,
        passed=mla_passed,
    ),
    Schedule(
        ("deepseek_v4",),
        keys=("compress_ratios", "compress_rope_theta", "qk_rope_head_dim"),
        fill=_fill_v4,
        rotates=lambda settings, index, layer_type: None,  # every layer: main or compress
        label=_label_v4,
        applied=lambda settings, index, layer_type: "interleaved",
    ),
)
