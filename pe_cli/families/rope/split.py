"""A split layout's tokens: their exact positions (integers over each axis's denominator) and
the float32 ones diffusers holds, from a grid and text tokens or from --ids; each axis's exact
frequencies per unit of position; and pooled tables' blocks (--rope pool). The generic split
layouts are here; the models' own are in models/."""

from __future__ import annotations

import math
from decimal import Decimal
from functools import lru_cache

from ...core.errors import BadInput
from ...core.limits import MAX_POSITION
from ...numerics.frequencies import context
from ..positions import Positions, ids_positions
from .layouts import Split, grid_shape, layout_of, split_laws
from .places import counting, doubled_row, text_at_zero
from .types import rope_frequencies

SPLIT = Split(
    name="split",
    summary="diffusers' multi-axis RoPE, each axis its own power law over its axes_dim columns",
    axes=("i", "t", "h", "w"),
    place=counting,
    text=text_at_zero,
)
SPLIT_DOUBLED = Split(
    name="split-doubled",
    summary="split axes, every axis's frequencies once and the row doubled (GLM-Image, Cosmos)",
    axes=("t", "h", "w"),
    columns=doubled_row,
    convention="half",
    place=counting,
)
LAYOUTS = (SPLIT, SPLIT_DOUBLED)


def grid_tokens(spec, per_axis):
    """(tokens, axes) of a split layout's grid from each grid axis's positions: the leading
    axes the grid leaves out (and its trailing ones) at 0, tokens row-major."""
    import numpy as np

    style = layout_of(spec)
    k, shape = len(split_laws(spec)), grid_shape(spec)
    lead = k - style.trailing - len(shape)
    values = [per_axis(lead + a, size) for a, size in enumerate(shape)]
    index = [
        g.reshape(-1) for g in np.meshgrid(*[np.arange(size) for size in shape], indexing="ij")
    ]
    tokens = np.zeros((len(index[0]), k), dtype=values[0].dtype)
    if lead and style.origin is not None:
        tokens[:, :lead] = style.origin(spec)
    for a, (at, found) in enumerate(zip(index, values)):
        tokens[:, lead + a] = found[at]
    return tokens


@lru_cache(maxsize=4)
def split_tokens(spec) -> Positions:
    """A split layout's tokens: integer positions (tokens, axes) over each axis's denominator,
    and the float32 positions diffusers holds."""
    import numpy as np

    style = layout_of(spec)
    k = len(split_laws(spec))
    if spec.ids is not None:
        return ids_positions(spec.ids, k)
    if spec.grid is None:
        raise BadInput(
            f"--rope-axes {spec.axes} needs its tokens: a --grid (and --text-tokens), or --ids FILE"
        )
    denominators = [1] * k

    def exact(axis, size):
        numbers, denominators[axis] = style.place(spec, axis, size)
        return numbers

    grid = grid_tokens(spec, exact)
    tail, tail_floats = (
        style.tail.tokens(spec, denominators) if style.tail else (grid[:0], grid[:0])
    )

    def floats():  # the float32 positions diffusers holds
        found = (
            grid / np.array(denominators)
            if style.floats is None
            else grid_tokens(spec, lambda axis, size: style.floats(spec, axis, size))
        )
        return np.concatenate(
            [*[text, found][:: -1 if style.text_after else 1], tail_floats]
        ).astype(np.float32)

    text = np.zeros((0, k), dtype=np.int64)
    if spec.text_tokens:
        if style.text is None:
            raise BadInput(
                f"--text-tokens: --rope-axes {spec.axes} gives text tokens no rotary positions"
            )
        text = style.text(spec, spec.text_tokens, k)
    numerators = np.concatenate(
        [*[text * np.array(denominators), grid][:: -1 if style.text_after else 1], tail]
    )
    if len(numerators) and np.abs(numerators).max() > MAX_POSITION:
        raise BadInput(
            f"--rope-axes {spec.axes}: its positions are fractions too fine for exact positions "
            f"(over their denominators {', '.join(map(str, denominators))} they pass 2^32)"
        )
    return Positions(numerators, tuple(denominators), floats)


