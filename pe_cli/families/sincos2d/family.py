"""The sincos2d family: sin-cos tables for a grid of image patches (MAE, timm,
positional-encodings): sin and cos of the row (y) and the column (x) coordinate, n
frequencies T**(-i/n) each, n = ceil(D/4), in several column layouts; rows run over the grid
row by row, after MAE's optional zero class-token row.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
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


def _blocks(*order: tuple[str, str]) -> Callable:
    """A layout of four column blocks of n columns, each one (coordinate, function)."""
    return lambda n: {key: list(range(k * n, (k + 1) * n)) for k, key in enumerate(order)}


def _pairs(n: int) -> dict:
    # [y | x], each with its sin and cos interleaved per frequency
    return {
        (c, fn): list(range(2 * n * k + j, 2 * n * (k + 1), 2))
        for k, c in enumerate("yx")
        for j, fn in enumerate(("sin", "cos"))
    }


@dataclass(frozen=True)
class Layout:
    summary: str
    columns: Callable[[int], dict]  # n -> {(coordinate, "sin" or "cos"): column of each frequency}
    any_width: bool = False  # columns past d_model are cut off (else d_model must be 4n)


LAYOUTS = {
    "mae": Layout(
        "[sin x | cos x | sin y | cos y] (MAE get_2d_sincos_pos_embed)",
        _blocks(("x", "sin"), ("x", "cos"), ("y", "sin"), ("y", "cos")),
    ),
    "timm": Layout(
        "[sin y | sin x | cos y | cos x] (timm build_sincos2d_pos_embed)",
        _blocks(("y", "sin"), ("x", "sin"), ("y", "cos"), ("x", "cos")),
    ),
    "timm-interleaved": Layout(
        "[sin y | cos y | sin x | cos x] (timm, interleave_sin_cos=True)",
        _blocks(("y", "sin"), ("y", "cos"), ("x", "sin"), ("x", "cos")),
    ),
    "pairs": Layout(
        "[y | x], sin and cos interleaved per frequency, cut to d_model "
        "(positional-encodings PositionalEncoding2D)",
        _pairs,
        any_width=True,
    ),
}


def _frequency_count(d_model: int) -> int:
    return -(-d_model // 4)


def _power_law(spec) -> list[Decimal]:
    return _power_law_of(spec.d_model, spec.base)


class PatchPositions(NamedTuple):
    """Patch k of each axis (rows, columns) sits at (first + k) * step / denominator, integers:
    k, or diffusers' k * base_size / G / interpolation_scale, exactly; with SD3's
    pos_embed_max_size M, G is M and the grid is the centre of it (first (M - size) // 2)."""

    steps: tuple[int, int]  # (rows', columns')
    denominator: int  # one for both axes
    firsts: tuple[int, int]  # (rows', columns')


def _patch_positions(spec) -> PatchPositions:
    scale = Fraction(spec.interpolation_scale)
    extent = [spec.pos_embed_max_size or size for size in spec.grid]
    exact = [
        Fraction(spec.base_size if spec.base_size is not None else m, m) / scale for m in extent
    ]
    denominator = math.lcm(*(f.denominator for f in exact))
    firsts = tuple((m - size) // 2 for m, size in zip(extent, spec.grid))
    return PatchPositions(tuple(int(f * denominator) for f in exact), denominator, firsts)


def _zero_rows(spec) -> int:
    """Rows of zeros before the patches: MAE's class token, or CogView3's text tokens."""
    return int(spec.cls_token) + spec.text_tokens


# 2-D sin-cos tables as the libraries compute them

VARIANTS: dict = {}


@variant(
    VARIANTS,
    "mae",
    source="MAE util/pos_embed.py get_2d_sincos_pos_embed (transformers 5.23 ViTMAE)",
    conventions=("mae",),
)
def _mae(spec, device):
    # MAE util/pos_embed.py get_2d_sincos_pos_embed: float64 numpy, the w coordinate first
    # (meshgrid(grid_w, grid_h)); omega = 1 / 10000**(i / (D/4)); sin and cos of each coordinate
    # concatenated; a zero row for the class token; torch .float() when the model loads it
    import numpy as np
    import torch

    height, width = spec.grid
    d = spec.d_model
    grid = np.stack(
        np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
    )

    def one_axis(positions):
        omega = np.arange(d // 4, dtype=np.float64)
        omega /= d / 4.0
        omega = 1.0 / spec.base**omega
        angles = np.einsum("m,d->md", positions.reshape(-1), omega)
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)

    table = np.concatenate([one_axis(grid[0]), one_axis(grid[1])], axis=1)
    if spec.cls_token:
        table = np.concatenate([np.zeros([1, d]), table], axis=0)
    return torch.from_numpy(table).float()


def _no_class_row(spec) -> str | None:
    return "timm's table has no class-token row" if spec.cls_token else None


@variant(
    VARIANTS,
    "timm",
    source="timm 1.0.31 layers/pos_embed_sincos.py build_sincos2d_pos_embed",
    conventions=("timm", "timm-interleaved"),
    parameters=frozenset({"base"}),
    refuse=_no_class_row,
)
def _timm(spec, device):
    # timm layers/pos_embed_sincos.py build_sincos2d_pos_embed: float32 bands
    # 1 / T**(i / (D/4)), an (H*W, 2) grid of (row, column), sin and cos stacked either
    # [sin | cos] per table (dim 1) or per coordinate (dim 2, interleave_sin_cos)
    import torch

    pos_dim = spec.d_model // 4
    bands = 1.0 / (
        spec.base ** (torch.arange(0, pos_dim, 1, dtype=torch.int64).to(torch.float32) / pos_dim)
    )
    axes = [torch.arange(s, dtype=torch.int64).to(torch.float32) for s in spec.grid]
    grid = torch.stack(torch.meshgrid(axes, indexing="ij")).flatten(1).transpose(0, 1)
    angles = grid.unsqueeze(-1) * bands.unsqueeze(0)
    stack_dim = 2 if spec.convention == "timm-interleaved" else 1
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=stack_dim).flatten(1)


def _no_class_row_pe(spec) -> str | None:
    return "positional-encodings' table has no class-token row" if spec.cls_token else None


@variant(
    VARIANTS,
    "positional-encodings",
    source="positional-encodings 6.0 PositionalEncoding2D",
    conventions=("pairs",),
    refuse=_no_class_row_pe,
)
def _positional_encodings(spec, device):
    # positional-encodings PositionalEncoding2D: 2*ceil(D/4) channels per axis, inv_freq by
    # 1 / 10000^(2i/ch) in float32, an einsum outer product per axis, sin/cos stacked and
    # flattened, [first axis | second axis] broadcast over the grid, cut to D columns
    import torch

    rows, columns = spec.grid
    org_channels = spec.d_model
    channels = -(-org_channels // 4) * 2
    inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
    table = torch.zeros((rows, columns, channels * 2))
    table[:, :, :channels] = positional_encodings_axis(torch, rows, inv_freq)[:, None, :]
    table[:, :, channels : 2 * channels] = positional_encodings_axis(torch, columns, inv_freq)
    return table[..., :org_channels].reshape(rows * columns, org_channels)


def _diffusers_refusal(spec) -> str | None:
    return "diffusers' 2-D table needs an even --d-model" if spec.d_model % 2 else None


@variant(
    VARIANTS,
    "diffusers",
    source="diffusers 0.42 get_2d_sincos_pos_embed (PatchEmbed: SD3's cropped_pos_embed, PixArt, DiT; "
    "CogView3PlusPatchEmbed's text rows)",
    conventions=("mae",),
    parameters=frozenset({"base_size", "interpolation_scale", "pos_embed_max_size", "text_tokens"}),
    refuse=_diffusers_refusal,
)
def _diffusers(spec, device):
    # diffusers get_2d_sincos_pos_embed: float32 positions arange(G) / (G / base_size) /
    # interpolation_scale per axis, the column (w) coordinate first; omega = 1 / 10000**(i / (D/4))
    # in float64; sin and cos of the float64 outer product, [w | h]; the modules keep it in float32.
    # Each value is one position's at one frequency, elementwise: each axis's positions are
    # computed once here (diffusers computes them at every patch) and laid over the grid, the
    # same numbers in a table's memory rather than several
    import torch

    rows, columns = spec.grid

    def axis(size):  # SD3: the max grid's positions, its centre crop taken
        extent = spec.pos_embed_max_size or size
        positions = torch.arange(extent, dtype=torch.float32)
        if spec.base_size is not None:
            positions = positions / (extent / spec.base_size)
        first = (extent - size) // 2
        return (positions / spec.interpolation_scale)[first : first + size]

    # a float32 table is the modules' cast of each value (one rounding, as exact's), made per
    # axis; any other dtype is rounded by the engine from the float64 values
    dtype = torch.float32 if spec.dtype == "float32" else torch.float64
    half = spec.d_model // 2
    table = torch.zeros(_zero_rows(spec) + rows * columns, spec.d_model, dtype=dtype)
    grid = table[_zero_rows(spec) :].view(rows, columns, spec.d_model)
    grid[:, :, :half] = diffusers_sincos(torch, half, axis(columns)).to(dtype)[None, :, :]
    grid[:, :, half:] = diffusers_sincos(torch, half, axis(rows)).to(dtype)[:, None, :]
    return table


class Sincos2d(Family):
    name = "sincos2d"
    summary = "2-D sin-cos tables for image patch grids (MAE, timm, positional-encodings)"
    conventions = {name: layout.summary for name, layout in LAYOUTS.items()}
    params = (
        Param("grid", None, "Patch grid ROWSxCOLUMNS, e.g. 14x14.", str),
        Param("cls_token", False, "A zero first row for the class token (MAE).", bool),
        Param(
            "base_size",
            None,
            "diffusers' base_size: patch k of an axis of G patches sits at position "
            "k * base_size / G (SD3, PixArt).",
            int,
            minimum=1,
            fixed="has patch positions 0, 1, ...",
        ),
        Param(
            "interpolation_scale",
            1.0,
            "diffusers' interpolation_scale: every position divided by it (PixArt-alpha: 2).",
            float,
            fixed="has patch positions 0, 1, ...",
        ),
        Param(
            "pos_embed_max_size",
            None,
            "SD3's pos_embed_max_size M: the grid is the centre of an M x M "
            "grid (positions as that grid's: base_size / M apart).",
            int,
            minimum=1,
            fixed="has no cropped grid",
        ),
        TEXT_TOKENS,
    )
    variants = VARIANTS
    paired_columns = True

    def normalize(self, spec):
        return {} if spec.grid is None else {"grid": parse_grid(spec.grid, ("ROWS", "COLUMNS"))}

    def check(self, spec):
        if spec.grid is None:
            raise BadInput("--family sincos2d needs --grid ROWSxCOLUMNS (e.g. 14x14)")
        if spec.d_model % 4 and not LAYOUTS[spec.convention].any_width:
            raise BadInput(
                f"2-D sin-cos tables need --d-model divisible by 4 (got {spec.d_model}): "
                "sin and cos of two coordinates, d/4 frequencies each"
            )
        if spec.offset:
            raise BadInput("2-D tables start at patch (0, 0): --offset does not apply")
        if not (0 < spec.interpolation_scale < math.inf):
            raise BadInput(
                f"--interpolation-scale must be a positive number, got {spec.interpolation_scale}"
            )
        if spec.cls_token and spec.text_tokens:
            raise BadInput("--cls-token is one row of zeros, --text-tokens several: give one")
        if spec.pos_embed_max_size is not None and spec.pos_embed_max_size < max(spec.grid):
            raise BadInput(
                f"--grid {spec.grid[0]}x{spec.grid[1]} is larger than --pos-embed-max-size "
                f"{spec.pos_embed_max_size}: it is a crop of that grid"
            )
        where = _patch_positions(spec)
        if (
            max(
                step * (first + size - 1)
                for step, first, size in zip(where.steps, where.firsts, spec.grid)
            )
            > MAX_POSITION
        ):
            scale = Fraction(spec.interpolation_scale)
            raise BadInput(
                f"--interpolation-scale {spec.interpolation_scale:g} is {scale.numerator}/{scale.denominator} "
                "as a float: it puts the patches at fractions too fine for exact positions (their common "
                f"denominator times the grid passes 2^32)"
            )

    def rows(self, spec):
        return spec.grid[0] * spec.grid[1] + _zero_rows(spec)

    def frequencies(self, spec):
        # w_i = T**(-i/n), i < n = ceil(D/4), in MAE, timm and positional-encodings alike; a
        # patch at position k * step / denominator is k * step at frequencies w_i / denominator
        frequencies = _power_law(spec)
        denominator = _patch_positions(spec).denominator
        if denominator != 1:
            with context():
                frequencies = [w / denominator for w in frequencies]
        return Frequencies(frequencies, Decimal(1))

    def _columns(self, spec) -> dict:
        """{(coordinate, function): [column of each frequency]}, the columns past d_model left out."""
        found = LAYOUTS[spec.convention].columns(_frequency_count(spec.d_model))
        return {key: [c for c in columns if c < spec.d_model] for key, columns in found.items()}

    def exact_rows(self, spec, start, stop, work):
        import numpy as np

        width = spec.grid[1]
        patch = np.arange(start, stop) - _zero_rows(spec)
        live = patch >= 0
        where = _patch_positions(spec)
        (step_y, step_x), (first_y, first_x) = where.steps, where.firsts
        coordinate = {
            "y": ((first_y + patch[live] // width) * step_y).tolist(),
            "x": ((first_x + patch[live] % width) * step_x).tolist(),
        }
        planes = {
            c: dict(zip(("sin", "cos"), work.planes(positions)))
            for c, positions in coordinate.items()
        }
        table = work.zeros(int(live.sum()), spec.d_model)
        for (c, fn), columns in self._columns(spec).items():
            if columns:  # a narrow table may have no columns of x
                table[:, columns] = planes[c][fn][:, : len(columns)]
        if live.all():
            return table
        out = work.zeros(stop - start, spec.d_model)
        if live.any():  # (a block of the rows of zeros alone has no patch)
            out[int(np.argmax(live)) :] = table
        return out

    def settings(self, spec):
        rows, cols = spec.grid
        zeros = (
            " and a class row"
            if spec.cls_token
            else f", after {spec.text_tokens} text rows of zeros"
            if spec.text_tokens
            else ""
        )
        lines = [
            *super().settings(spec),
            ("base", f"{spec.base:g}"),
            ("grid", f"{rows} x {cols} patches{zeros}"),
        ]
        if spec.base_size is not None or spec.interpolation_scale != 1.0 or spec.pos_embed_max_size:
            firsts = _patch_positions(spec).firsts

            def rule(size: int, first: int) -> str:
                extent = spec.pos_embed_max_size or size
                return (
                    ("k" if not first else f"({first} + k)")
                    + (f" * {spec.base_size}/{extent}" if spec.base_size is not None else "")
                    + (
                        f" / {spec.interpolation_scale:g}"
                        if spec.interpolation_scale != 1.0
                        else ""
                    )
                )

            lines.append(
                (
                    "positions",
                    f"patch k of a row at {rule(cols, firsts[1])}, "
                    f"of a column at {rule(rows, firsts[0])}",
                )
            )
        return lines

    def row_label(self, spec):
        def patch(i: int) -> str:
            k = i - _zero_rows(spec)
            return (
                ("cls" if spec.cls_token else "text")
                if k < 0
                else f"({k // spec.grid[1]},{k % spec.grid[1]})"
            )

        return patch

    def facts(self, spec):  # per unit of position (the kernel's are per step of a fractional grid)
        return {"frequencies": axes_facts(_power_law(spec), self._columns(spec))}


def _power_law_of(d_model: int, base: float) -> list[Decimal]:
    n = _frequency_count(d_model)
    return power_law([Fraction(i, n) for i in range(n)], base)


FAMILY = Sincos2d()
