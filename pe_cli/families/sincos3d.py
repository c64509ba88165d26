"""The sincos3d family: the 3-D sin-cos tables of video transformers, for a grid of T frames of
H x W patches. For each coordinate t, h and w: sin and cos of n frequencies T**(-i/n),
n = ceil(d_model/6), interleaved per frequency, in blocks [t | h | w] of 2n columns, the whole
cut to d_model (positional-encodings' PositionalEncoding3D). Rows run over the grid in
row-major order, t slowest.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ..core.errors import BadInput
from ..core.params import Param
from ..numerics.frequencies import power_law
from .base import Family, axes_facts, parse_grid, positional_encodings_axis, variant

AXES = ("t", "h", "w")


def _frequency_count(d_model: int) -> int:
    return -(-d_model // 6)


def _columns(n: int, d_model: int) -> dict:
    """{(axis, "sin" or "cos"): [column of each frequency]}, the columns past d_model left out."""
    return {(axis, fn): [c for c in range(2 * n * k + j, 2 * n * (k + 1), 2) if c < d_model]
            for k, axis in enumerate(AXES) for j, fn in enumerate(("sin", "cos"))}


def _coordinates(spec, rows):
    """(t, h, w) of table rows (numpy integer arrays)."""
    _, height, width = spec.grid
    return rows // (height * width), rows // width % height, rows % width


VARIANTS: dict = {}


@variant(VARIANTS, "positional-encodings", source="positional-encodings 6.0 PositionalEncoding3D",
         conventions=("interleaved",))
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
    table[:, :, :, channels : 2 * channels] = positional_encodings_axis(torch, height, inv_freq)[:, None, :]
    table[:, :, :, 2 * channels :] = positional_encodings_axis(torch, width, inv_freq)
    return table[..., :org_channels].reshape(frames * height * width, org_channels)


class Sincos3d(Family):
    name = "sincos3d"
    summary = "3-D sin-cos tables for video patch grids (positional-encodings)"
    conventions = {
        "interleaved": "[t | h | w], sin and cos interleaved per frequency, 2*ceil(d/6) columns "
                       "each, cut to d_model (positional-encodings PositionalEncoding3D)",
    }
    params = (Param("grid", None, "grid TxHxW: frames, rows and columns of patches, e.g. 8x14x14.", str),)
    variants = VARIANTS
    paired_columns = True

    def normalize(self, spec):
        return {} if spec.grid is None else {"grid": parse_grid(spec.grid, ("T", "H", "W"))}

    def check(self, spec):
        if spec.grid is None:
            raise BadInput("--family sincos3d needs --grid TxHxW (e.g. 8x14x14)")
        if spec.offset:
            raise BadInput("3-D tables start at frame and patch (0, 0, 0): --offset does not apply")

    def rows(self, spec):
        return math.prod(spec.grid)

    def frequencies(self, spec):
        n = _frequency_count(spec.d_model)
        return power_law([Fraction(i, n) for i in range(n)], spec.base), Decimal(1)

    def exact_rows(self, spec, start, stop, work):
        import numpy as np

        coordinates = _coordinates(spec, np.arange(start, stop))
        planes = {axis: dict(zip(("sin", "cos"), work.planes(c.tolist())))
                  for axis, c in zip(AXES, coordinates)}
        out = work.zeros(stop - start, spec.d_model)
        for (axis, fn), columns in _columns(_frequency_count(spec.d_model), spec.d_model).items():
            if columns:  # a narrow table may have no columns of h or w
                out[:, columns] = planes[axis][fn][:, : len(columns)]
        return out

    def settings(self, spec):
        return [*super().settings(spec), ("base", f"{spec.base:g}"),
                ("grid", " x ".join(map(str, spec.grid)) + " (frames, rows, columns)")]

    def row_label(self, spec):
        import numpy as np

        return lambda i: "({},{},{})".format(*(int(c) for c in _coordinates(spec, np.int64(i))))

    def facts(self, spec):
        frequencies, _ = self.frequencies(spec)
        return {"frequencies": axes_facts(frequencies, _columns(len(frequencies), spec.d_model))}

    def candidates(self, values, dtype, notes, bench):
        """The grid read off the table: a t block changes every H*W rows, an h block every W."""
        if bench.sampled:  # its fit needs every row
            return
        import numpy as np

        rows, cols = values.shape
        n = _frequency_count(cols)
        if rows < 2:
            return

        def run(column: int) -> int:  # rows before `column` first changes (its first frequency is 1)
            changed = np.nonzero(values[:, column] != values[0, column])[0]
            return int(changed[0]) if len(changed) else rows

        plane = run(0)
        width = min(run(2 * n), plane) if 2 * n < cols else 1
        if rows % plane or plane % width:
            return
        grid = (rows // plane, plane // width, width)
        spec = bench.spec(family=self.name, grid=grid, d_model=cols, dtype="float64")
        reference = bench.reference(spec)
        if np.max(np.abs(reference - values)) > 1e-2:
            return
        yield bench.candidate(f"sincos3d, grid {'x'.join(map(str, grid))}", spec, reference=reference)
        yield from bench.libraries(spec, reference)


FAMILY = Sincos3d()
