"""Motif-Video: MotifVideoRotaryPosEmbed, HunyuanVideo's axes in float64."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

MOTIF_VIDEO = Preset(
    name="motif-video",
    summary="Motif-Video: MotifVideoRotaryPosEmbed, HunyuanVideo's axes in float64",
    head_dim=128,
    theta=256.0,
    layout=SPLIT,
    axes_dim=(16, 56, 56),
    convention="interleaved",
    freqs_dtype="float64",
)
