"""Granite SWA: each layer's own theta, layer_rope_theta (0: the layer applies no rotation)."""

from .base import Schedule, flags


def _theta(settings, index: int):
    return flags(settings, "layer_rope_theta", index, lambda i: None)


def _rotates(settings, index: int, layer_type):
    return f"NoPE: layer_rope_theta[{index}] = 0" if _theta(settings, index) == 0 else None


SCHEDULES = (
    Schedule(("granite_swa", "granitemoe_swa"), keys=("layer_rope_theta",), rotates=_rotates),
)
