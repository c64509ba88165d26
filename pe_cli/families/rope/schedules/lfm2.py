"""LFM2: layers are short convolutions but for those full_attn_idxs lists (where config.json
gives no layer_types), which rotate; a convolution has no attention to rotate."""

from .base import Schedule


def _kinds(settings):
    given = settings.node.get("layer_types")
    if isinstance(given, list):
        return [str(k) for k in given]
    count = settings.get("num_hidden_layers")
    listed = settings.node.get("full_attn_idxs")
    attention = set(range(count)) if listed is None else set(listed)
    return ["full_attention" if i in attention else "conv" for i in range(count)]


def _rotates(settings, index: int, layer_type):
    return None if layer_type == "full_attention" else "NoPE: a conv layer has no attention"


SCHEDULES = (
    Schedule(("lfm2", "lfm2_moe"), keys=("full_attn_idxs",), kinds=_kinds, rotates=_rotates),
)
