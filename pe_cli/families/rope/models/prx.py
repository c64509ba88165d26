"""PRX: PRXEmbedND over the image's (row, column), float64 angles."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT

PRX = Preset(
    name="prx",
    summary=(
        "PRX: PRXEmbedND over the image's (row, column), float64 angles; its table is --part "
        "rotation"
    ),
    head_dim=64,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(32, 32),
    convention="interleaved",
    freqs_dtype="float64",
)
