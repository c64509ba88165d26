"""Reading a split layout's tokens back from its table: each token's position on each axis from
its columns, then the grid and text tokens that put the tokens there, and the tokens a model
puts after its grid."""

from __future__ import annotations

from ....core.errors import BadInput
from ..layouts import axes_plan, grid_shape, layout_of, split_laws
from ..split import law_frequencies, split_positions
from .common import CLOSE, near


def read_tail(spec, length: int, read_at) -> list[tuple[dict, int]]:
    """The rope settings (and how many tokens each takes) that the tokens a table may end with
    after its grid were made with: its last rows at (t, 0, 0), cut into runs where t falls back,
    as the layout's model reads them (Tail.settings)."""
    import numpy as np

    rows = list(range(max(0, length - TAIL), length))
    found = np.asarray(read_at(rows))
    if not len(found):
        return []
    at_zero = np.all(np.abs(found[:, 1:]) < CLOSE, axis=1)[::-1]
    count = int(np.argmin(at_zero)) if not at_zero.all() else len(at_zero)
    times = found[len(found) - count :, 0]
    cuts = np.flatnonzero(np.diff(times) < -CLOSE) + 1
    runs = [len(run) for run in np.split(times, cuts)] if count else []
    step = float(times[1] - times[0]) if runs and runs[0] > 1 else None
    return layout_of(spec).tail.settings(spec, runs, step if step and step > CLOSE else None)


def may_be_angles(values) -> bool:
    """A table that may be of angles: some value past 1 (or of cos or sin times a factor)."""
    import numpy as np

    return bool(np.nanmax(np.abs(values), initial=0) > 1 + 1e-6)


