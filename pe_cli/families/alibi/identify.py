"""Reading ALiBi back: slopes (a vector), or a causal or symmetric bias with Press et al.'s
slopes. A long table's part is read from its first head's first rows (the rows it is fitted
from); identification's streamed pass confirms it over every row."""

from __future__ import annotations

from ...core.names import few
from ..proposals import Proposal
from ..reading import comes_near
from .family import FAMILY


def read(view):
    import numpy as np

    rows, cols = view.length, view.cols
    if rows == 1:  # a vector: ALiBi slopes for that many heads?
        spec = view.spec(family=FAMILY.name, heads=cols, part="slopes")
        if spec is not None and np.allclose(view.values[0], view.exact(spec)[0], rtol=1e-2):
            yield Proposal("alibi slopes (Press et al.)", spec)
        return
    if cols < 2 or rows % cols:
        return
    heads, length = rows // cols, cols
    values = view.values
    part = _part(values.reshape(-1, length, length) if len(values) == rows else values)
    for tried in [part] if part is not None else _broken_parts(values):
        spec = view.spec(family=FAMILY.name, heads=heads, seq_len=length, part=tried)
        # a bias read past a few broken columns or rows is proposed where it comes near
        if part is not None or comes_near(view, spec, _NEAR * max(1.0, length)):
            yield Proposal(f"alibi {tried} (Press et al. slopes)", spec)


_NEAR = 1e-2  # a bias read past broken columns or rows is this close elsewhere (x its length)


def _broken_parts(values) -> list[str]:
    """The parts a bias may be where neither form holds in every element: both, where the
    values are at most 0 (an ALiBi bias's are) but in a few columns or rows; none otherwise."""
    import numpy as np

    above = values > 0
    if not above.any():
        return ["causal", "symmetric"]
    columns, rows = np.count_nonzero(above.any(axis=0)), np.count_nonzero(above.any(axis=1))
    if few(int(columns), values.shape[1]) or few(int(rows), len(values)):
        return ["causal", "symmetric"]
    return []


def _part(values):
    """ "causal" or "symmetric", the bias's form in these heads (heads, L, L) or in the first
    rows of the first head (k, L); None where it is neither."""
    import numpy as np

    block = values if values.ndim == 3 else values[None, : values.shape[1]]
    queries, length = block.shape[1], block.shape[2]
    upper = np.triu(np.ones((queries, length), bool), 1)
    if np.all(block[:, upper] == 0) and np.any(block):
        return "causal"
    square = block[:, :, :queries]
    if np.array_equal(square, square.transpose(0, 2, 1)) and np.all(
        np.diagonal(square, axis1=1, axis2=2) == 0
    ):
        return "symmetric"
    return None
