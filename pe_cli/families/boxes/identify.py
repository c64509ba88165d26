"""Reading GLIGEN's box features back: the layout's sin/cos pairs, the base from the two
lowest frequencies (the first is 1: its angle is the coordinate), each box read back from the
angles as the float32 numbers the exact table or a library's arithmetic makes them from."""

from __future__ import annotations

from fractions import Fraction

from ...core.dtypes import FORMATS
from ...core.names import few
from ...numerics.frequencies import power_law
from ..proposals import Proposal
from ..reading import float32_near, picked_per_row, plausible_bases, read_positions
from .family import BASE, FAMILY, VARIANTS, boxes_text


def read(view):
    """The layout's sin/cos pairs, the base from the two lowest frequencies (the first is 1:
    its angle is the coordinate), each box read back from the angles and rounded to float32."""
    import numpy as np

    values = view.values
    count, cols = values.shape
    if cols % 8 or cols < 16:
        return
    n = cols // 8
    sin = np.stack([values[:, 8 * i : 8 * i + 4] for i in range(n)], axis=2)  # (count, 4, n)
    cos = np.stack([values[:, 8 * i + 4 : 8 * i + 8] for i in range(n)], axis=2)
    # (coordinate, frequency) pairs of length 1 in every row: all, or all but a few broken
    # columns, left out of the reading (the scorer lists where the table is not the one read)
    whole = np.isclose(sin**2 + cos**2, 1, atol=1e-2).all(axis=0)  # (4, n)
    if not whole.all() and not few(int(np.count_nonzero(~whole)), cols):
        return
    angles = np.arctan2(sin, cos)
    first = np.where(whole[:, 0] & whole[:, 1], np.abs(angles[..., 0]), 0)
    r, c = np.unravel_index(np.argmax(first), first.shape)
    if first[r, c] < 1e-3:  # every box at 0: any base fits
        bases = [BASE]
    else:
        # w_1 / w_0 = base**(1/n), where the second angle has not passed pi; it has where
        # that step times the coordinate is above pi (base 100 over 2 or 4 frequencies), so
        # each whole turn it may have made gives a step to try
        turns = angles[r, c, 1] + 2 * np.pi * np.arange(-2, 3)
        powers = (turns / angles[r, c, 0]) ** n
        powers = powers[np.isfinite(powers) & (turns / angles[r, c, 0] > 1)]
        if not len(powers):
            return
        bases = [b for power in powers.tolist() for b in plausible_bases(power)] + [BASE]
    for base in dict.fromkeys(bases):
        law = [float(w) for w in power_law([Fraction(-i, n) for i in range(n)], base)]
        estimate = np.stack(
            [
                read_positions(angles[:, k][:, whole[k]], [w for w, o in zip(law, whole[k]) if o])
                for k in range(4)
            ],
            axis=1,
        )
        for boxes in _readings(values, estimate, base, view, whole):
            spec = view.spec(
                family=FAMILY.name,
                d_model=cols,
                base=base,
                boxes=boxes_text(boxes),
                convention="gligen",
            )
            yield Proposal("GLIGEN box features", spec)


def _readings(values, estimate, base: float, view, whole) -> list:
    """The float32 boxes the table's rows are, as the exact table and each library's arithmetic
    make them: each coordinate the float32 near its estimate (within 3 steps; in a half
    table, its shortest decimals first) whose sines and cosines that arithmetic makes as
    the table has them (a library's float32 angles put the estimate an ulp or two off), in
    its `whole` (coordinate, frequency) pairs."""
    import numpy as np

    count, cols = values.shape
    tried = float32_near(estimate)  # (count, 4, 7)
    if FORMATS[view.dtype].precision < 24:
        # a half table's angles place a coordinate to about 1e-3 only, far more than 3
        # float32 steps: its shortest decimals (boxes are written as 0.25 or 0.1) are tried
        # first, and any that makes the table's values is a reading of it
        rounded = [np.round(estimate, places) for places in range(1, 5)]
        tried = np.concatenate([np.stack(rounded, axis=2).astype(np.float32), tried], axis=2)

    def make(built_by, tried):
        boxes = np.moveaxis(tried, 2, 1).reshape(-1, 4)  # each row's candidate boxes in turn
        return view.spec(
            family=FAMILY.name,
            d_model=cols,
            base=base,
            boxes=boxes_text(boxes),
            variant=built_by,
            dtype=view.dtype,
        )

    # each coordinate's own columns: its sines (8i + c) and cosines (8i + 4 + c)
    own = [
        [j for i in np.flatnonzero(whole[c]) for j in (8 * i + c, 8 * i + 4 + c)] for c in range(4)
    ]
    libraries = [v for v, f in VARIANTS.items() if f.kind == "library"]
    return picked_per_row(view, values, tried, make, ["exact", *libraries], own)
