"""CogView4: CogView4RotaryPosEmbed, rows and columns at floor(i * 256 / G), the row doubled."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import doubled_row


def _floor_of_256(spec, axis: int, size: int):
    """CogView4: patch i of an axis of G at floor(i * 256 / G), its rope_axes_dim (256, 256)."""
    import numpy as np

    return np.arange(size, dtype=np.int64) * 256 // size, 1


COGVIEW4_LAYOUT = Split(
    name="cogview4",
    summary="CogView4: rows and columns doubled as split-doubled, patch i of G at floor(i * 256/G)",
    axes=("h", "w"),
    columns=doubled_row,
    convention="half",
    place=_floor_of_256,
)

COGVIEW4 = Preset(
    name="cogview4",
    summary="CogView4: CogView4RotaryPosEmbed",
    head_dim=128,
    theta=10000.0,
    layout=COGVIEW4_LAYOUT,
    axes_dim=(64, 64),
    convention="half",
    freqs_dtype="float32",
)
