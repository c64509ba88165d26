"""Cosmos 1.0 7B: CosmosRotaryPosEmbed over frames, rows and columns, the row doubled; each
axis's theta 10000 * rope_scale ** (dim / (dim - 2)), rope_scale (2, 1, 1) of
Cosmos-1.0-Diffusion-7B (temporal positions of images; a video's are scaled by 24/fps)."""

from __future__ import annotations

from fractions import Fraction

from ..keys import KEYS
from ..layouts import Preset, Split
from ..places import counting, doubled_row, progression, written


def _cosmos_place(spec, axis: int, size: int):
    """Cosmos: a video's frame k at k * 24 / fps (its base_fps), exactly; rows, columns and an
    image's frames count."""
    fps = dict(spec.rope).get("fps")
    if axis or fps is None:
        return counting(spec, axis, size)
    return progression(spec, Fraction(0), 24 / written(fps), size)


def _cosmos_floats(spec, axis: int, size: int):  # its float32 seq / fps * base_fps
    import torch

    fps = dict(spec.rope).get("fps")
    positions = torch.arange(size, dtype=torch.float32)
    return (positions if axis or fps is None else positions / fps * 24).numpy()


COSMOS_LAYOUT = Split(
    name="cosmos",
    summary="Cosmos: as split-doubled, a video's frames at k * 24/fps (--rope fps=F)",
    axes=("t", "h", "w"),
    columns=doubled_row,
    convention="half",
    place=_cosmos_place,
    floats=_cosmos_floats,
    keys=(KEYS["fps"],),
)
AXES_THETA = (10000.0 * 2.0 ** (44 / 42), 10000.0, 10000.0)

COSMOS = Preset(
    name="cosmos",
    summary=(
        "Cosmos 1.0 7B: CosmosRotaryPosEmbed, rope_scale (2, 1, 1); a video's frame rate with"
        " --rope fps=F"
    ),
    head_dim=128,
    theta=10000.0,
    layout=COSMOS_LAYOUT,
    axes_dim=(44, 42, 42),
    convention="half",
    freqs_dtype="float32",
    axes_theta=AXES_THETA,
    tries=({}, {"fps": 30}, {"fps": 16}, {"fps": 24}, {"fps": 25}, {"fps": 60}),
)
