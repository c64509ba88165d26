"""Models whose rotation a switch of their own turns on or off: Falcon with alibi (ALiBi biases
instead of a rotation, on every layer), Zamba2's shared attention blocks (rotated only where
use_mem_rope is true); and Bamba, whose attention layers are listed by index
(attn_layer_indices), every other layer a Mamba layer."""

from .base import Schedule


def _falcon(settings, index: int, layer_type):
    if settings.get("alibi"):
        return "NoPE: alibi is true, so Falcon adds ALiBi biases instead of rotating"
    return None


def _zamba2(settings, index: int, layer_type):
    if layer_type != "hybrid":
        return f"NoPE: a {layer_type} layer has no attention"
    if not settings.get("use_mem_rope"):
        return "NoPE: use_mem_rope is false, so Zamba2's attention blocks do not rotate"
    return None


def _bamba(settings):
    """BambaConfig.layers_block_type: full_attention at attn_layer_indices (none where it is
    null), linear_attention (Mamba) elsewhere."""
    attending = settings.get("attn_layer_indices") or []
    count = settings.get("num_hidden_layers")
    return ["full_attention" if i in attending else "linear_attention" for i in range(count)]


SCHEDULES = (
    Schedule(("bamba",), keys=("attn_layer_indices",), kinds=_bamba),
    Schedule(("falcon",), keys=("alibi",), rotates=_falcon),
    Schedule(("zamba2",), keys=("use_mem_rope",), rotates=_zamba2),
)
