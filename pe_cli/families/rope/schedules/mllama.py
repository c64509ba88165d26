"""Mllama (Llama 3.2 Vision): the layers cross_attention_layers lists attend to the image's
states instead of the text's, and rotate nothing; the others are Llama's."""

from ....core.errors import BadInput
from .base import Schedule


def _rotates(settings, index: int, layer_type):
    listed = settings.get("cross_attention_layers")
    if not isinstance(listed, list):
        raise BadInput("cross_attention_layers is not a list of layer indices")
    if index in listed:
        return "NoPE: a cross-attention layer (cross_attention_layers) attends to the image"
    return None


SCHEDULES = (Schedule(("mllama_text_model",), keys=("cross_attention_layers",), rotates=_rotates),)
