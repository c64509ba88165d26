"""SmolLM3: every no_rope_layer_interval-th layer applies no rotation, unless config.json lists
no_rope_layers (1 rotates, 0 does not)."""

from .base import Schedule, every, flags


def _rotates(settings, index: int, layer_type):
    interval = settings.get("no_rope_layer_interval")
    if flags(settings, "no_rope_layers", index, lambda i: int((i + 1) % interval != 0)):
        return None
    return f"NoPE: no_rope_layers[{index}] = 0"


def _engines(settings, layers) -> list[str]:
    nope = {layer.index for layer in layers if layer.table is None}
    if nope == every(4, len(layers)):
        return []
    return [
        "llama.cpp hard-codes every 4th layer as SmolLM3's NoPE layers (n_no_rope_layer_step "
        "4, src/models/smollm3.cpp; no GGUF key): this model's differ"
    ]


SCHEDULES = (
    Schedule(
        ("smollm3",),
        keys=("no_rope_layers", "no_rope_layer_interval"),
        rotates=_rotates,
        engines=_engines,
    ),
)
