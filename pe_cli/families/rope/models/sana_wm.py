"""Sana-WM: SanaWMRotaryPosEmbed, complex64 over frames, rows and columns."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

SANA_WM = Preset(
    name="sana-wm",
    summary="Sana-WM: SanaWMRotaryPosEmbed, complex64 over frames, rows, columns",
    head_dim=112,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(40, 36, 36),
    convention="single",
    freqs_dtype="float32",
)
