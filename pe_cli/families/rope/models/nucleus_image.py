"""NucleusMoE-Image: NucleusMoEEmbedRope, QwenImage's complex64 table with the image's tokens
first."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import centred, text_after_image

NUCLEUS_IMAGE_LAYOUT = Split(
    name="qwenimage-image-first",
    summary="NucleusMoE-Image: QwenImage's axes with the image's tokens first, then the text's",
    axes=("t", "h", "w"),
    convention="single",
    place=centred,
    text=text_after_image,
    text_after=True,
)

NUCLEUS_IMAGE = Preset(
    name="nucleus-image",
    summary=(
        "NucleusMoE-Image: NucleusMoEEmbedRope, QwenImage's complex64 table with the image's "
        "tokens first"
    ),
    head_dim=128,
    theta=10000.0,
    layout=NUCLEUS_IMAGE_LAYOUT,
    axes_dim=(16, 56, 56),
    convention="single",
    freqs_dtype="float32",
)
