"""EXAONE 4 and its copies: full-attention layers apply no rotation ("global NoPE"), unless
sliding_window is null, where every layer rotates."""

from .base import Schedule


def _rotates(settings, index: int, layer_type):
    if layer_type == "sliding_attention" or settings.get("sliding_window") is None:
        return None
    return f"NoPE: a {layer_type} layer (only sliding_attention layers rotate)"


SCHEDULES = (
    Schedule(("exaone4", "exaone_moe", "kolibri1"), keys=("sliding_window",), rotates=_rotates),
)
