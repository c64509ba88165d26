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

from ..core.errors import BadInput
from ..core.limits import MAX_POSITION
from ..core.params import Param
from ..numerics.frequencies import context, power_law
from .base import TEXT_TOKENS, Family, Frequencies, axes_facts, variant
from .libraries import diffusers_sincos, positional_encodings_axis
from .positions import parse_grid
from .reading import digits, divisors, plausible_bases, read_positions, rows_of


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

    def candidates(self, values, dtype, notes, bench):
        """The table read as a grid of patches after its rows of zeros (a class row, or text
        rows), in each layout (`_read_grid`: from a few rows, so a long table is read from its
        sample); in diffusers' layout, patches at fractions (base_size, interpolation_scale) or
        a crop of a larger grid (SD3), read off the angles of the first row and column of
        patches. Each reading is scored on the rows the bench scores (every row, or a long
        table's sample); where none comes near, a note says what was read and how far off the
        nearest table is."""
        import numpy as np

        cols = values.shape[1]
        live = np.flatnonzero(values.any(axis=1))
        if bench.length < 2 or not len(live):
            return
        zeros = int(live[0])
        rows_of_zeros = (
            dict(cls_token=True) if zeros == 1 else dict(text_tokens=zeros) if zeros else {}
        )
        # what a note says where no table comes near: the grids of at least 2 x 2 patches read
        # (one row or column of patches is a 1-D table) and their layouts; (distance, spec) of
        # the nearest of their tables
        read, nearest, near = {}, None, False
        placed_at = {}  # (layout, base, patch positions) -> their reference and distance
        for convention in self.conventions:
            grid = _read_grid(bench, values, zeros, convention)
            if grid is None:
                continue
            if min(grid) > 1:
                read.setdefault(grid, []).append(convention)
            placements = [
                (base, placed)
                for base in _read_bases(bench, values, grid, zeros, convention)
                for placed in [
                    {},
                    *(_placements(bench, values, grid, zeros, convention) if base == 1e4 else []),
                ]
            ]
            for base, placed in placements:
                spec = bench.spec(
                    family=self.name,
                    grid=grid,
                    d_model=cols,
                    convention=convention,
                    base=base,
                    dtype="float64",
                    **rows_of_zeros,
                    **placed,
                )
                if spec is None:  # a layout of d/4 blocks, and d is not a multiple of 4
                    continue
                # another way to say the same exact positions is the same exact table, but a
                # library's float32 arithmetic may differ between them: each is its own
                key = (convention, base, _patch_positions(spec))
                if key not in placed_at:
                    reference = bench.reference(spec)
                    distance = float(np.max(np.abs(reference - bench.seen)))
                    placed_at[key] = reference, distance
                    if min(grid) > 1 and (nearest is None or distance < nearest[0]):
                        nearest = (distance, spec)
                    if distance <= _NEAR:
                        near = True
                        yield bench.candidate(
                            f"sincos2d {convention}, grid {grid[0]}x{grid[1]}",
                            spec,
                            reference=reference,
                        )
                reference, distance = placed_at[key]
                if distance <= _NEAR:
                    yield from bench.libraries(spec, reference)
        if not near:
            note = self._unread(bench, zeros, read, nearest)
            if note:
                notes.append(note)

    def _unread(self, bench, zeros, read, nearest) -> str | None:
        """What the reading found of a table no 2-D grid comes near: the grid it read and the
        nearest table's distance, or, where the rows scored have the norm of sin/cos pairs
        (sqrt(d/2)), that no grid was read; None for other tables (nothing to say of them)."""
        import numpy as np

        before = (
            " after a class row of zeros"
            if zeros == 1
            else f" after {zeros} rows of zeros"
            if zeros
            else ""
        )
        if nearest is not None:
            distance, spec = nearest
            grids = "; ".join(
                f"{h} x {w} patches in the {' and '.join(found)} layout"
                for (h, w), found in read.items()
            )
            return (
                f"read as a 2-D grid ({grids}){before}, but the nearest 2-D sin-cos table "
                f"tried, sincos2d {spec.convention} with {self.identity(spec)}, is off by up to "
                f"{distance:.3g}" + (" on the rows scored" if bench.sampled else "")
            )
        cols = bench.seen.shape[1]
        rows = bench.seen[bench.rows >= zeros]
        if cols % 2 or not np.allclose(np.sum(rows**2, axis=1), cols / 2, rtol=1e-2):
            return None
        return (
            f"its rows have the norm of sin/cos pairs, sqrt(d/2){before}, but no 2-D patch "
            "grid was read: in no layout do one coordinate's columns hold still over a run of "
            "rows while the other's repeat from one run to the next"
        )


