"""HunyuanImage 2.1: HunyuanImageRotaryPosEmbed over rows and columns."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

HUNYUAN_IMAGE = Preset(
    name="hunyuan-image",
    summary="HunyuanImage 2.1: HunyuanImageRotaryPosEmbed over rows, columns",
    head_dim=128,
    theta=256.0,
    layout=SPLIT,
    axes_dim=(64, 64),
    convention="interleaved",
    freqs_dtype="float32",
)
