"""Where diffusers' pipelines put tokens, the pieces the models' split layouts are made of
(models/): a grid axis's positions, (spec, axis, size) -> (integer numerators, denominator);
the text tokens', (spec, count, axes) -> integer positions (count, axes); and column orders."""

from __future__ import annotations

import math
from fractions import Fraction

from ...core.errors import BadInput
from ...core.limits import MAX_POSITION
from .layouts import block_columns, grid_shape, split_laws


def counting(spec, axis: int, size: int):
    """Positions 0 .. size-1 (diffusers' arange, or a pipeline's integer ids)."""
    import numpy as np

    return np.arange(size, dtype=np.int64), 1


def written(value: float) -> Fraction:
    """A rate as the user wrote it (29.97 is 2997/100, not the binary double nearest it)."""
    return Fraction(repr(float(value)))


def exact(spec, values):
    """Fractions as (integer numerators, their common denominator), refused where either passes
    2^32, the bound of exact positions."""
    import numpy as np

    q = math.lcm(*(v.denominator for v in values)) if values else 1
    numerators = [int(v * q) for v in values]
    _bound(spec, max(map(abs, numerators), default=0), q)
    return np.array(numerators, dtype=np.int64), q


def exact_over(spec, numerators, denominator: int):
    """exact() of numerators / denominator (an int64 array over a common denominator, not
    reduced), without a Fraction per position: the least common denominator of the reduced
    values is denominator / gcd(denominator, every numerator)."""
    import numpy as np

    g = math.gcd(denominator, int(np.gcd.reduce(np.abs(numerators)))) if len(numerators) else 1
    numerators, q = numerators // g, denominator // g
    _bound(spec, int(np.abs(numerators).max(initial=0)), q)
    return numerators, q


def progression(spec, start: Fraction, step: Fraction, size: int):
    """exact() of start + k * step for k below size, without a Fraction per position."""
    import numpy as np

    q = math.lcm(start.denominator, step.denominator if size > 1 else 1)
    a, b = int(start * q), int(step * q) if size > 1 else 0
    _bound(spec, max(abs(a), abs(a + (size - 1) * b)), q)  # before int64 holds them
    return exact_over(spec, a + b * np.arange(size, dtype=np.int64), q)


def _bound(spec, largest: int, q: int) -> None:
    if q > MAX_POSITION or largest > MAX_POSITION:
        raise BadInput(
            f"--rope-axes {spec.axes}: its positions are fractions too fine or too far for exact "
            "positions (over their denominator they pass 2^32)"
        )


def rows_columns(spec) -> tuple[int, int]:
    """The grid's rows and columns, for the layouts whose positions depend on both."""
    shape = grid_shape(spec)
    if len(shape) < 2:
        raise BadInput(
            f"--rope-axes {spec.axes} places patches by rows and columns: --grid needs both (HxW)"
        )
    return shape[-2], shape[-1]


def crop_region(spec, base: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (start, stop) of rows and of columns: the grid's aspect ratio fitted into the base
    grid (rows, columns) the model was trained at, centred (diffusers' pipelines'
    get_resize_crop_region_for_grid, in Python floats as they compute it)."""
    rows, cols = rows_columns(spec)
    th, tw = base
    if rows / cols > th / tw:
        height, width = th, int(round(th / rows * cols))
    else:
        height, width = int(round(tw / cols * rows)), tw
    top, left = int(round((th - height) / 2.0)), int(round((tw - width) / 2.0))
    return (top, top + height), (left, left + width)


def cropped(base):
    """Positions of the grid's last two axes: linspace(start, stop (G - 1)/G, G) over the crop
    region, exactly (CogVideoX 1.0, HunyuanDiT); earlier axes count 0, 1, ..."""

    def place(spec, axis: int, size: int):
        lead = len(split_laws(spec)) - 2
        if axis < lead:
            return counting(spec, axis, size)
        start, stop = crop_region(spec, base)[axis - lead]
        end = Fraction(stop * (size - 1), size)
        step = (end - start) / (size - 1) if size > 1 else Fraction(0)
        return progression(spec, Fraction(start), step, size)

    return place


def cropped_floats(base):
    def floats(spec, axis: int, size: int):  # the pipeline's float32 torch.linspace
        import torch

        lead = len(split_laws(spec)) - 2
        start, stop = (0, size) if axis < lead else crop_region(spec, base)[axis - lead]
        return torch.linspace(start, stop * (size - 1) / size, size, dtype=torch.float32).numpy()

    return floats


def centred(spec, axis: int, size: int):
    """QwenImage's scale_rope: patch k of G at k - ceil(G/2) (its rows and columns; frames count)."""
    import numpy as np

    if axis == 0:
        return counting(spec, axis, size)
    return np.arange(size, dtype=np.int64) - (size - size // 2), 1


def text_at_zero(spec, count: int, axes: int):  # FLUX: txt_ids = zeros
    import numpy as np

    return np.zeros((count, axes), dtype=np.int64)


def text_on(*on: int, first: int = 0):
    """Text token k at first + k on these axes, 0 on the others (FLUX.2: (0, 0, 0, l); Lumina2:
    (k, 0, 0); Z-Image: (1 + k, 0, 0); Ovis-Image, LongCat-Image: (0, k, k))."""

    def text(spec, count: int, axes: int):
        import numpy as np

        ids = np.zeros((count, axes), dtype=np.int64)
        ids[:, list(on)] = first + np.arange(count)[:, None]
        return ids

    return text


def text_after_image(spec, count: int, axes: int):
    """QwenImage: text token k at max(H//2, W//2) + k on every axis."""
    import numpy as np

    rows, cols = rows_columns(spec)
    return np.repeat(
        (max(rows // 2, cols // 2) + np.arange(count, dtype=np.int64))[:, None], axes, axis=1
    )


def doubled_row(
    laws, convention
):  # CogView4, Cosmos: every axis's frequencies once, the row doubled
    return block_columns(laws, "single") * 2
