"""RecurrentGemma: block_types repeated over the layers; only attention blocks rotate (a
recurrent block has no attention)."""

from .base import Schedule


def _kinds(settings):
    blocks = list(settings.get("block_types"))
    count = settings.get("num_hidden_layers")
    return [blocks[i % len(blocks)] for i in range(count)]


def _rotates(settings, index: int, layer_type):
    return None if layer_type == "attention" else f"NoPE: a {layer_type} block has no attention"


SCHEDULES = (Schedule(("recurrent_gemma",), keys=("block_types",), kinds=_kinds, rotates=_rotates),)
