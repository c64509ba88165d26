"""Allegro: get_3d_rotary_pos_embed_allegro, positions divided by its interpolation scales
(2.2 for frames, 2 for rows and columns)."""

from __future__ import annotations

from ..layouts import Preset, Split
from ..places import counting
from ..split import divisors


def _divided_floats(spec, axis: int, size: int):
    """Allegro's float32 positions: linspace(0, G (G - 1)/G, G) divided by its interpolation scale."""
    import torch

    divisor = divisors(spec)[axis]
    return (
        torch.linspace(0, size * (size - 1) / size, size, dtype=torch.float32) / divisor
    ).numpy()


ALLEGRO_LAYOUT = Split(
    name="allegro",
    summary="Allegro: split axes, each block doubled, positions k / 2.2 (frames), k / 2 (rows, columns)",
    axes=("t", "h", "w"),
    convention="half",
    place=counting,
    floats=_divided_floats,
    divisors=(2.2, 2.0, 2.0),
)

ALLEGRO = Preset(
    name="allegro",
    summary="Allegro: get_3d_rotary_pos_embed_allegro (interpolation scales 2.2, 2, 2)",
    head_dim=96,
    theta=10000.0,
    layout=ALLEGRO_LAYOUT,
    axes_dim=(32, 32, 32),
    convention="half",
    freqs_dtype="float32",
)
