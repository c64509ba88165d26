"""HunyuanVideo and 1.5: HunyuanVideoRotaryPosEmbed over frames, rows and columns."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

HUNYUAN_VIDEO = Preset(
    name="hunyuan-video",
    summary="HunyuanVideo and 1.5: HunyuanVideoRotaryPosEmbed over frames, rows, columns",
    head_dim=128,
    theta=256.0,
    layout=SPLIT,
    axes_dim=(16, 56, 56),
    convention="interleaved",
    freqs_dtype="float32",
)
