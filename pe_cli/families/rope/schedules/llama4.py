"""Llama 4's text model: every no_rope_layer_interval-th layer applies no rotation (unless
no_rope_layers lists them; an empty list counts as none), and those NoPE layers scale their
queries by position where attn_temperature_tuning is on: 1 + attn_scale * log1p(floor((p + 1)
/ floor_scale)). Rotating layers are chunked attention, NoPE layers full attention."""

from .base import QueryScale, Schedule, every, flags


def _rope(settings, index: int) -> int:
    interval = settings.get("no_rope_layer_interval")
    return flags(
        settings, "no_rope_layers", index, lambda i: int((i + 1) % interval != 0), truthy=True
    )


def _kinds(settings):
    given = settings.node.get("layer_types")
    if isinstance(given, list):
        return [str(k) for k in given]
    count = settings.get("num_hidden_layers")
    return ["chunked_attention" if _rope(settings, i) else "full_attention" for i in range(count)]


def _rotates(settings, index: int, layer_type):
    return None if _rope(settings, index) else f"NoPE: no_rope_layers[{index}] = 0"


def _scale(settings, index: int, layer_type, rope: dict):
    if _rope(settings, index) or not settings.get("attn_temperature_tuning"):
        return None
    return QueryScale(
        "temperature",
        (
            ("floor_scale", float(settings.get("floor_scale"))),
            ("attn_scale", float(settings.get("attn_scale"))),
        ),
        "attn_temperature_tuning, floor_scale, attn_scale",
    )


def _engines(settings, layers) -> list[str]:
    lines = []
    nope = {layer.index for layer in layers if layer.table is None}
    if nope != every(4, len(layers)):
        lines.append(
            "llama.cpp hard-codes every 4th layer as Llama 4's NoPE layers (n_no_rope_layer_step "
            "4; no GGUF key): this model's differ"
        )
    if any(layer.scale is not None for layer in layers):
        own = (settings.get("floor_scale"), settings.get("attn_scale"))
        if own != (8192, 0.1):
            lines.append(
                "llama.cpp hard-codes Llama 4's query temperature as floor_scale 8192, "
                f"attn_scale 0.1 (src/models/llama4.cpp): this model's are {own[0]:g}, {own[1]:g}"
            )
        lines += [
            "vLLM applies Llama 4's query temperature only where max_model_len > 32768 (its "
            "default for attn_temperature_tuning, read from generation_config)",
            "mlx-lm applies Llama 4's query temperature in llama4.py, not in llama4_text.py",
        ]
    return lines


SCHEDULES = (
    Schedule(
        ("llama4_text",),
        keys=(
            "no_rope_layers",
            "no_rope_layer_interval",
            "attn_temperature_tuning",
            "floor_scale",
            "attn_scale",
        ),
        kinds=_kinds,
        rotates=_rotates,
        scale=_scale,
        engines=_engines,
        # its table is a complex freqs_cis, one column per pair: view_as_complex pairs 2i, 2i + 1
        applied=lambda settings, index, layer_type: "interleaved",
    ),
)
