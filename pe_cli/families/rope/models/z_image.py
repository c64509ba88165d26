"""Z-Image: RopeEmbedder, complex64 of float32 angles, captions first (padded to a multiple of
32)."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_on


def _after_text(spec, axis: int, size: int):
    """Z-Image: frames after the caption (N + 1 + f for N caption tokens), rows and columns count."""
    numbers, q = counting(spec, axis, size)
    return (numbers + spec.text_tokens + 1 if axis == 0 else numbers), q


Z_IMAGE_LAYOUT = Split(
    name="z-image",
    summary="Z-Image: split axes, complex, caption token k at (1 + k, 0, 0), patches at "
    "(captions + 1 + frame, row, column); angles rounded to float32 before torch.polar",
    axes=("t", "h", "w"),
    convention="single",
    place=_after_text,
    text=text_on(0, first=1),
    origin=lambda spec: spec.text_tokens + 1,
    angles32=True,
)

Z_IMAGE = Preset(
    name="z-image",
    summary=(
        "Z-Image: RopeEmbedder, complex64 of float32 angles, captions first (padded to a "
        "multiple of 32)"
    ),
    head_dim=128,
    theta=256.0,
    layout=Z_IMAGE_LAYOUT,
    axes_dim=(32, 48, 48),
    convention="single",
    freqs_dtype="float64",
)
