"""Kandinsky 5.0 (Kandinsky5RoPE3D, Kandinsky5RoPE1D) and Kandinsky 6 (Kandinsky6RoPE3D,
Kandinsky6RoPE1D, Kandinsky 5's arithmetic at other sizes): each its table's --part rotation,
frequencies as get_freqs computes them, positions over frames, rows and columns divided by the
pipeline's scale_factor (--rope axes_scale), which diffusers applies to the float32 angles."""

from __future__ import annotations

import math
from decimal import Decimal

from ....core.errors import BadInput
from ..keys import Key
from ..layouts import Law, Preset, Split, split_laws
from ..places import counting
from ..types import rope_frequencies


def _kandinsky_law(torch, spec, axis: int, dim: int, theta: float):
    # Kandinsky 5's get_freqs: exp(-ln(theta) * arange(n) / n) in float32, n = dim / 2 (the
    # power law theta**(-2i/dim), computed another way); Kandinsky 6's audio: times freqs_scaling
    n = dim // 2
    freqs = torch.exp(-math.log(theta) * torch.arange(n, dtype=torch.float32) / n)
    scale = dict(spec.rope).get("freqs_scaling")
    return freqs if scale is None else freqs * scale


def _check(spec):
    rope = dict(spec.rope)
    if "axes_scale" in rope and len(rope["axes_scale"]) != len(split_laws(spec)):
        raise BadInput(
            f"rope parameter axes_scale has {len(rope['axes_scale'])} values for "
            f"{len(split_laws(spec))} axes"
        )


def _positive_scales(scales) -> tuple[float, ...]:
    if not all(0 < t for t in scales):
        raise BadInput("rope parameter axes_scale: each axis's scale must be > 0")
    return scales


FREQS_SCALING = Key(
    "freqs_scaling",
    float,
    "Kandinsky 6's audio RoPE: its frequencies times this (audio_freqs_scaling).",
    ("kandinsky5", "kandinsky5-text"),
    refusal="rope parameter freqs_scaling is Kandinsky 6's audio_freqs_scaling: it needs "
    "--rope-axes kandinsky5-text (--preset kandinsky6-text) or kandinsky5",
)
AXES_SCALE = Key(
    "axes_scale",
    list,
    "Kandinsky 5: each axis's positions divided by this (its scale_factor: 1,2,2 at 480p).",
    ("kandinsky5",),
    refusal="rope parameter axes_scale is Kandinsky 5's scale_factor: it needs --rope-axes "
    "kandinsky5 (--preset kandinsky5)",
    parse=_positive_scales,
)


def _kandinsky_exact(spec, axis: int, dim: int, theta: float) -> list[Decimal]:
    # the power law theta**(-2i/dim) exactly; Kandinsky 6's audio: times freqs_scaling
    rope = {k: v for k, v in spec.rope if k != "partial_rotary_factor"}
    scale = Decimal(repr(rope.get("freqs_scaling", 1.0)))
    return [w * scale for w in rope_frequencies(dim, theta, rope, 0)[0]]


LAW = Law(torch=_kandinsky_law, exact=_kandinsky_exact, scaled_by="freqs_scaling")
KANDINSKY5_LAYOUT = Split(
    name="kandinsky5",
    summary="Kandinsky 5: split axes over frames, rows, columns, positions divided by --rope "
    "axes_scale (its scale_factor); diffusers divides the float32 angles",
    axes=("t", "h", "w"),
    convention="interleaved",
    place=counting,
    law=LAW,
    angle_scale=True,
    keys=(FREQS_SCALING, AXES_SCALE),
    check=_check,
)
KANDINSKY5_TEXT_LAYOUT = Split(
    name="kandinsky5-text",
    summary="Kandinsky 5's text tokens: one axis of positions 0, 1, ...",
    axes=("i",),
    convention="interleaved",
    place=counting,
    law=LAW,
    keys=(FREQS_SCALING,),
)

KANDINSKY6 = Preset(
    name="kandinsky6",
    summary=(
        "Kandinsky 6: Kandinsky6RoPE3D (Kandinsky 5's arithmetic, axes 32,48,48); --part "
        "rotation; --rope axes_scale=1,2,2 as its pipeline"
    ),
    head_dim=128,
    theta=10000.0,
    layout=KANDINSKY5_LAYOUT,
    axes_dim=(32, 48, 48),
    convention="interleaved",
    freqs_dtype="float32",
    tries=({}, {"axes_scale": "1,2,2"}, {"axes_scale": "1,3.16,3.16"}),
)
KANDINSKY6_TEXT = Preset(
    name="kandinsky6-text",
    summary="Kandinsky 6's text tokens: Kandinsky6RoPE1D(128); --part rotation",
    head_dim=128,
    theta=10000.0,
    layout=KANDINSKY5_TEXT_LAYOUT,
    axes_dim=(128,),
    convention="interleaved",
    freqs_dtype="float32",
)
KANDINSKY5 = Preset(
    name="kandinsky5",
    summary=(
        "Kandinsky 5.0: Kandinsky5RoPE3D over frames, rows, columns (axes_dims 16,24,24), "
        "float32; its table is --part rotation; 480p videos with --rope axes_scale=1,2,2, "
        "others 1,3.16,3.16 (images: none)"
    ),
    head_dim=64,
    theta=10000.0,
    layout=KANDINSKY5_LAYOUT,
    axes_dim=(16, 24, 24),
    convention="interleaved",
    freqs_dtype="float32",
    tries=({}, {"axes_scale": "1,2,2"}, {"axes_scale": "1,3.16,3.16"}),
)
KANDINSKY5_TEXT = Preset(
    name="kandinsky5-text",
    summary="Kandinsky 5.0's text tokens: Kandinsky5RoPE1D, float32; --part rotation",
    head_dim=64,
    theta=10000.0,
    layout=KANDINSKY5_TEXT_LAYOUT,
    axes_dim=(64,),
    convention="interleaved",
    freqs_dtype="float32",
)
