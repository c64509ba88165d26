"""Reading a table of transformers' multi-axis layouts back (layouts.Mrope: M-RoPE's (t, h, w)
and vision RoPE's (row, column)): which position axis each column follows, the layout and head
dim whose plan puts them there (and the mrope_section that implies), the base from the
frequencies read best along each axis, every row's positions, and the grid, merge size and
offset that put the tokens there. Fitted from the rows at hand; the grid's size from the table's last row, so a
long table is read from its sample and confirmed by the scorer in one pass."""

from __future__ import annotations

from typing import NamedTuple

from ....core.dtypes import FORMATS
from ...proposals import Proposal
from ...reading import BASES, joined, round_numbers
from ..family import FAMILY
from ..layouts import LAYOUTS, Mrope
from ..tokens import axes_positions
from ..types import frequency_count, rope_frequencies
from .common import is_whole, near
from .grids import may_be_angles, positions_by_axis

MERGES = (1, 2, 4, 3)  # spatial merge sizes tried (Qwen2-VL's 2, others' 1)


class Axes(NamedTuple):
    """Which axis each column follows, counted from the fastest (0: the axis whose positions
    change first down the rows; None: a column that never changes in the rows read), and the
    first row where each rank changes."""

    rank: list
    first: list


def column_axes(values) -> Axes | None:
    """Which axis each column follows, from the rows where it leaves its first row's value:
    a column of the highest frequency on an axis leaves it wherever that axis's position does,
    one of a lower frequency at some of those rows only (its cos stays 1 in float32 at the first
    positions). So the columns that change most set each axis's rows, and every other column
    follows the axis whose rows hold its own (None: none or several). Ranked by the first row
    each axis moves at (a row-major grid's last axis at row 1); None where the columns do not
    make 2 or 3 axes (a 1-D table)."""
    import numpy as np

    if len(values) < 3:
        return None
    changed = values != values[:1]
    counts = changed.sum(axis=0)
    references: list = []  # each axis's rows, from its most changing column
    for c in np.argsort(-counts, kind="stable"):
        if not counts[c]:
            break
        if not any(not (changed[:, c] & ~ref).any() for ref in references):
            references.append(changed[:, c])
            if len(references) > 3:
                return None
    if len(references) < 2:
        return None
    order = sorted(range(len(references)), key=lambda g: int(np.argmax(references[g])))
    rank = []
    for c in range(values.shape[1]):
        holding = [
            order.index(g)
            for g, ref in enumerate(references)
            if counts[c] and not (changed[:, c] & ~ref).any()
        ]
        rank.append(holding[0] if len(holding) == 1 else None)
    return Axes(rank, [int(np.argmax(references[g])) for g in order])


class Fit(NamedTuple):
    """A layout's reading: its spec's settings up to the base, and each column's axis."""

    layout: Mrope
    d_model: int
    rope: dict
    axis: list  # each column's axis (the plan's)
    frequency: list  # each column's frequency index

    def placed(self, view, shape, merge: int = 1, **more):
        """The spec of the layout over a grid of this shape (None where it refuses it)."""
        grid = "x".join(map(str, shape))
        return _spec(view, self.layout, self.d_model, self.rope, grid, merge=merge, **more)


def _fits(view, values, axes: Axes):
    """Each multi-axis layout and head dim whose plan puts the table's columns on the axes
    they follow (and its equal columns where the plan repeats one)."""
    import numpy as np

    width = values.shape[1]
    for layout in LAYOUTS.values():
        if not isinstance(layout, Mrope):
            continue
        count, planned = len(layout.axes), set()
        # the head dim the width says first; the others whose plan has as many columns
        for d_model in sorted(range(max(2, width - 3), width + 4), key=lambda d: abs(d - width)):
            rope = {}
            if not layout.vision:
                sections = _sections(layout, d_model, axes, count, width)
                if sections is None:
                    continue
                rope["mrope_section"] = ",".join(map(str, sections))
            spec = _spec(view, layout, d_model, rope)
            if spec is None:
                continue
            _, columns = layout.plan(spec)
            dim = layout.dim(d_model, rope)
            if len(columns) != width or (dim, tuple(columns)) in planned:
                continue  # another head dim of the same table: the first is named
            planned.add((dim, tuple(columns)))
            axis = [a for a, _ in columns]
            if any(r is not None and r != count - 1 - a for r, a in zip(axes.rank, axis)):
                continue
            seen = {}
            if any(
                not np.array_equal(values[:, seen.setdefault(c, k)], values[:, k])
                for k, c in enumerate(columns)
            ):
                continue
            yield Fit(layout, d_model, rope, axis, [j for _, j in columns])


