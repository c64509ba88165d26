"""Krea 2: Krea2RotaryPosEmbed, FLUX's layout at theta 1000."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

KREA2 = Preset(
    name="krea2",
    summary="Krea 2: Krea2RotaryPosEmbed, FLUX's layout at theta 1000",
    head_dim=128,
    theta=1000.0,
    layout=SPLIT,
    axes_dim=(32, 48, 48),
    convention="interleaved",
    freqs_dtype="float64",
)
