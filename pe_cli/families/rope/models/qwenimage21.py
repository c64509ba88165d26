"""Qwen-Image 2.1: QwenImage21Rope, complex64 tables of float32 angles (QwenImage's rope_params
at theta 10000, axes 16, 56, 56) over its one joint sequence, text first: text token k at
(k, k, k), every axis advancing together, then the target image's patches at (N, row, column)
for N text tokens, the frame axis frozen where the text left it and rows and columns centred
on zero (k - ceil(G/2)), as the text-to-image pipeline lays them out. (An edit's condition
images are blocks of their own inside the text, each at the position its text reached, which
then advances by max(H, W): --ids.)"""

from __future__ import annotations

from ....core.errors import BadInput
from ..layouts import Preset, Split, grid_shape
from ..places import centred, text_on


def _after_text(spec, axis: int, size: int):
    """The frame at N, the text's length; rows and columns centred."""
    numbers, q = centred(spec, axis, size)
    return (numbers + spec.text_tokens if axis == 0 else numbers), q


def _check(spec):
    if spec.ids is None and spec.grid is not None:
        shape = grid_shape(spec)
        if len(shape) == 3 and shape[0] != 1:
            raise BadInput(
                f"--grid {spec.grid}: Qwen-Image 2.1's image is one frame, all of its patches "
                "at the text's end on t (--grid HxW; several images are --ids)"
            )


QWENIMAGE21_LAYOUT = Split(
    name="qwenimage21",
    summary="Qwen-Image 2.1: split axes, complex, text token k at (k, k, k), then the image's "
    "patches at (N, row, column) for N text tokens, rows and columns centred (k - ceil(G/2))",
    axes=("t", "h", "w"),
    convention="single",
    place=_after_text,
    text=text_on(0, 1, 2),
    origin=lambda spec: spec.text_tokens,
    check=_check,
)

QWENIMAGE21 = Preset(
    name="qwenimage21",
    summary="Qwen-Image 2.1: QwenImage21Rope, complex64, text token k at (k, k, k), then the "
    "image at (N, row, column), rows and columns centred",
    head_dim=128,
    theta=10000.0,
    layout=QWENIMAGE21_LAYOUT,
    axes_dim=(16, 56, 56),
    convention="single",
    freqs_dtype="float32",
)
