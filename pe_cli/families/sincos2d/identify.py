"""Reading a 2-D sin-cos table back: a grid of patches after its rows of zeros (a class row,
or text rows) in each layout, its base from the angles between patches, and in diffusers'
layout the fractions (base_size, interpolation_scale) or the crop of a larger grid (SD3) the
patches sit at."""

from __future__ import annotations

import math

from ...core.names import few
from ..proposals import Note, Proposal
from ..reading import (
    comes_near,
    digits,
    divisors,
    grid_starts,
    plausible_bases,
    read_positions,
)
from .family import FAMILY, LAYOUTS, _frequency_count, _patch_positions, _power_law_of


def read(view):
    """The table read as a grid of patches after its rows of zeros (a class row, or text
    rows), in each layout (`_read_grid`: from a few rows, so a long table is read from its
    sample); in diffusers' layout, patches at fractions (base_size, interpolation_scale) or
    a crop of a larger grid (SD3), read off the angles of the first row and column of
    patches. Each reading is scored on the rows the scorer scores (every row, or a long
    table's sample); where none comes near, a note says what was read and how far off the
    nearest table is."""

    values = view.values
    cols = values.shape[1]
    starts, whole = grid_starts(values, cols)
    if view.length < 2 or not starts:
        return
    # what a note says where no table comes near: the grids of at least 2 x 2 patches read
    # (one row or column of patches is a 1-D table) and their layouts; (distance, spec) of
    # the nearest of their tables
    read, nearest, near = {}, None, False
    placed_at = {}  # (layout, base, patch positions) -> whether their table comes near
    for zeros in starts:
        zero = dict(cls_token=True) if zeros == 1 else dict(text_tokens=zeros) if zeros else {}
        for convention in FAMILY.conventions:
            grid = _read_grid(view, values, zeros, convention, whole)
            if grid is None:
                continue
            if min(grid) > 1:
                read.setdefault(grid, []).append(convention)
            for base in _read_bases(view, values, grid, zeros, convention, whole):
                placements = [{}]  # diffusers' placements, at its base
                if base == 1e4:
                    placements += _placements(view, values, grid, zeros, convention, whole)
                for placed in placements:
                    spec = view.spec(
                        family=FAMILY.name,
                        grid=grid,
                        d_model=cols,
                        convention=convention,
                        base=base,
                        **zero,
                        **placed,
                    )
                    if spec is None:  # a layout of d/4 blocks, and d is not a multiple of 4
                        continue
                    # another way to say the same exact positions is the same exact table, but
                    # a library's float32 arithmetic may differ between them: each is its own
                    key = (convention, base, _patch_positions(spec))
                    first = key not in placed_at
                    if first:
                        placed_at[key] = comes_near(view, spec, _NEAR)
                        if min(grid) > 1 and not placed_at[key]:
                            distance = view.distance(spec)
                            if nearest is None or distance < nearest[0]:
                                nearest = (distance, spec)
                    if placed_at[key]:  # its exact table once, each spec's libraries
                        near = True
                        name = f"sincos2d {convention}, grid {grid[0]}x{grid[1]}"
                        yield Proposal(name, spec, itself=first)
    if not near:
        note = _unread(view, starts[0], read, nearest)
        if note:
            yield Note(note)


def _unread(view, zeros, read, nearest) -> str | None:
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
            f"tried, sincos2d {spec.convention} with {FAMILY.identity(spec)}, is off by up to "
            f"{distance:.3g}" + (" on the rows scored" if view.sampled else "")
        )
    cols = view.seen.shape[1]
    rows = view.seen[view.rows >= zeros]
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


def _read_grid(view, values, zeros: int, convention: str, whole) -> tuple[int, int] | None:
    """(rows, columns) of patches of a table in this layout, after `zeros` rows of zeros, or
    None where it is not a grid in it. The grid's width W is the first row of patches (a
    divisor of their count) where the row coordinate's columns at the first frequency move;
    they must hold still over the first W rows at hand, the column coordinate's columns move
    from the first patch to the second and every row of patches start where the first does.
    Rows that fail `whole` (overwritten) are passed over: the first whole one of the first row
    of patches stands for it."""
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
    patches = view.length - zeros
    kept = np.flatnonzero(whole(values[zeros:]))
    if not len(kept):
        return None
    first = zeros + int(kept[0])  # the first whole row (a patch of the first row of them)
    steps = [d for d in divisors(patches) if d < patches]  # where a new row of patches may start
    probe = view.at([zeros + d for d in [0, *steps]])
    start = values[first]
    moved = [
        d
        for d, row, fine in zip(steps, probe[1:], whole(probe[1:]))
        if fine and not np.array_equal(row[y], start[y])
    ]
    width = moved[0] if moved else patches
    held = values[zeros : zeros + width]
    held = held[whole(held)]
    if first - zeros >= width or not (held[:, y] == start[y]).all():
        return None
    if x and len(held) > 1 and np.array_equal(held[1, x], held[0, x]):
        return None  # one patch to the next, the column coordinate stands still
    starts = values[first::width]
    if x and not (starts[whole(starts)][:, x] == start[x]).all():
        return None  # each row of patches at hand starts where the first does
    if x and first + width < view.length:
        repeat = view.at([first + width])
        if whole(repeat)[0] and not np.array_equal(repeat[0, x], start[x]):
            return None
    return patches // width, width


