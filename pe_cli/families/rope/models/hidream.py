"""HiDream-I1: HiDreamImageEmbedND, float64 angles; its table is the rotation part."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_at_zero

HIDREAM_LAYOUT = Split(
    name="hidream",
    summary="HiDream-I1: split axes (0, row, column), the image's tokens first, then its text (and "
    "padding) tokens at 0",
    axes=("i", "h", "w"),
    convention="interleaved",
    place=counting,
    text=text_at_zero,
    text_after=True,
)

HIDREAM = Preset(
    name="hidream",
    summary=(
        "HiDream-I1: HiDreamImageEmbedND, float64 angles; its table is --part rotation; text "
        "tokens (T5's, Llama's twice: 384) and a non-square image's padding follow the image,"
        " at 0"
    ),
    head_dim=128,
    theta=10000.0,
    layout=HIDREAM_LAYOUT,
    axes_dim=(64, 32, 32),
    convention="interleaved",
    freqs_dtype="float64",
)