@lru_cache(maxsize=64)
def law_frequencies(spec) -> tuple[tuple[Decimal, ...], ...]:
    """A split layout's frequencies per unit of position: each axis's (its power law, or its
    layout's own law). Kept per spec: identification asks for them often."""
    law = layout_of(spec).law
    rope = {k: v for k, v in spec.rope if k != "partial_rotary_factor"}
    with context():  # its own digits, whoever asks first
        return tuple(
            tuple(
                law.exact(spec, axis, dim, theta)
                if law and law.exact
                else rope_frequencies(dim, theta, rope, 0)[0]
            )
            for axis, (dim, theta) in enumerate(split_laws(spec))
        )


@lru_cache(maxsize=4)
def pool_blocks(spec):
    """A pooled table's blocks (--rope pool): for each axis, (pooled tokens, its block size)
    integer positions, each pooled token's block along that axis, the grid's last position
    repeated past its end (FramePack's replicate padding, then avg_pool3d); pooled tokens
    row-major. None for a table not pooled. Its tokens must make one row-major grid."""
    import numpy as np

    sizes = dict(spec.rope).get("pool")
    if sizes is None:
        return None
    numerators = split_tokens(spec).numerators
    if len(sizes) != numerators.shape[1]:
        raise BadInput(
            f"rope parameter pool has {len(sizes)} block sizes for {numerators.shape[1]} axes"
        )
    values = row_major(numerators)
    if values is None:
        raise BadInput(
            "rope parameter pool averages over blocks of a grid: the tokens (--grid, or --ids) "
            "must make one row-major grid, with no text tokens"
        )
    pooled = [-(-len(v) // k) for v, k in zip(values, sizes)]
    index = np.meshgrid(*[np.arange(n) for n in pooled], indexing="ij")
    blocks = []
    for v, k, at in zip(values, sizes, index):
        taken = np.minimum(at.reshape(-1)[:, None] * k + np.arange(k), len(v) - 1)
        blocks.append(v[taken])
    return blocks


def distinct(axis):
    """An axis's distinct values in the order the rows first take them."""
    import numpy as np

    return axis[np.sort(np.unique(axis, return_index=True)[1])]


def row_major(tokens):
    """Each axis's distinct values in the order the rows first take them, where the rows
    (tokens, axes) are the row-major grid of those; else None."""
    import numpy as np

    values = [distinct(axis) for axis in tokens.T]
    if math.prod(len(v) for v in values) != len(tokens):  # no grid of them: build none
        return None
    grid = np.meshgrid(*values, indexing="ij")
    if not np.array_equal(np.stack([g.reshape(-1) for g in grid], axis=1), tokens):
        return None
    return values


def token_rows(spec) -> int:
    """A split layout's rows before its padding rows: its tokens, or its pooled blocks."""
    blocks = pool_blocks(spec)
    return len(split_tokens(spec).numerators if blocks is None else blocks[0])


def split_positions(spec):
    """A split layout's token positions as float64 (tokens, axes): integers over each axis's
    denominator, divided by its divisor (a pooled table's: each block's mean)."""
    import numpy as np

    numerators, denominators, _ = split_tokens(spec)
    blocks = pool_blocks(spec)
    if blocks is not None:
        numerators = np.stack([b.mean(axis=1) for b in blocks], axis=1)
    return numerators / np.array(denominators) / np.array(divisors(spec))


def divisors(spec) -> tuple[float, ...]:
    """What each axis's positions are divided by: the layout's (Allegro's interpolation
    scales), or --rope axes_scale (Kandinsky 5's scale_factor), or 1."""
    scales = layout_of(spec).divisors or dict(spec.rope).get("axes_scale")
    return tuple(scales) if scales else (1.0,) * len(split_laws(spec))
