"""The positions of a table's rows: a 1-D table's (--offset onwards, or --ids), a multi-axis
table's tokens (a grid in the model's order, text tokens, or --ids), and one past the largest
(which dynamic NTK and LongRoPE read)."""

from __future__ import annotations

from functools import lru_cache

from ..positions import ids_positions
from .layouts import grid_shape, layout_of
from .split import split_tokens


@lru_cache(maxsize=4)
def line_ids(spec):
    """A 1-D table's positions where --ids lists them (int64; OmniGen's rows at 0 where its batch
    pads the prompt, then 0 .. N), else None: --offset onwards. Kept per spec: every block of
    rows asks."""
    if spec.axes or spec.ids is None:
        return None
    return ids_positions(spec.ids, 1).numerators[:, 0]


def line_positions(spec, start: int = 0, stop: int | None = None):
    """A 1-D table's positions of rows start .. stop (int64): --ids's, else --offset onwards."""
    import numpy as np

    ids = line_ids(spec)
    if ids is not None:
        return ids[start:stop]
    return np.arange(
        spec.offset + start, spec.offset + (spec.seq_len if stop is None else stop), dtype=np.int64
    )


def positions_end(spec) -> int:
    """One past a table's largest position (dynamic NTK and LongRoPE depend on it)."""
    ids = line_ids(spec)
    if ids is not None:
        return int(ids.max()) + 1
    if spec.axes and (spec.grid is not None or spec.ids is not None or layout_of(spec).split):
        return int(axes_positions(spec).max()) + 1
    return spec.last_position + 1


def axes_positions(spec, start: int = 0, stop: int | None = None):
    """The (rows, axes) positions of the table's tokens: a grid's tokens in the model's order
    (t, h, w row-major, offset by --offset; patches row-major, in spatial-merge blocks for the
    encoders that merge), or text tokens, every axis at the same position. A split layout's are
    integers over each axis's denominator (`split_tokens`)."""
    import numpy as np

    style = layout_of(spec)
    stop = spec.rows if stop is None else stop
    if style.split:
        return split_tokens(spec).numerators[start:stop]
    if spec.ids is not None:  # whole positions, each token's (Cosmos 3's M-RoPE ids)
        return ids_positions(spec.ids, len(style.axes)).numerators[start:stop]
    if spec.grid is None:
        index = np.arange(start, stop, dtype=np.int64) + spec.offset
        return np.repeat(index[:, None], len(style.axes), axis=1)
    shape, m = grid_shape(spec), spec.merge
    grids = np.meshgrid(*[np.arange(size) for size in shape], indexing="ij")
    if style.vision and m > 1:  # per frame, (block row, block column, i, j) order
        rows, cols = shape[-2:]
        frames = shape[:-2]
        order = tuple(range(len(frames))) + tuple(len(frames) + k for k in (0, 2, 1, 3))
        grids = [g.reshape(*frames, rows // m, m, cols // m, m).transpose(order) for g in grids]
    positions = np.stack([g.reshape(-1) for g in grids], axis=1) + spec.offset
    return positions[start:stop]