def _read_bases(view, values, grid, zeros: int, convention: str, whole) -> list[float]:
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
    # two neighbouring patches, the first two of the first 8 that are whole (not overwritten)
    along = width if axis == "x" else height
    neighbours = (
        view.at([zeros + j * step, zeros + (j + 1) * step]) for j in range(min(along, 8) - 1)
    )
    pair = next((rows for rows in neighbours if whole(rows).all()), None)
    if pair is None:
        return [1e4]
    angles = np.arctan2(
        pair[:, columns[axis, "sin"][:count]], pair[:, columns[axis, "cos"][:count]]
    )
    turns = np.angle(np.exp(1j * (angles[1] - angles[0])))  # each frequency's, in (-pi, pi]
    # each frequency's turn over the first whole pair's (the first frequency's, 1, but where a
    # column of it is broken), fitted as T^(-(i - first) / n)
    index = np.flatnonzero(
        _whole_pairs(pair, columns[axis, "sin"][:count], columns[axis, "cos"][:count], cols)
    )
    if len(index) < 2:
        return [1e4]
    first, index = index[0], index[1:]
    ratios = turns[index] / turns[first]
    if not (turns[first] > 0 and (ratios > 0).all()):
        return [1e4]
    index = index - first
    fit = math.exp(
        -_frequency_count(cols) * float(np.sum(index * np.log(ratios)) / np.sum(index**2))
    )
    # round bases only: the fit itself, or its six digits, would be a second table a few ulps
    # from the first on some values, scored beside it. A half table's angles between two
    # patches tell the law only to a few 1e-3 (bfloat16's 8 bits): round bases within 5%
    near = 1e-3 if view.dtype in ("float32", "float64") else 0.05
    found = [b for b in plausible_bases(fit) if digits(b) <= 4 and abs(math.log(b / fit)) < near]
    return found or [1e4]


def _whole_pairs(rows, sin: list[int], cos: list[int], cols: int):
    """Which frequencies' (sin, cos) pairs a reading uses (a mask): those of length 1 in these
    rows, where the rest are few (core.names.few: columns overwritten, left out); all where
    more are off (the reading then says what it says)."""
    import numpy as np

    whole = np.isclose(np.hypot(rows[:, sin], rows[:, cos]), 1, rtol=1e-2).all(axis=0)
    return whole if few(int(np.count_nonzero(~whole)), cols) else np.ones_like(whole)


def _placements(view, values, grid, zeros: int, convention: str, whole) -> list[dict]:
    """diffusers' parameters that put the patches where the table's angles say: the first
    row's and column's positions read back (of their whole rows: not those overwritten), as
    (first + k) * step on each axis; step base_size / G (or 1 / interpolation_scale), first
    the centre of pos_embed_max_size."""
    import numpy as np

    height, width = grid
    if convention != "mae" or max(grid) < 2 or values.shape[1] % 4:  # mae: four blocks of d/4
        return []
    columns = LAYOUTS[convention].columns(_frequency_count(values.shape[1]))
    frequencies = [float(w) for w in _power_law_of(values.shape[1], 10000.0)]  # diffusers' base

    def axis(c, rows):  # the patches k of whole rows, and their positions (from whole pairs)
        found = view.at(rows)
        k = np.flatnonzero(whole(found))
        sin, cos = found[k][:, columns[c, "sin"]], found[k][:, columns[c, "cos"]]
        used = _whole_pairs(found[k], columns[c, "sin"], columns[c, "cos"], values.shape[1])
        at = [w for w, u in zip(frequencies, used) if u]
        return k, read_positions(np.arctan2(sin, cos)[:, used], at)

    read = [axis("y", zeros + np.arange(height) * width), axis("x", zeros + np.arange(width))]
    if any(not len(k) for k, _ in read):
        return []
    steps = [float(p[-1] - p[0]) / (k[-1] - k[0]) if len(k) > 1 else None for k, p in read]
    if any(s is not None and s <= 0 for s in steps):
        return []
    steps = [s if s is not None else next(t for t in steps if t is not None) for s in steps]
    firsts = [p[0] / s - k[0] for (k, p), s in zip(read, steps)]
    if any(abs(f - round(f)) > 1e-3 for f in firsts):
        return []
    firsts = [round(f) for f in firsts]

    def integral(x: float) -> int | None:  # the float-read figure as the whole number it is
        return round(x) if abs(x - round(x)) < 1e-3 * max(1.0, abs(x)) else None

    found = []
    if firsts == [0, 0]:  # k * base_size / G / interpolation_scale on each axis
        if all(abs(s - 1) < 1e-6 for s in steps):
            return []
        # PixArt's base_size is the grid's own size (scale 1 / step) first
        for scale in dict.fromkeys([float(f"{1 / steps[0]:.6g}"), 1.0, 2.0]):
            bases = {integral(s * size * scale) for s, size in zip(steps, grid)}
            if len(bases) == 1 and None not in bases:
                found.append(dict(base_size=bases.pop(), interpolation_scale=scale))
        if abs(steps[0] - steps[1]) < 1e-6 * steps[0]:
            found.append(dict(interpolation_scale=float(f"{1 / steps[0]:.6g}")))
    elif abs(steps[0] - steps[1]) < 1e-4 * steps[0]:  # a crop of an M x M grid: base_size / M apart
        extents = {2 * f + size + extra for f, size in zip(firsts, grid) for extra in (0, 1)}
        for m in sorted(extents):
            base = integral(steps[0] * m)
            if base is not None:
                found.append(dict(pos_embed_max_size=m, base_size=base))
    found = [
        {k: v for k, v in p.items() if not (k == "interpolation_scale" and v == 1.0)} for p in found
    ]
    return list({tuple(sorted(p.items())): p for p in found}.values())
