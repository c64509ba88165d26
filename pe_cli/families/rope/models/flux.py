"""FLUX.1 (and Chroma), FLUX.2 and FLUX.3: FluxPosEmbed, Flux2PosEmbed and Flux3PosEmbed, each
token's ids (t, row, column[, l]) through get_1d_rotary_pos_embed per axis, in float64."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_on
from ..split import SPLIT


def _halved(spec, axis: int, size: int):
    """FLUX.3: rows and columns at k / 2 (its image_rope_scale 0.5); frames count."""
    numbers, _ = counting(spec, axis, size)
    return numbers, (1 if axis == 0 else 2)


SPLIT_TEXT_LAST = Split(
    name="split-text-last",
    summary="FLUX.2's split axes (t, h, w, l), text token l at (0, 0, 0, l)",
    axes=("t", "h", "w", "l"),
    place=counting,
    text=text_on(-1),
    trailing=1,
)
FLUX3_LAYOUT = Split(
    name="flux3",
    summary="FLUX.3's split axes (t, h, w, l): rows and columns at k / 2, text token l at (0, 0, 0, l)",
    axes=("t", "h", "w", "l"),
    place=_halved,
    text=text_on(-1),
    trailing=1,
)

FLUX = Preset(
    name="flux",
    summary="FLUX.1 (and Chroma): FluxPosEmbed, ids (0, row, column) after 512 text ids at 0",
    head_dim=128,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(16, 56, 56),
    convention="interleaved",
    freqs_dtype="float64",
)
FLUX2 = Preset(
    name="flux2",
    summary="FLUX.2: Flux2PosEmbed, ids (t, row, column, l); text token l at (0, 0, 0, l)",
    head_dim=128,
    theta=2000.0,
    layout=SPLIT_TEXT_LAST,
    axes_dim=(32, 32, 32, 32),
    convention="interleaved",
    freqs_dtype="float64",
)
FLUX3 = Preset(
    name="flux3",
    summary="FLUX.3: Flux3PosEmbed, as FLUX.2 at theta 10000, rows and columns at k / 2",
    head_dim=128,
    theta=10000.0,
    layout=FLUX3_LAYOUT,
    axes_dim=(32, 32, 32, 32),
    convention="interleaved",
    freqs_dtype="float64",
)
