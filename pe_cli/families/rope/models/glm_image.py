"""GLM-Image: GlmImageRotaryPosEmbed over rows and columns, the row doubled."""

from __future__ import annotations

from ..layouts import Preset
from ..split import SPLIT_DOUBLED

GLM_IMAGE = Preset(
    name="glm-image",
    summary=(
        "GLM-Image: GlmImageRotaryPosEmbed over rows, columns (head dim 128; the class "
        "default is 40)"
    ),
    head_dim=128,
    theta=10000.0,
    layout=SPLIT_DOUBLED,
    axes_dim=(64, 64),
    convention="half",
    freqs_dtype="float32",
)
