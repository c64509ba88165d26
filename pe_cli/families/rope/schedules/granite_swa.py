"""Granite SWA: each layer's own theta, layer_rope_theta (0: the layer applies no rotation;
any other: its table's base), by default the model's rope_theta on every layer."""

from .base import Schedule, flags


def _theta(settings, index: int):
    return flags(settings, "layer_rope_theta", index, lambda i: None)


def _rotates(settings, index: int, layer_type):
    return f"NoPE: layer_rope_theta[{index}] = 0" if _theta(settings, index) == 0 else None


def _base(settings, index: int, layer_type, table: dict) -> dict:
    theta = _theta(settings, index)
    return table if theta is None else {**table, "base": float(theta)}


SCHEDULES = (
    Schedule(
        ("granite_swa", "granitemoe_swa"),
        keys=("layer_rope_theta",),
        rotates=_rotates,
        table=_base,
    ),
)
