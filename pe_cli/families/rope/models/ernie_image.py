"""ERNIE-Image: ErnieImageEmbedND3 (its table is the angles; the attention takes their cos and
sin in float32), the image's tokens first."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_on

ERNIE_IMAGE_LAYOUT = Split(
    name="ernie-image",
    summary="ERNIE-Image: split axes, the image's patches first at (N, row, column) for N text tokens, "
    "then text token k at (k, 0, 0)",
    axes=("t", "h", "w"),
    convention="interleaved",
    place=counting,
    text=text_on(0),
    origin=lambda spec: spec.text_tokens,
    text_after=True,
)

ERNIE_IMAGE = Preset(
    name="ernie-image",
    summary=(
        "ERNIE-Image: ErnieImageEmbedND3 (its angles; the attention takes their cos and sin "
        "in float32), image first"
    ),
    head_dim=128,
    theta=256.0,
    layout=ERNIE_IMAGE_LAYOUT,
    axes_dim=(32, 48, 48),
    convention="interleaved",
    freqs_dtype="float32",
)
