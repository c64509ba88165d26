"""The exact table: its shape, its frequencies (Decimal) and attention factor, its rows from
the exact kernel, and where the C kernel serves it."""

from __future__ import annotations

import math
from decimal import Decimal

from ...numerics.frequencies import context
from ..base import Frequencies
from ..positions import ids_positions
from .layouts import axes_plan, grid_shape, layout_of
from .pairing import BOTH, lay_out, part_of
from .split import divisors, law_frequencies, pool_blocks, split_tokens, token_rows
from .tokens import axes_positions, line_positions, positions_end
from .types import frequency_count, rope_frequencies


def vector(spec) -> bool:
    """The part inv_freq: the frequencies, one row."""
    return spec.part == "inv_freq"


def scale(spec) -> bool:
    """The part query-scale: one value a position."""
    return spec.part == "query-scale"


def rows(spec) -> int:
    if vector(spec):
        return 1
    if spec.axes and layout_of(spec).split:
        return token_rows(spec) + spec.padding_rows
    if spec.ids is not None:
        return len(
            ids_positions(spec.ids, len(layout_of(spec).axes) if spec.axes else 1).numerators
        )
    if spec.axes and spec.grid is not None:
        return math.prod(grid_shape(spec))
    return spec.seq_len


def cols(spec) -> int:
    if scale(spec):
        return 1
    if spec.axes:
        laws, columns = axes_plan(spec)
        if vector(spec):
            return sum((dim + 1) // 2 for dim, _ in laws)
        return len(columns) * (2 if spec.part == "rotation" else 1)
    n = frequency_count(spec.d_model, dict(spec.rope))
    if vector(spec):
        return n
    return n * (1 if spec.convention == "single" else 2) * (2 if spec.part in BOTH else 1)


def frequencies(spec) -> Frequencies:
    """The exact frequencies, each in its layout's columns, and the attention factor; a split
    layout's per step of its integer positions (the kernel's)."""
    rope = dict(spec.rope)
    if spec.axes:  # the style's power laws over their own dims, M-RoPE's partial factor included
        rope.pop("partial_rotary_factor", None)
        laws, _ = axes_plan(spec)
        if not layout_of(spec).split:
            return Frequencies(*rope_frequencies(laws[0][0], spec.base, rope, positions_end(spec)))
        frequencies = []
        with (
            context()
        ):  # an axis at positions k / (q * divisor): integers k at frequencies w / (q * divisor)
            for law, q, divisor in zip(
                law_frequencies(spec), split_tokens(spec).denominators, divisors(spec)
            ):
                frequencies += [w / q / Decimal(repr(divisor)) for w in law]
        return Frequencies(frequencies, Decimal(1))
    return Frequencies(*rope_frequencies(spec.d_model, spec.base, rope, positions_end(spec)))


def exact_rows(spec, start, stop, work):
    if vector(spec):
        from ...numerics.sinusoids import round_decimals

        return round_decimals(work.sinusoids.frequencies, spec.dtype)
    if scale(spec):
        from ...numerics.sinusoids import round_decimals
        from .query_scale import exact_values

        values = exact_values(dict(spec.rope), line_positions(spec, start, stop).tolist())
        return round_decimals(values, spec.dtype).T
    if spec.padding_rows and stop > token_rows(spec):  # zeros after the tokens (Lumina2's captions)
        table = work.zeros(stop - start, cols(spec))
        tokens = max(token_rows(spec) - start, 0)
        if tokens:
            table[:tokens] = exact_rows(spec, start, start + tokens, work)
        return table
    if spec.axes:
        import numpy as np

        _, columns = axes_plan(spec)
        blocks = pool_blocks(spec) if layout_of(spec).split else None
        if blocks is not None:  # each axis's sinusoids averaged over its blocks
            found = [
                work.means(b[start:stop], dict(spec.rope).get("pool_unit", False)) for b in blocks
            ]
        else:
            positions = axes_positions(spec, start, stop)
            made = work.angles if spec.part == "angle" else work.planes
            found = [made(positions[:, a].tolist()) for a in range(positions.shape[1])]
        axis, frequency = (np.array(c) for c in zip(*columns))

        def plane(k):  # sin (k = 0) or cos of each column's axis and frequency
            return work.columns([f[k] for f in found], axis, frequency)

        return part_of(
            spec.part,
            lambda: plane(1),
            lambda: plane(0),
            lambda: work.columns(found, axis, frequency),
        )
    positions = line_positions(spec, start, stop).tolist()
    if spec.part == "angle":
        return lay_out(work.angles(positions), spec.convention)
    sin, cos = work.planes(positions)
    return part_of(
        spec.part,
        lambda: lay_out(cos, spec.convention),
        lambda: lay_out(sin, spec.convention),
        None,
    )


def fast_columns(spec):
    if (
        vector(spec)
        or scale(spec)
        or spec.axes
        or spec.ids is not None
        or spec.part in (*BOTH, "angle")
    ):
        return None
    import numpy as np

    from ...numerics.fast import Columns

    n = frequency_count(
        spec.d_model, dict(spec.rope)
    )  # the kernel fills [sin | cos]; laid out after
    return Columns(
        2 * n,
        np.arange(n, dtype=np.int32),
        np.arange(n, 2 * n, dtype=np.int32),
        np.empty(0, dtype=np.int32),
    )


def fast_finish(spec, block, start, stop):
    n = block.shape[1] // 2
    plane = block[:, n:] if spec.part == "cos" else block[:, :n]
    return lay_out(plane, spec.convention)
