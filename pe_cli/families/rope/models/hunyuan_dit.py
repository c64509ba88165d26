"""HunyuanDiT: get_2d_rotary_pos_embed over the crop region of its 32 x 32 base grid."""

from __future__ import annotations

from ..layouts import Preset, Split, block_columns
from ..places import cropped, cropped_floats

HUNYUAN_DIT_LAYOUT = Split(
    name="hunyuan-dit",
    summary="HunyuanDiT: the column block first, rows and columns over the crop of a 32 x 32 base grid",
    axes=("h", "w"),
    columns=lambda laws, convention: block_columns(laws, convention, (1, 0)),
    convention="interleaved",
    place=cropped((32, 32)),
    floats=cropped_floats((32, 32)),
)

HUNYUAN_DIT = Preset(
    name="hunyuan-dit",
    summary="HunyuanDiT: get_2d_rotary_pos_embed over the crop region of its 32 x 32 base grid",
    head_dim=88,
    theta=10000.0,
    layout=HUNYUAN_DIT_LAYOUT,
    axes_dim=(44, 44),
    convention="interleaved",
    freqs_dtype="float32",
)
