"""Pixel-style rotary frequencies (rotary-embedding-torch's freqs_for="pixel", used for images
and other data on a fixed grid): each axis's frequencies linspace(1, max_freq / 2, n) * pi, its
positions linspace(-1, 1, size) across the grid, so that a frequency turns by the same angle
over the image whatever its size. Each axis takes its block of columns, each frequency in two
adjacent columns (the library's repeat "(n r)", r = 2), blocks in axis order, tokens
row-major (get_axial_freqs)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ....numerics.frequencies import PI, context
from ...base import variant
from ..diffusers import VARIANTS as DIFFUSERS
from ..keys import Key
from ..layouts import Law, Preset, Split
from ..places import progression

MAX_FREQ = Key(
    "max_freq",
    float,
    "Pixel-style RoPE (--rope-axes pixel): frequencies linspace(1, max_freq / 2) * pi "
    "(default 10).",
    ("pixel",),
    positive=True,
    refusal="rope parameter max_freq is pixel-style RoPE's: it needs --rope-axes {layouts}",
)


def _top(spec) -> Fraction:
    """max_freq / 2, as the decimal written (10 unless given)."""
    return Fraction(repr(float(dict(spec.rope).get("max_freq", 10.0)))) / 2


def _pixel_law(spec, axis: int, dim: int, theta: float) -> list[Decimal]:
    """pi * (1 + (max_freq / 2 - 1) * i / (n - 1)), i < n = dim // 2 (one frequency, pi, where
    n is 1: linspace's single point is its start)."""
    n, top = dim // 2, _top(spec)
    with context():
        step = (Decimal(top.numerator) / Decimal(top.denominator) - 1) / (n - 1) if n > 1 else 0
        return [PI * (1 + step * i) for i in range(n)]


def _pixel_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # rotary-embedding-torch's float32 frequencies: linspace(1, max_freq / 2, dim // 2) * pi
    top = dict(spec.rope).get("max_freq", 10.0) / 2
    return torch.linspace(1.0, top, dim // 2) * math.pi


def _pixel_place(spec, axis: int, size: int):
    """Positions -1 + 2k / (size - 1) for k < size, exactly (one token: -1, linspace's start)."""
    return progression(spec, Fraction(-1), Fraction(2, max(size - 1, 1)), size)


def _pixel_floats(spec, axis: int, size: int):  # the library's float32 torch.linspace(-1, 1, size)
    import torch

    return torch.linspace(-1.0, 1.0, size).numpy()


LIBRARY = "rotary-embedding-torch"
PIXEL_LAW = Law(torch=_pixel_torch_law, exact=_pixel_law, library=LIBRARY)
VARIANTS: dict = {}


def _refusal(spec) -> str | None:
    if spec.axes != PIXEL_LAYOUT.name or spec.part == "inv_freq":
        return f"--variant {LIBRARY} builds the cos, sin or angle table of --rope-axes pixel"
    return None


# the library's float32 arithmetic: its frequencies and linspace positions, their outer product
# (einsum), then cos and sin, each axis's block in turn: the multi-axis torch path diffusers'
# variant runs, with this layout's law and positions
variant(
    VARIANTS,
    LIBRARY,
    source="rotary-embedding-torch 0.9.1 RotaryEmbedding(freqs_for='pixel').get_axial_freqs "
    "(its angles; cos and sin of them, as apply_rotary_emb takes them)",
    conventions=("interleaved",),
    refuse=_refusal,
)(lambda spec, device: DIFFUSERS["diffusers"].compute(spec, device))

PIXEL_LAYOUT = Split(
    name="pixel",
    summary="pixel-style RoPE (rotary-embedding-torch's freqs_for='pixel'): each axis's "
    "frequencies linspace(1, max_freq/2, n) * pi at positions linspace(-1, 1, size), each "
    "axis's block of adjacent column pairs in turn",
    axes=("t", "h", "w"),
    convention="interleaved",
    place=_pixel_place,
    floats=_pixel_floats,
    law=PIXEL_LAW,
    keys=(MAX_FREQ,),
)

# how identification reads a pixel table (not a --preset: the library has no fixed head dim);
# each axis as wide as the others, as get_axial_freqs gives one module's dim to every axis
PIXEL = Preset(
    name="pixel",
    summary="rotary-embedding-torch's pixel frequencies over a grid (get_axial_freqs)",
    head_dim=64,
    theta=10000.0,
    layout=PIXEL_LAYOUT,
    axes_dim=(32, 32),
    convention="interleaved",
    freqs_dtype="float32",
    tries=({}, {"max_freq": 256.0}),
)
