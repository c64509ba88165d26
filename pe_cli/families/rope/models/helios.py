"""Helios: HeliosRotaryPosEmbed, Wan's axes in float32."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

HELIOS = Preset(
    name="helios",
    summary="Helios: HeliosRotaryPosEmbed, Wan's axes in float32 (its table is [cos | sin] of these)",
    head_dim=128,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(44, 42, 42),
    convention="interleaved",
    freqs_dtype="float32",
)
