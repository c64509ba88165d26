"""Wan 2.1 and 2.2 (SkyReels-V2, Wan VACE and Animate): WanRotaryPosEmbed over frames, rows and
columns; and Wan's axes as the complex128 table AnyFlow and Wan-Animate 2 keep."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

WAN = Preset(
    name="wan",
    summary=(
        "Wan 2.1 and 2.2 (SkyReels-V2, Wan VACE and Animate): WanRotaryPosEmbed over frames, "
        "rows, columns"
    ),
    head_dim=128,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(44, 42, 42),
    convention="interleaved",
    freqs_dtype="float64",
)
WAN_COMPLEX = Preset(
    name="wan-complex",
    summary="AnyFlow, Wan-Animate 2: Wan's axes as a complex128 table (its float32 rounding)",
    head_dim=128,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(44, 42, 42),
    convention="single",
    freqs_dtype="float64",
)
