"""Mistral Large 4's text model: every fourth layer applies no rotation (its config class's
no_rope_layer_interval, a key it takes only to make no_rope_layers, 4 by default), unless
no_rope_layers lists them (1 rotates, 0 does not)."""

from .base import Schedule, flags

INTERVAL = 4  # MistralLarge4TextConfig: kwargs.pop("no_rope_layer_interval", 4)


def _rotates(settings, index: int, layer_type):
    interval = settings.node.get("no_rope_layer_interval", INTERVAL)
    if flags(settings, "no_rope_layers", index, lambda i: int((i + 1) % interval != 0)):
        return None
    return f"NoPE: no_rope_layers[{index}] = 0"


SCHEDULES = (
    Schedule(
        ("mistral_large4_text",),
        keys=("no_rope_layers", "no_rope_layer_interval"),
        rotates=_rotates,
        applied=lambda settings, index, layer_type: "interleaved",
    ),
)
