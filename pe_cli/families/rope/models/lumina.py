"""Lumina-Next (get_2d_rotary_pos_embed_lumina) and Lumina-Image 2.0 (Lumina2RotaryPosEmbed):
complex tables, rows and columns alternating per frequency in Lumina-Next, captions first in
Lumina2."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting, text_on


def _alternating(laws, convention):  # Lumina-Next: h and w alternate per frequency, one column each
    n = laws[0][0] // 2
    return [(axis, axis * n + j) for j in range(n) for axis in (0, 1)]


LUMINA_NEXT_LAYOUT = Split(
    name="lumina-next",
    summary="Lumina-Next: complex, rows and columns alternating per frequency",
    axes=("h", "w"),
    columns=_alternating,
    convention="single",
    place=counting,
)
LUMINA2_LAYOUT = Split(
    name="lumina2",
    summary="Lumina2: split axes, caption token k at (k, 0, 0), image patches at (captions, row, column)",
    axes=("t", "h", "w"),
    convention="single",
    place=counting,
    text=text_on(0),
    origin=lambda spec: spec.text_tokens,
)

LUMINA_NEXT = Preset(
    name="lumina-next",
    summary=(
        "Lumina-Next: get_2d_rotary_pos_embed_lumina, complex64 (linear and NTK factors with "
        "--rope)"
    ),
    head_dim=72,
    theta=10000.0,
    layout=LUMINA_NEXT_LAYOUT,
    axes_dim=(36, 36),
    convention="single",
    freqs_dtype="float32",
)
LUMINA2 = Preset(
    name="lumina2",
    summary="Lumina-Image 2.0: Lumina2RotaryPosEmbed, complex128, captions first",
    head_dim=96,
    theta=10000.0,
    layout=LUMINA2_LAYOUT,
    axes_dim=(32, 32, 32),
    convention="single",
    freqs_dtype="float64",
)
