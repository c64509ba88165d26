"""Ideogram 4: Ideogram4MRoPE, Qwen3-VL's interleaved M-RoPE over the whole 256-wide head dim
(mrope_section 24,20,20) at theta 5e6, in its packed sequence: text token k at (k, k, k), then
the image's patches at (65536, 65536 + row, 65536 + column), its IMAGE_POSITION_OFFSET keeping
them clear of the text's (a batch's shorter prompts are left-padded with tokens at (0, 0, 0):
--ids). diffusers computes the angles as a float32 matmul of inv_freq and the positions (an
outer product: one rounding each), then cat((freqs, freqs)), cos and sin."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..mrope import INTERLEAVED_LAW, interleaved_columns
from ..places import counting, text_on

IMAGE_POSITION_OFFSET = 65536


def _after_offset(spec, axis: int, size: int):
    """Rows and columns from IMAGE_POSITION_OFFSET on (a frame's t too: a grid of rows and
    columns leaves it at its origin, the same)."""
    numbers, q = counting(spec, axis, size)
    return numbers + IMAGE_POSITION_OFFSET, q


IDEOGRAM4_LAYOUT = Split(
    name="ideogram4",
    summary="Ideogram 4: Qwen3-VL's interleaved M-RoPE over the whole head dim (axes_dim is twice "
    "its sections), text token k at (k, k, k), image patches at (65536, 65536 + row, 65536 + "
    "column)",
    axes=("t", "h", "w"),
    columns=interleaved_columns,
    convention="half",
    place=_after_offset,
    text=text_on(0, 1, 2),
    origin=lambda spec: IMAGE_POSITION_OFFSET,
    law=INTERLEAVED_LAW,
)

IDEOGRAM4 = Preset(
    name="ideogram4",
    summary="Ideogram 4: Ideogram4MRoPE, Qwen3-VL's interleaved M-RoPE at theta 5e6 "
    "(mrope_section 24,20,20 of 128 frequencies: t takes the other 88); text token k at "
    "(k, k, k), image patches at (65536, 65536 + row, 65536 + column)",
    head_dim=256,
    theta=5000000.0,
    layout=IDEOGRAM4_LAYOUT,
    axes_dim=(176, 40, 40),
    convention="half",
    freqs_dtype="float32",
)