def _sections(layout, d_model: int, axes: Axes, count: int, width: int):
    """mrope_section as the table's columns say: the frequencies on h and w (from how many
    columns follow each), t taking the rest."""
    n = frequency_count(d_model, {})
    if count != 3 or not n or width % n:
        return None
    per = width // n  # columns per frequency
    found = [sum(1 for r in axes.rank if r == count - 1 - a) for a in (1, 2)]
    if any(c % per for c in found) or sum(found) // per > n:
        return None
    h, w = (c // per for c in found)
    return layout.sections(n - h - w, h, w)


def _spec(view, layout, d_model, rope, grid=None, **more):
    """A spec of the layout (None where it refuses these settings): one token unless `grid`."""
    return view.spec(
        family=FAMILY.name,
        d_model=d_model,
        axes=layout.name,
        rope=rope,
        grid=grid or "x".join(["1"] * len(layout.axes)),
        **more,
    )


def _base(values, fit: Fit, axes: Axes, part: str) -> float | None:
    """The base from each axis's columns along the rows where only it moves (its positions
    there step by one): each frequency's cos(w) from cos((p+1)w) + cos((p-1)w) = 2 cos(pw)
    cos(w) (sin alike), least squares over the rows; then log w_j = -(2j/dim) log(base) over
    the frequencies read well (0.05 < w < 2.5), wherever they are."""
    import numpy as np

    count = len(fit.layout.axes)
    dim = fit.layout.dim(fit.d_model, fit.rope)
    x, y = [], []
    for axis in range(count):
        others = [k for k, r in enumerate(axes.rank) if r not in (None, count - 1 - axis)]
        rows = np.flatnonzero(np.all(values[:, others] == values[:1, others], axis=1))
        if len(rows) < 3:
            continue
        columns = {}
        for k, a in enumerate(fit.axis):
            if a == axis and fit.frequency[k]:
                columns.setdefault(fit.frequency[k], k)
        for j, k in columns.items():
            line = values[rows, k]
            if part == "angle":
                w = float(np.median(np.diff(line)))
            else:
                middle, sides = line[1:-1], line[2:] + line[:-2]
                norm = float(np.dot(middle, middle))
                if norm <= 0:
                    continue
                w = float(np.arccos(np.clip(np.dot(sides, middle) / (2 * norm), -1, 1)))
            if 0.05 < w < 2.5:
                x.append(2 * j / dim)
                y.append(np.log(w))
    if not x:
        return None
    x, y = np.array(x), np.array(y)
    return float(np.exp(-np.dot(x, y) / np.dot(x, x)))


def _positions(values, fit: Fit, base: float, part: str):
    """Every row's position on each axis, read from its columns at this base: (rows, axes)."""
    law = [
        float(w) for w in rope_frequencies(fit.layout.dim(fit.d_model, fit.rope), base, {}, 0)[0]
    ]
    columns = list(zip(fit.axis, fit.frequency))
    return positions_by_axis(values, columns, law, part, [0.0] * len(fit.layout.axes))


def _slack(read, fit: Fit, base: float, part: str, dtype: str):
    """How far each position read back (rows, axes) may be from the number it is: a value
    rounded to the dtype (half an epsilon) moves the angle of its axis's fastest frequency w by
    that over the value's slope in the angle (a cos near 1 has almost none: a slow axis's small
    positions are told coarsely, 1.4e-3 at w = 0.003), the position by that over w; at most a
    quarter, where whole numbers are still told apart."""
    import numpy as np

    if part == "angle":
        return np.zeros(read.shape)
    dim = fit.layout.dim(fit.d_model, fit.rope)
    law = [float(w) for w in rope_frequencies(dim, base, {}, 0)[0]]
    fastest = np.array(
        [
            max((law[j] for a, j in zip(fit.axis, fit.frequency) if a == axis), default=0.0)
            for axis in range(read.shape[-1])
        ]
    )
    angle = np.abs(read) * fastest
    slope = np.abs(np.sin(angle) if part == "cos" else np.cos(angle))
    told = FORMATS[dtype].epsilon / 2 / np.maximum(slope * fastest, 1e-30)
    return np.minimum(np.where(fastest > 0, told, 0.0), 0.25)


def axial(view, why: list | None = None):
    """A table of transformers' M-RoPE or vision layouts: each layout and head dim that puts
    its columns on the axes they follow, its base fitted and its grid read (the grid's size
    from the table's last row), scored as usual. Where the columns follow 2 or 3 axes and no
    layout's tokens are read, `why` gets what was measured (Reading.reason) and, where a grid
    of the layout has the table's tokens, it is the nearest candidate."""
    import numpy as np

    values = view.values
    axes = column_axes(values)
    if axes is None:
        return
    parts = ("cos", "sin", "angle")[: 3 if may_be_angles(values) else 2]
    last = view.at([view.length - 1])
    reading, nearest = Reading(axes), None
    for fit in _fits(view, values, axes):
        reading.fitted.append(fit.layout.name)
        for part in parts:
            estimate = _base(values, fit, axes, part)
            # no frequency in the band read well (a narrow head): the common bases
            bases = BASES if estimate is None else round_numbers(estimate, range(1, 7), 1e-2, BASES)
            for base in bases:
                read = _positions(values, fit, base, part)
                if estimate is not None:
                    reading.based.setdefault(fit.layout.name, estimate)
                slack = _slack(read, fit, base, part, view.dtype)
                if not is_whole(read, slack):
                    continue
                reading.whole.setdefault(fit.layout.name, base)
                offset = int(round(read[0, 0]))
                end = _positions(last, fit, base, part)[0]
                shape = [int(round(e)) - offset + 1 for e in end]
                if (
                    not (
                        is_whole(end, _slack(end, fit, base, part, view.dtype))
                        and np.all(near(read[0], offset, slack[0]))
                    )
                    or min(shape) < 1
                    or int(np.prod(shape)) != view.length
                ):
                    continue
                spec = _grid_spec(view, fit, base, part, shape, offset, read, slack)
                if spec is None:
                    nearest = nearest or fit.placed(
                        view, shape, base=base, part=part, offset=offset
                    )
                    continue
                reading.named = True
                yield Proposal(f"rope {part}, {fit.layout.name} axes", spec)
                break
    if reading.named:
        return
    reason = reading.reason(view.length, paired(values))
    if why is not None and reason:
        why.append(reason)
    if nearest is not None:  # the layout's grid of as many tokens, at the positions read
        yield Proposal(f"rope {nearest.part}, {nearest.axes} axes", nearest, libraries=False)


class Reading:
    """How far a multi-axis reading went: the axes the columns follow, the layouts whose plan
    puts them there, each (layout, base) read, those whose positions are whole."""

    def __init__(self, axes: Axes):
        self.axes, self.fitted, self.named = axes, [], False
        self.based: dict = {}  # layout -> the base its frequencies gave first
        self.whole: dict = {}  # layout -> the first base at which its positions are whole

    def reason(self, length: int, paired: bool) -> str | None:
        """What was measured, the furthest the reading went: why no layout names the table;
        None where no layout's plan fits a table whose columns are not in equal pairs (not a
        rotary table's cos or sin: a 2-D sin-cos grid's columns also follow two axes)."""
        counts = [sum(1 for r in self.axes.rank if r == k) for k in range(len(self.axes.first))]
        found = (
            f"its columns follow {len(counts)} position axes ({joined(counts)} columns, first "
            f"moving at rows {joined(self.axes.first)})"
        )
        if not self.fitted:
            if not paired:
                return None
            return found + ", but no M-RoPE or vision layout pe-cli builds puts its columns there"
        if not self.based:
            return (
                f"{found}, as {joined(list(dict.fromkeys(self.fitted)), 'or')} would, but their "
                "frequencies do not turn steadily from row to row"
            )
        if not self.whole:
            return f"{found}; as {_bases_read(self.based)}, its positions are not whole numbers"
        return (
            f"{found}; as {_bases_read(self.whole)}, its positions are whole numbers but make "
            f"no grid of its {length} rows in the layout's token order"
        )


def paired(values) -> bool:
    """Whether every column has an equal one (a rotary cos or sin table's pairs, or angles')."""
    import numpy as np

    _, inverse, counts = np.unique(values.T, axis=0, return_inverse=True, return_counts=True)
    return bool(np.all(counts[inverse.reshape(-1)] >= 2))


def _bases_read(found: dict) -> str:
    """Each layout and the base read, where it is one a model could have (else none)."""
    return joined(
        [
            f"{layout} at base {base:.5g}"
            if 2 <= base <= 1e9
            else f"{layout} (its frequencies give no base a model has)"
            for layout, base in found.items()
        ],
        "or",
    )


def _grid_spec(view, fit: Fit, base: float, part: str, shape, offset: int, read, slack):
    """The spec whose tokens are at the positions read (the first rows'), trying the spatial
    merge sizes a vision layout may have; None if none puts them there."""
    import numpy as np

    merges = [m for m in MERGES if shape[-1] % m == 0 and shape[-2] % m == 0]
    for merge in merges if fit.layout.vision else (1,):
        spec = fit.placed(view, shape, base=base, part=part, offset=offset, merge=merge)
        if spec is None:
            continue
        expected = axes_positions(spec, 0, len(read))
        if part == "cos":
            expected, read = np.abs(expected), np.abs(read)
        if np.all(near(read, expected, slack)):
            return spec
    return None
