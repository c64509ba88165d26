"""Cohere2 (Command R7B) and Flint: only sliding-window layers rotate, and none where
sliding_window is null."""

from .base import Schedule, every


def _rotates(settings, index: int, layer_type):
    if layer_type != "sliding_attention":
        return f"NoPE: a {layer_type} layer (only sliding_attention layers rotate)"
    if settings.get("sliding_window") is None:
        return "NoPE: sliding_window is null, so no layer has a sliding window to rotate"
    return None


def _engines(settings, layers) -> list[str]:
    full = {layer.index for layer in layers if layer.kind != "sliding_attention"}
    if settings.model_type != "cohere2" or full == every(4, len(layers)):
        return []
    return [
        "llama.cpp takes Cohere2's sliding layers from a pattern its converter does not write, "
        "so every 4th layer is full attention there: this model's differ"
    ]


SCHEDULES = (
    Schedule(("cohere2", "flint"), keys=("sliding_window",), rotates=_rotates, engines=_engines),
)
