"""Reading a 3-D sin-cos table back: its grid from where each axis's block first moves
(looked up at the divisors of the row count, so a long table is read from a few of its rows),
in the interleaved layout and in CogVideoX's with its text rows and interpolation scales."""

from __future__ import annotations

from itertools import product

from ...core.dtypes import FORMATS
from ...core.names import few
from ..proposals import Proposal
from ..reading import comes_near, divisors, grid_starts, round_numbers
from .family import AXES, FAMILY, _cogvideox_counts, _columns, _frequency_count

_NEAR = 1e-2  # a reading's table is proposed only this close to the table's values


def read(view):
    """The grid read off the table: a t block changes every H*W rows, an h block every W
    (each looked up at the divisors of the row count, so a long table is read from a few
    of its rows and scored on its sample)."""
    import numpy as np

    yield from _cogvideox(view)

    values = view.values
    rows, cols = view.length, values.shape[1]
    n = _frequency_count(cols)
    if rows < 2:
        return
    steps = [d for d in divisors(rows) if d < rows]
    probe = view.at(steps)
    columns = _columns(n, cols)
    # the first row of sin/cos pairs (row 0 where it is not overwritten) stands for position 0
    start = next((row for row in values[:2] if _pairs(row, columns, cols)), values[0])

    def moves(axis: str) -> int:
        """The first divisor of the rows where the axis's block moves: more than a few of its
        columns (a broken one does not say), in a row of sin/cos pairs (not one overwritten)."""
        block = columns[axis, "sin"] + columns[axis, "cos"]
        for d, row in zip(steps, probe):
            moved = int(np.count_nonzero(row[block] != start[block]))
            if moved and not few(moved, cols) and _pairs(row, columns, cols):
                return d
        return rows

    plane = moves("t")
    width = min(moves("h"), plane) if 2 * n < cols else 1
    if rows % plane or plane % width:
        return
    grid = (rows // plane, plane // width, width)
    spec = view.spec(family=FAMILY.name, grid=grid, d_model=cols)
    if comes_near(view, spec, _NEAR):
        yield Proposal(f"sincos3d, grid {'x'.join(map(str, grid))}", spec)


def _pairs(row, columns: dict, cols: int) -> bool:
    """Whether a row's (sin, cos) pairs have length 1, but for a few broken columns."""
    import numpy as np

    pairs = [p for axis in AXES for p in zip(columns[axis, "sin"], columns[axis, "cos"])]
    sin, cos = [s for s, _ in pairs], [c for _, c in pairs]
    off = int(np.count_nonzero(~np.isclose(np.hypot(row[sin], row[cos]), 1, rtol=1e-2)))
    return not off or few(off, cols)


def _cogvideox(view):
    """CogVideoX's layout: text rows of zeros, then the grid (each reading of where it starts:
    past a text row overwritten too)."""
    values = view.values
    if values.shape[1] % 16 or values.shape[1] < 16:
        return
    starts, whole = grid_starts(values, values.shape[1])
    for text in starts:
        yield from _cogvideox_after(view, text, whole)


def _cogvideox_after(view, text: int, whole):
    """CogVideoX's grid after `text` rows of zeros: W where the h block first changes, H x W
    where the t block does (looked up in the rows of a long table; rows that fail `whole`,
    overwritten, passed over), and each interpolation scale from the angle of the first
    frequency at position 1."""
    import numpy as np

    values = view.values
    cols = values.shape[1]
    nt, ns = _cogvideox_counts(cols)
    count = view.length - text  # the grid's rows

    def moving(block, within) -> list[int]:  # the rows where more than a few of block's move
        moved = np.count_nonzero(within[:, block] != within[0, block], axis=1)
        moved[~whole(within)] = 0
        return [int(r) for r in np.flatnonzero(moved) if not few(int(moved[r]), cols)]

    def changes(block, within) -> int | None:  # the first grid row where the block moves
        return next(iter(moving(block, within)), None)

    grid_rows = values[text:]
    if len(grid_rows) < 2:
        return
    t, h = slice(0, 2 * nt), slice(2 * nt + 2 * ns, 2 * nt + 4 * ns)
    width = changes(h, grid_rows) or count  # the h block: every W rows
    plane = changes(t, grid_rows)  # the t block: every H x W rows
    if plane is None and count > len(grid_rows):  # beyond the rows at hand: look there
        for height in range(1, count // width):  # (all of count: one frame, no row to look at)
            if count % (height * width) == 0:
                at = view.at([text, text + height * width])
                if moving(t, at):
                    plane = height * width
                    break
    plane = plane or count
    width = min(width, plane)  # one row of patches: its h block never moves
    if count % plane or plane % width:
        return
    frames, height = count // plane, plane // width
    # position 1 at frequency 1 turns by 1 / scale; the last position, k turns of that,
    # tells the scale k times better: along the row of patches (down the column where it
    # is one patch wide: the h block's), and over the frames
    step, along, columns = (1, width, 2 * nt) if width > 1 else (width, height, 2 * nt + 2 * ns)
    at = [text + min(step, count - 1), text + step * max(along - 1, 0)]
    at += [text + min(plane, count - 1), text + count - plane]
    probe = view.at(at)
    # a row overwritten: another of the same coordinate on the axis read (the next row of
    # patches, or frame, for a patch scale; the next patch of the frame for the frame scale)
    strides = [width if height > 1 and width > 1 else plane] * 2 + [1 if plane > 1 else 0] * 2
    for k in np.flatnonzero(~whole(probe)):
        for row in range(at[k] + strides[k], text + count, strides[k] or count)[:3]:
            again = view.at([row])
            if whole(again)[0]:
                probe[k] = again[0]
                break

    def scales(first, last, k: int, sin_col: int, cos_col: int, count: int) -> list[float]:
        # the shortest decimals within what the last angle says (to the dtype's epsilon)
        if k < 1:
            return [1.0]
        # frequency 1's pair, or where a broken column is in it the next one's (10000^(-1/n))
        i = next(
            (
                i
                for i in (0, 1)
                if np.allclose(np.hypot(probe[:, sin_col + i], probe[:, cos_col + i]), 1, rtol=1e-2)
            ),
            0,
        )
        w, sin_col, cos_col = 10000.0 ** (-i / count), sin_col + i, cos_col + i
        angle = float(np.arctan2(first[sin_col], first[cos_col]))
        if not angle > 0:
            return [1.0]
        at_k = float(np.arctan2(last[sin_col], last[cos_col]))
        at_k += 2 * np.pi * round((k * angle - at_k) / (2 * np.pi))
        read = k * w / at_k
        near = round_numbers(read, range(1, 8), 4 * FORMATS[view.dtype].epsilon / at_k, around=1)
        return near[:SCALES_TRIED] or [float(f"{read:.6g}")]

    spatial = scales(probe[0], probe[1], along - 1, columns, columns + ns, ns)
    temporal = scales(probe[2], probe[3], frames - 1, 0, nt, nt)
    grid = f"{frames}x{height}x{width}"
    for space, time in product(spatial, temporal):
        spec = view.spec(
            family=FAMILY.name,
            convention="cogvideox",
            grid=grid,
            d_model=cols,
            text_tokens=text,
            interpolation_scale=space,
            temporal_interpolation_scale=time,
        )
        # not this layout, or scale, where it is further
        if comes_near(view, spec, _NEAR):
            yield Proposal(f"sincos3d cogvideox, grid {grid}", spec)


SCALES_TRIED = 8  # interpolation scales tried per axis, the shortest decimals near the reading
