"""QwenImage (Edit): QwenEmbedRope with scale_rope, complex64, text tokens first."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import centred, text_after_image

QWENIMAGE_LAYOUT = Split(
    name="qwenimage",
    summary="QwenImage: split axes, rows and columns centred (k - ceil(G/2)), text tokens after "
    "max(H/2, W/2) on every axis",
    axes=("t", "h", "w"),
    convention="single",
    place=centred,
    text=text_after_image,
)

QWENIMAGE = Preset(
    name="qwenimage",
    summary="QwenImage (Edit): QwenEmbedRope with scale_rope, complex64, text tokens first",
    head_dim=128,
    theta=10000.0,
    layout=QWENIMAGE_LAYOUT,
    axes_dim=(16, 56, 56),
    convention="single",
    freqs_dtype="float32",
)
