"""The sincos3d family: the 3-D sin-cos tables of video transformers, for a grid of T frames of
H x W patches, rows in row-major order, t slowest. Two layouts:

- interleaved (positional-encodings' PositionalEncoding3D): for each coordinate t, h and w,
  sin and cos of n frequencies T**(-i/n), n = ceil(d_model/6), interleaved per frequency, in
  blocks [t | h | w] of 2n columns, the whole cut to d_model;
- cogvideox (diffusers' get_3d_sincos_pos_embed, CogVideoX): [t | w | h], each block [sin | cos]
  of its own frequencies 10000**(-i/n): t on d/4 columns (n = d/8), w and h on 3d/8 each
  (n = 3d/16); positions k / interpolation scale (spatial, temporal), and text rows of zeros
  before the grid (CogVideoXPatchEmbed's).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

from ...core.errors import BadInput
from ...core.limits import MAX_POSITION
from ...core.params import Param
from ...numerics.frequencies import context, power_law
from ..base import TEXT_TOKENS, Family, Frequencies, axes_facts, variant
from ..libraries import diffusers_sincos, positional_encodings_axis
from ..positions import parse_grid

AXES = ("t", "h", "w")


def _frequency_count(d_model: int) -> int:
    return -(-d_model // 6)


def _columns(n: int, d_model: int) -> dict:
    """{(axis, "sin" or "cos"): [column of each frequency]}, the columns past d_model left out."""
    return {
        (axis, fn): [c for c in range(2 * n * k + j, 2 * n * (k + 1), 2) if c < d_model]
        for k, axis in enumerate(AXES)
        for j, fn in enumerate(("sin", "cos"))
    }


def _cogvideox_counts(d_model: int) -> tuple[int, int]:
    """(t's frequencies, each spatial axis's) of the cogvideox layout."""
    return d_model // 8, 3 * d_model // 16


def _cogvideox_columns(d_model: int) -> dict:
    """{(axis, fn): [column of each frequency, None where the axis does not have it]}: t's
    frequencies first in the frequency list, then the spatial ones w and h share."""
    nt, ns = _cogvideox_counts(d_model)
    found = {
        ("t", "sin"): list(range(nt)) + [None] * ns,
        ("t", "cos"): list(range(nt, 2 * nt)) + [None] * ns,
    }
    for k, axis in enumerate(("w", "h")):
        first = 2 * nt + 2 * ns * k
        found[axis, "sin"] = [None] * nt + list(range(first, first + ns))
        found[axis, "cos"] = [None] * nt + list(range(first + ns, first + 2 * ns))
    return found


class Steps(NamedTuple):
    """The step between positions along each axis: 1 / its interpolation scale, exactly."""

    frame: Fraction  # t's: 1 / --temporal-interpolation-scale
    patch: Fraction  # h's and w's: 1 / --interpolation-scale


def _steps(spec) -> Steps:
    return Steps(
        1 / Fraction(spec.temporal_interpolation_scale), 1 / Fraction(spec.interpolation_scale)
    )


class Coordinates(NamedTuple):
    """Table rows' frame, row and column of patches (numpy integer arrays, in AXES order),
    text rows at -1."""

    t: object
    h: object
    w: object


def _coordinates(spec, rows) -> Coordinates:
    import numpy as np

    _, height, width = spec.grid
    patch = rows - spec.text_tokens
    t, h, w = patch // (height * width), patch // width % height, patch % width
    text = patch < 0
    return Coordinates(*(np.where(text, -1, c) for c in (t, h, w)))


VARIANTS: dict = {}


@variant(
    VARIANTS,
    "positional-encodings",
    source="positional-encodings 6.0 PositionalEncoding3D",
    conventions=("interleaved",),
)
def _positional_encodings(spec, device):
    # positional-encodings PositionalEncoding3D: 2*ceil(D/6) channels per axis, inv_freq by
    # 1 / 10000^(2i/ch) in float32, an einsum outer product per axis, sin/cos stacked and
    # flattened, the three blocks broadcast over the (T, H, W) grid, cut to D columns
    import torch

    frames, height, width = spec.grid
    org_channels = spec.d_model
    channels = -(-org_channels // 6) * 2
    inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
    table = torch.zeros((frames, height, width, channels * 3))
    table[:, :, :, :channels] = positional_encodings_axis(torch, frames, inv_freq)[:, None, None, :]
    table[:, :, :, channels : 2 * channels] = positional_encodings_axis(torch, height, inv_freq)[
        :, None, :
    ]
    table[:, :, :, 2 * channels :] = positional_encodings_axis(torch, width, inv_freq)
    return table[..., :org_channels].reshape(frames * height * width, org_channels)


@variant(
    VARIANTS,
    "diffusers",
    source="diffusers 0.42 get_3d_sincos_pos_embed (CogVideoXPatchEmbed, text rows of zeros first)",
    conventions=("cogvideox",),
    parameters=frozenset({"interpolation_scale", "temporal_interpolation_scale", "text_tokens"}),
)
def _diffusers(spec, device):
    # float32 positions arange(G) / scale; the spatial block [w | h] of the grid's
    # meshgrid(w, h) (rows of patches, h slower); the temporal block repeated over each frame's
    # patches; float64 values, float32 as the model adds them
    import torch

    frames, height, width = spec.grid
    d = spec.d_model
    spatial_h = torch.arange(height, dtype=torch.float32) / spec.interpolation_scale
    spatial_w = torch.arange(width, dtype=torch.float32) / spec.interpolation_scale
    h, w = torch.meshgrid(spatial_h, spatial_w, indexing="ij")
    spatial = torch.cat(
        [diffusers_sincos(torch, 3 * d // 8, w), diffusers_sincos(torch, 3 * d // 8, h)], dim=1
    )
    temporal = diffusers_sincos(
        torch, d // 4, torch.arange(frames, dtype=torch.float32) / spec.temporal_interpolation_scale
    )
    grid = torch.cat(
        [temporal.repeat_interleave(height * width, dim=0), spatial.repeat(frames, 1)], dim=1
    )
    return torch.cat([torch.zeros(spec.text_tokens, d, dtype=grid.dtype), grid]).float()


class Sincos3d(Family):
    name = "sincos3d"
    summary = "3-D sin-cos tables for video patch grids (positional-encodings, CogVideoX)"
    conventions = {
        "interleaved": "[t | h | w], sin and cos interleaved per frequency, 2*ceil(d/6) columns "
        "each, cut to d_model (positional-encodings PositionalEncoding3D)",
        "cogvideox": "[t | w | h], each [sin | cos] of its own frequencies: t on d/4 columns, w and h "
        "on 3d/8 (diffusers get_3d_sincos_pos_embed, CogVideoX)",
    }
    params = (
        Param("grid", None, "Grid TxHxW: frames, rows and columns of patches, e.g. 8x14x14.", str),
        Param(
            "interpolation_scale",
            1.0,
            "diffusers' interpolation_scale: the rows' and columns' positions divided by it "
            "(CogVideoX 2B: 1.875).",
            float,
            fixed="has no interpolation scale",
        ),
        Param(
            "temporal_interpolation_scale",
            1.0,
            "The cogvideox convention's: every frame's position divided by it.",
            float,
            fixed="has no temporal interpolation scale",
        ),
        TEXT_TOKENS,
    )
    variants = VARIANTS
    paired_columns = True

    def normalize(self, spec):
        return {} if spec.grid is None else {"grid": parse_grid(spec.grid, ("T", "H", "W"))}

    def check(self, spec):
        if spec.grid is None:
            raise BadInput("--family sincos3d needs --grid TxHxW (e.g. 8x14x14)")
        if spec.offset:
            raise BadInput("3-D tables start at frame and patch (0, 0, 0): --offset does not apply")
        if spec.convention == "interleaved":
            for flag, value, default in (
                ("--interpolation-scale", spec.interpolation_scale, 1.0),
                ("--temporal-interpolation-scale", spec.temporal_interpolation_scale, 1.0),
                ("--text-tokens", spec.text_tokens, 0),
            ):
                if value != default:
                    raise BadInput(
                        f"{flag} belongs to the cogvideox layout (diffusers), not interleaved"
                    )
            return
        if spec.d_model % 16:
            raise BadInput(
                f"the cogvideox layout splits d_model into 1/4 for t and 3/8 for each of w and h, "
                f"each [sin | cos]: it needs a multiple of 16 (got --d-model {spec.d_model})"
            )
        for flag, value in (
            ("--interpolation-scale", spec.interpolation_scale),
            ("--temporal-interpolation-scale", spec.temporal_interpolation_scale),
        ):
            if not (0 < value < math.inf):
                raise BadInput(f"{flag} must be a positive number, got {value}")
        steps = _steps(spec)
        for step, size in zip((steps.frame, steps.patch, steps.patch), spec.grid):
            if step.numerator * (size - 1) > MAX_POSITION:
                raise BadInput(
                    "an interpolation scale whose float value is a fraction too fine for exact "
                    "positions (its numerator times the grid passes 2^32)"
                )

    def rows(self, spec):
        return math.prod(spec.grid) + spec.text_tokens

    def frequencies(self, spec):
        if spec.convention == "interleaved":
            n = _frequency_count(spec.d_model)
            return Frequencies(power_law([Fraction(i, n) for i in range(n)], spec.base), Decimal(1))
        # cogvideox: position k * p / q on an axis is k * p at frequencies w / q
        nt, ns = _cogvideox_counts(spec.d_model)
        found = []
        with context():
            for n, step in zip((nt, ns), (_steps(spec).frame, _steps(spec).patch)):
                found += [
                    w / step.denominator
                    for w in power_law([Fraction(i, n) for i in range(n)], spec.base)
                ]
        return Frequencies(found, Decimal(1))

    def exact_rows(self, spec, start, stop, work):
        import numpy as np

        coordinates = _coordinates(spec, np.arange(start, stop))
        out = work.zeros(stop - start, spec.d_model)
        if spec.convention == "interleaved":
            planes = {
                axis: dict(zip(("sin", "cos"), work.planes(c.tolist())))
                for axis, c in zip(AXES, coordinates)
            }
            for (axis, fn), columns in _columns(
                _frequency_count(spec.d_model), spec.d_model
            ).items():
                if columns:  # a narrow table may have no columns of h or w
                    out[:, columns] = planes[axis][fn][:, : len(columns)]
            return out
        live = coordinates.t >= 0  # text rows stay zero
        if not live.any():
            return out
        frame, patch = _steps(spec).frame.numerator, _steps(spec).patch.numerator
        steps = {"t": frame, "h": patch, "w": patch}
        planes = {
            axis: dict(zip(("sin", "cos"), work.planes((c[live] * steps[axis]).tolist())))
            for axis, c in zip(AXES, coordinates)
        }
        rows = np.flatnonzero(live)
        for (axis, fn), columns in _cogvideox_columns(spec.d_model).items():
            frequencies = [i for i, c in enumerate(columns) if c is not None]
            out[rows[:, None], [columns[i] for i in frequencies]] = planes[axis][fn][:, frequencies]
        return out

    def settings(self, spec):
        lines = [
            *super().settings(spec),
            ("base", f"{spec.base:g}"),
            ("grid", " x ".join(map(str, spec.grid)) + " (frames, rows, columns)"),
        ]
        if spec.convention == "cogvideox":
            lines.append(
                (
                    "positions",
                    f"rows and columns k / {spec.interpolation_scale:g}, frames k / "
                    f"{spec.temporal_interpolation_scale:g}"
                    + (
                        f", after {spec.text_tokens} text rows of zeros" if spec.text_tokens else ""
                    ),
                )
            )
        return lines

    def row_label(self, spec):
        import numpy as np

        def label(i):
            t, h, w = (int(c) for c in _coordinates(spec, np.int64(i)))
            return "text" if t < 0 else f"({t},{h},{w})"

        return label

    def facts(self, spec):
        frequencies, _ = self.frequencies(spec)
        if spec.convention == "interleaved":
            columns = _columns(len(frequencies), spec.d_model)
        else:
            columns = _cogvideox_columns(spec.d_model)
            nt, _ = _cogvideox_counts(spec.d_model)
            steps = [_steps(spec).frame] * nt + [_steps(spec).patch] * (len(frequencies) - nt)
            with context():  # per unit of position, as the model has them (not per patch)
                frequencies = [w * step.denominator for w, step in zip(frequencies, steps)]
        return {"frequencies": axes_facts(frequencies, columns)}


FAMILY = Sincos3d()
