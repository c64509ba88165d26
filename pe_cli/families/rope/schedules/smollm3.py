"""SmolLM3: every no_rope_layer_interval-th layer applies no rotation, unless config.json lists
no_rope_layers (1 rotates, 0 does not)."""

from .base import Schedule, flags


def _rotates(settings, index: int, layer_type):
    interval = settings.get("no_rope_layer_interval")
    if flags(settings, "no_rope_layers", index, lambda i: int((i + 1) % interval != 0)):
        return None
    return f"NoPE: no_rope_layers[{index}] = 0"


SCHEDULES = (
    Schedule(
        ("smollm3",),
        keys=("no_rope_layers", "no_rope_layer_interval"),
        rotates=_rotates,
    ),
)