# a reading's table is scored only where it is this close to the table's values (a grid read
# in the wrong layout, or at the wrong positions, is off by about 1)
_NEAR = 1e-2


def _read_grid(bench, values, zeros: int, convention: str) -> tuple[int, int] | None:
    """(rows, columns) of patches of a table in this layout, after `zeros` rows of zeros, or
    None where it is not a grid in it. The grid's width W is the first row of patches (a
    divisor of their count) where the row coordinate's columns at the first frequency move;
    they must hold still over the first W rows at hand, the column coordinate's columns move
    from the first patch to the second and every row of patches start where the first does."""
    import numpy as np

    cols = values.shape[1]
    layout = LAYOUTS[convention]
    if cols % 4 and not layout.any_width:
        return None
    columns = LAYOUTS[convention].columns(_frequency_count(cols))
    y = [columns["y", fn][0] for fn in ("sin", "cos")]
    x = [c for fn in ("sin", "cos") for c in columns["x", fn] if c < cols]
    if max(y) >= cols:  # a table narrower than one sin/cos pair
        return None
    patches = bench.length - zeros
    steps = [d for d in divisors(patches) if d < patches]  # where a new row of patches may start
    probe = rows_of(bench, values, [zeros + d for d in [0, *steps]])
    moved = [d for d, row in zip(steps, probe[1:]) if not np.array_equal(row[y], probe[0][y])]
    width = moved[0] if moved else patches
    held = values[zeros : zeros + width]
    if not (held[:, y] == held[0, y]).all():
        return None
    if x and len(held) > 1 and np.array_equal(held[1, x], held[0, x]):
        return None  # one patch to the next, the column coordinate stands still
    if x and not (values[zeros::width, x] == values[zeros, x]).all():
        return None  # each row of patches at hand starts where the first does
    if x and width < patches:
        repeat = probe[1 + steps.index(width)]
        if not np.array_equal(repeat[x], probe[0][x]):
            return None
    return patches // width, width


def _read_bases(bench, values, grid, zeros: int, convention: str) -> list[float]:
    """The round bases T whose frequencies T**(-i/n) the angles say, from one patch to the
    next along a row (or a column, for a grid one patch wide): each frequency's turn over
    the first's, fitted as a power law through the first (least squares of the logarithms),
    and the numbers of up to four digits within 0.1% of the fit (5% in a half dtype); 10000
    where the angles say none."""
    import numpy as np

    cols, (height, width) = values.shape[1], grid
    if width > 1:
        axis, step = "x", 1
    elif height > 1:
        axis, step = "y", width
    else:
        return [1e4]
    columns = LAYOUTS[convention].columns(_frequency_count(cols))
    count = min(
        sum(c < cols for c in columns[axis, "sin"]), sum(c < cols for c in columns[axis, "cos"])
    )
    if count < 2:
        return [1e4]
    pair = rows_of(bench, values, [zeros, zeros + step])
    angles = np.arctan2(
        pair[:, columns[axis, "sin"][:count]], pair[:, columns[axis, "cos"][:count]]
    )
    turns = np.angle(np.exp(1j * (angles[1] - angles[0])))  # each frequency's, in (-pi, pi]
    ratios = turns[1:] / turns[0]
    if not (turns[0] > 0 and (ratios > 0).all()):
        return [1e4]
    index = np.arange(1, count)
    fit = math.exp(
        -_frequency_count(cols) * float(np.sum(index * np.log(ratios)) / np.sum(index**2))
    )
    # round bases only: the fit itself, or its six digits, would be a second table a few ulps
    # from the first on some values, scored beside it. A half table's angles between two
    # patches tell the law only to a few 1e-3 (bfloat16's 8 bits): round bases within 5%
    near = 1e-3 if bench.dtype in ("float32", "float64") else 0.05
    found = [b for b in plausible_bases(fit) if digits(b) <= 4 and abs(math.log(b / fit)) < near]
    return found or [1e4]