def rotation_sin(values):
    """A rotation table's sin part (interleaved), where its columns are [cos, -sin, sin, cos]
    per pair; else None."""
    import numpy as np

    if values.shape[1] % 4 or not (
        np.array_equal(values[:, 0::4], values[:, 3::4])
        and np.array_equal(values[:, 1::4], -values[:, 2::4])
    ):
        return None
    sin = np.empty((values.shape[0], values.shape[1] // 2))
    sin[:, 0::2], sin[:, 1::2] = -values[:, 1::4], values[:, 2::4]
    return sin


def cos_sin_cos(values):
    """A [cos | sin] table's cos half (vLLM's cos_sin_cache: one column per frequency each),
    where position 0's row is the attention factor then zeros and every (cos, sin) pair has its
    length; else None."""
    import numpy as np

    cols = values.shape[1]
    if cols % 2 or len(values) < 2:
        return None
    cos, sin = values[:, : cols // 2], values[:, cols // 2 :]
    factor = cos[0, 0]
    if not (factor > 0 and np.all(cos[0] == factor) and not np.any(sin[0])):
        return None
    if not np.allclose(cos**2 + sin**2, factor**2, rtol=1e-2):
        return None
    return cos


def read_axes(values, spec, part: str):
    """Each token's position on each axis of a split layout's (cos, sin or angle) table, read
    from its columns from the lowest frequency up (axis_positions): (rows, axes), to about
    1e-4."""
    import numpy as np

    laws, columns = axes_plan(spec)
    if len(columns) != values.shape[1]:  # a layout of another width: no positions (NaN)
        return np.full((values.shape[0], len(laws)), np.nan)
    frequencies = [float(w) for law in law_frequencies(spec) for w in law]
    return positions_by_axis(values, columns, frequencies, part, _lone_token(spec, len(laws)))


def positions_by_axis(values, columns, frequencies, part: str, origins):
    """Each row's position on each axis (one per origin), read from the first column of each
    of the axis's frequencies that turn (axis_positions): (rows, axes). columns: each column's
    (axis, frequency index); frequencies: by that index."""
    import numpy as np

    found = np.zeros((len(values), len(origins)))
    for axis, origin in enumerate(origins):
        first = {}
        for k, (a, j) in enumerate(columns):
            if a == axis and frequencies[j] > 0:
                first.setdefault(j, k)
        order = sorted(first, key=lambda j: (frequencies[j], j))
        if order:  # an axis that never turns says nothing of its positions
            seen = values[:, [first[j] for j in order]]
            found[:, axis] = axis_positions(seen, [frequencies[j] for j in order], part, origin)
    return found


def _lone_token(spec, count: int):
    """Where the layout puts a grid of one token, on each axis (0 but where a model places its
    grid away from the text: Ideogram 4's 65536)."""
    import numpy as np

    try:
        point = "x".join(["1"] * len(grid_shape(spec))) if spec.grid else None
        return split_positions(spec.replace(grid=point, ids=None, text_tokens=0))[0]
    except BadInput:
        return np.zeros(count)


def axis_positions(seen, frequencies, part: str, origin: float = 0.0):
    """Each row's position on one axis from its columns `seen` (rows, n), one per frequency,
    the frequencies ascending and above 0 (each frequency's angle is taken in the turn nearest
    the estimate so far). The lowest frequency's angle is known only up to its reflection
    (arccos: sign; arcsin: pi - angle); each reading is followed through, and the one whose
    values agree with the table best kept, and so is each in the turn nearest `origin`, where
    the positions may be (past the lowest frequency's wavelength from 0: Ideogram 4's grid at
    65536 + row, whose rows and columns turn no slower than once in 6,700). An angle table: the
    highest's angle over it."""
    import numpy as np

    w = np.asarray(frequencies, dtype=np.float64)
    if part == "angle":
        return seen[:, -1] / w[-1]
    function = np.cos if part == "cos" else np.sin
    seen = np.clip(seen, -1, 1)
    angles = np.arccos(seen) if part == "cos" else np.arcsin(seen)
    mirror = -angles if part == "cos" else np.pi - angles  # the other angle of the same value
    # a cos's mirror reading is its first one negated, which fits as well (the first is kept)
    first = [angles[:, 0]] if part == "cos" else [angles[:, 0], mirror[:, 0]]
    begins = list(first)
    if abs(origin * w[0]) > np.pi:  # another turn than the first's
        begins += [
            b + 2 * np.pi * np.round((origin * w[0] - b) / (2 * np.pi))
            for b in (angles[:, 0], mirror[:, 0])
        ]
    if w[0] >= 1:  # a lowest frequency that turns by a whole turn over the positions (pixel
        # RoPE's pi over [-1, 1]) tells p only up to 2 pi / w: the neighbouring turns too
        begins += [b + turn for b in first for turn in (-2 * np.pi, 2 * np.pi)]
    estimates = np.stack(begins) / w[0]  # every reading at once: (readings, rows)
    for i in range(1, len(w)):
        guess = estimates * w[i]
        this = angles[:, i] + 2 * np.pi * np.round((guess - angles[:, i]) / (2 * np.pi))
        other = mirror[:, i] + 2 * np.pi * np.round((guess - mirror[:, i]) / (2 * np.pi))
        estimates = np.where(np.abs(this - guess) <= np.abs(other - guess), this, other) / w[i]
    misfit = np.abs(function(estimates[..., None] * w) - seen).sum(axis=-1)
    best = np.argmin(misfit, axis=0)  # the first of ties
    return estimates[best, np.arange(len(best))]


def as_grid(positions, spec, part: str, length: int, read_at):
    """(grid, text tokens) whose tokens are these positions (read from the first rows of a
    table of `length` rows), or None. Row-major, an axis's size is how many of its strides (the
    product of the inner axes' sizes) pass before its position returns to where it started
    (the first few such counts are tried: a cos table tells p and -p apart nowhere, so an axis
    symmetric about 0 seems to return early); rows past those at hand are read with
    `read_at(rows)`. The layout then says where every token is, which must be where the first
    rows were read (up to sign in a cos table)."""
    import numpy as np

    style = layout_of(spec)
    covered = positions.shape[1] - style.trailing
    turning = [dim > 0 for dim, _ in split_laws(spec)]  # the axes with columns tell positions

    def shapes(a, stride, count, first):
        """The sizes of axes 1 .. a (inner ones last) the table's rows may say."""
        if a < 1:
            yield []
            return
        start = positions[first]
        sizes = [d for d in range(1, count // stride + 1) if count % (d * stride) == 0]
        found = read_at([first + d * stride for d in sizes if d * stride < count])
        back = [d for d, row in zip(sizes, found) if abs(row[a] - start[a]) < CLOSE]
        if a == covered - 1 and not turning[a]:  # an axis without columns says nothing of its
            # size: the last one takes every row of its token's run (LTX-2's cross-attention)
            back = [d for d, row in zip(sizes, found) if np.any(np.abs(row - start) >= CLOSE)][:1]
        for size in back[:SIZES_TRIED] or [count // stride]:
            for outer in shapes(a - 1, stride * size, count, first):
                yield [*outer, size]

    for text in trailing_text(length, read_at) if style.text_after else text_counts(positions):
        count = length - text
        first = 0 if style.text_after else text  # the grid's first row
        if count < 1 or first >= len(positions):
            continue
        for inner in shapes(covered - 1, 1, count, first):
            stride = int(np.prod(inner, dtype=np.int64))
            if count % stride:
                continue
            shape = [count // stride, *inner]
            found = _placed(spec, part, positions, shape, text, covered, turning)
            if found is not None:
                return found, text
    return None


SIZES_TRIED = 3  # sizes tried per axis, of those where its position returns


def _placed(spec, part, positions, shape, text, covered, turning):
    """The --grid of this shape (or of it less its leading axes of size 1) that puts the
    layout's tokens where the first rows were read; None if none does."""
    import numpy as np

    for lead in sorted(
        {0, next((a for a, size in enumerate(shape) if size > 1), covered - 1)}, reverse=True
    ):
        grid = "x".join(map(str, shape[lead:]))
        try:
            expected = split_positions(spec.replace(grid=grid, text_tokens=text))[: len(positions)]
        except BadInput:
            continue
        if part == "cos":  # cos tells a position only up to its sign
            expected = np.abs(expected)
        if len(expected) == len(positions) and np.all(near(positions, expected)[:, turning]):
            return grid
    return None


TAIL = 4096  # last rows read for the text tokens that follow a grid


def trailing_text(length: int, read_at) -> list[int]:
    """Numbers of text tokens a table whose text follows the grid may end with: none, and the
    longest run of last rows that look like text tokens (`text_like`), and one fewer."""
    import numpy as np

    rows = list(range(max(1, length - TAIL), length))
    if not rows:  # one token: the grid's
        return [0]
    like = text_like(np.asarray(read_at(rows)))[::-1]
    run = int(np.argmin(like)) if not like.all() else len(like)
    return sorted({0, run, max(run - 1, 0)}, reverse=True)


def text_like(positions):
    """Rows whose nonzero positions are all the same (FLUX's text at 0, QwenImage's at m + k on
    every axis, Ovis-Image's (0, k, k)), or that are 0 but on one axis (FLUX.2's (0, 0, 0, l),
    ERNIE-Image's (k, 0, 0))."""
    import numpy as np

    size = np.abs(positions)
    zero = size < CLOSE
    top = size.max(axis=1, keepdims=True)
    same = np.all(zero | (np.abs(positions - positions.max(axis=1, keepdims=True)) < CLOSE), axis=1)
    return (same & np.all(zero | (np.abs(size - top) < CLOSE), axis=1)) | (
        np.sum(~zero, axis=1) <= 1
    )


def text_counts(positions) -> list[int]:
    """Numbers of text tokens the table may start with: 0, and each longest run of rows that
    look like text tokens (the same position on every axis: FLUX, QwenImage; k on one axis and
    0 on the others: FLUX.2, Lumina2; k on some, 0 on the rest: Ovis-Image), and one fewer (the
    grid's first token may look the same)."""
    import numpy as np

    k = positions.shape[1]
    index = np.arange(len(positions))
    looks = [np.all(np.abs(positions - positions[:, :1]) < CLOSE, axis=1)]
    # Ovis-Image, LongCat-Image: (0, k, k), the nonzero axes equal and counting
    top = np.max(np.abs(positions), axis=1)
    looks.append(
        np.all((np.abs(positions) < CLOSE) | (np.abs(positions - top[:, None]) < CLOSE), axis=1)
        & (np.abs(top - top[0] - index) < CLOSE)
    )
    for a in range(k):
        others = np.abs(np.delete(positions, a, axis=1)) < CLOSE
        counting = (
            np.abs(np.abs(positions[:, a]) - np.abs(positions[0, a]) - index) < CLOSE
        )  # from any start
        looks.append(np.all(others, axis=1) & counting)
    counts = {0}
    for same in looks:
        run = int(np.argmin(same)) if not same.all() else len(same)
        counts |= {run, max(run - 1, 0)}
    return sorted(counts, reverse=True)
