"""Ovis-Image: OvisImagePosEmbed, text token k at (0, k, k)."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_on

OVIS_IMAGE_LAYOUT = Split(
    name="ovis-image",
    summary="Ovis-Image: split axes, text token k at (0, k, k), patches at (0, row, column)",
    axes=("t", "h", "w"),
    convention="interleaved",
    place=counting,
    text=text_on(1, 2),
)

OVIS_IMAGE = Preset(
    name="ovis-image",
    summary="Ovis-Image: OvisImagePosEmbed, text token k at (0, k, k)",
    head_dim=128,
    theta=10000.0,
    layout=OVIS_IMAGE_LAYOUT,
    axes_dim=(16, 56, 56),
    convention="interleaved",
    freqs_dtype="float64",
)