def _placements(bench, values, grid, zeros: int, convention: str) -> list[dict]:
    """diffusers' parameters that put the patches where the table's angles say: the first
    row's and column's positions read back, as (first + k) * step on each axis; step
    base_size / G (or 1 / interpolation_scale), first the centre of pos_embed_max_size."""
    import numpy as np

    height, width = grid
    if convention != "mae" or max(grid) < 2 or values.shape[1] % 4:  # mae: four blocks of d/4
        return []
    columns = LAYOUTS[convention].columns(_frequency_count(values.shape[1]))
    frequencies = [float(w) for w in _power_law_of(values.shape[1], 10000.0)]  # diffusers' base

    def axis(c, rows):
        found = rows_of(bench, values, rows)
        angles = np.arctan2(found[:, columns[c, "sin"]], found[:, columns[c, "cos"]])
        return read_positions(angles, frequencies)

    read = [axis("y", zeros + np.arange(height) * width), axis("x", zeros + np.arange(width))]
    steps = [float(p[-1] - p[0]) / (len(p) - 1) if len(p) > 1 else None for p in read]
    if any(s is not None and s <= 0 for s in steps):
        return []
    steps = [s if s is not None else next(t for t in steps if t is not None) for s in steps]
    firsts = [p[0] / s for p, s in zip(read, steps)]
    if any(abs(f - round(f)) > 1e-3 for f in firsts):
        return []
    firsts = [round(f) for f in firsts]

    def whole(x: float) -> int | None:  # the float-read figure as the whole number it stands for
        return round(x) if abs(x - round(x)) < 1e-3 * max(1.0, abs(x)) else None

    found = []
    if firsts == [0, 0]:  # k * base_size / G / interpolation_scale on each axis
        if all(abs(s - 1) < 1e-6 for s in steps):
            return []
        # PixArt's base_size is the grid's own size (scale 1 / step) first
        for scale in dict.fromkeys([float(f"{1 / steps[0]:.6g}"), 1.0, 2.0]):
            bases = {whole(s * size * scale) for s, size in zip(steps, grid)}
            if len(bases) == 1 and None not in bases:
                found.append(dict(base_size=bases.pop(), interpolation_scale=scale))
        if abs(steps[0] - steps[1]) < 1e-6 * steps[0]:
            found.append(dict(interpolation_scale=float(f"{1 / steps[0]:.6g}")))
    elif abs(steps[0] - steps[1]) < 1e-4 * steps[0]:  # a crop of an M x M grid: base_size / M apart
        extents = {2 * f + size + extra for f, size in zip(firsts, grid) for extra in (0, 1)}
        for m in sorted(extents):
            base = whole(steps[0] * m)
            if base is not None:
                found.append(dict(pos_embed_max_size=m, base_size=base))
    found = [
        {k: v for k, v in p.items() if not (k == "interpolation_scale" and v == 1.0)} for p in found
    ]
    return list({tuple(sorted(p.items())): p for p in found}.values())


def _power_law_of(d_model: int, base: float) -> list[Decimal]:
    n = _frequency_count(d_model)
    return power_law([Fraction(i, n) for i in range(n)], base)


FAMILY = Sincos2d()
