"""LongCat-Image: LongCatImagePosEmbed, text token k at (0, k, k), patches at (1, 512 + row,
512 + column)."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_on


def _after_512(spec, axis: int, size: int):
    """LongCat-Image: rows and columns from 512 (its tokenizer_max_length) on, past the text's."""
    numbers, q = counting(spec, axis, size)
    return (numbers + 512 if axis else numbers), q


LONGCAT_IMAGE_LAYOUT = Split(
    name="longcat-image",
    summary="LongCat-Image: split axes, text token k at (0, k, k), patches at (1, 512 + row, "
    "512 + column)",
    axes=("t", "h", "w"),
    convention="interleaved",
    place=_after_512,
    text=text_on(1, 2),
    origin=lambda spec: 1,
)

LONGCAT_IMAGE = Preset(
    name="longcat-image",
    summary=(
        "LongCat-Image: LongCatImagePosEmbed, text token k at (0, k, k), patches at (1, 512 +"
        " row, 512 + column)"
    ),
    head_dim=128,
    theta=10000.0,
    layout=LONGCAT_IMAGE_LAYOUT,
    axes_dim=(16, 56, 56),
    convention="interleaved",
    freqs_dtype="float64",
)
