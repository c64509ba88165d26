"""Cohere2 (Command R7B) and Flint: only sliding-window layers rotate, and none where
sliding_window is null."""

from .base import Schedule


def _rotates(settings, index: int, layer_type):
    if layer_type != "sliding_attention":
        return f"NoPE: a {layer_type} layer (only sliding_attention layers rotate)"
    if settings.get("sliding_window") is None:
        return "NoPE: sliding_window is null, so no layer has a sliding window to rotate"
    return None


SCHEDULES = (Schedule(("cohere2", "flint"), keys=("sliding_window",), rotates=_rotates),)
