"""CogVideoX: get_3d_rotary_pos_embed over frames, rows and columns. CogVideoX 1.5's grid_type
slice counts positions; CogVideoX 1.0 (5B; ConsisID, EasyAnimate) puts rows and columns over
the crop region of its 30 x 45 base grid."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import cropped, cropped_floats
from ..split import SPLIT

COGVIDEOX_LAYOUT = Split(
    name="cogvideox",
    summary="CogVideoX 1.0: split axes, rows and columns over the crop of the 30 x 45 base grid",
    axes=("t", "h", "w"),
    convention="interleaved",
    place=cropped((30, 45)),
    floats=cropped_floats((30, 45)),
)

COGVIDEOX_15 = Preset(
    name="cogvideox-1.5",
    summary="CogVideoX 1.5: get_3d_rotary_pos_embed, grid_type slice, over frames, rows, columns",
    head_dim=64,
    theta=10000.0,
    layout=SPLIT,
    axes_dim=(16, 24, 24),
    convention="interleaved",
    freqs_dtype="float32",
)
COGVIDEOX = Preset(
    name="cogvideox",
    summary=(
        "CogVideoX 1.0 (5B; ConsisID, EasyAnimate): get_3d_rotary_pos_embed over the crop "
        "region of its 30 x 45 base grid"
    ),
    head_dim=64,
    theta=10000.0,
    layout=COGVIDEOX_LAYOUT,
    axes_dim=(16, 24, 24),
    convention="interleaved",
    freqs_dtype="float32",
)
