"""Reading ALiBi back: slopes (a vector), or a causal or symmetric bias with Press et al.'s
slopes. A long table's part is read from its first head's first rows (the rows it is fitted
from); identification's streamed pass confirms it over every row."""

from __future__ import annotations

from ..proposals import Proposal
from .family import FAMILY


def read(view):
    import numpy as np

    rows, cols = view.length, view.cols
    if rows == 1:  # a vector: ALiBi slopes for that many heads?
        spec = view.spec(family=FAMILY.name, heads=cols, part="slopes", dtype="float64")
        if spec is not None and np.allclose(view.values[0], view.exact(spec)[0], rtol=1e-2):
            yield Proposal("alibi slopes (Press et al.)", spec)
        return
    if cols < 2 or rows % cols:
        return
    heads, length = rows // cols, cols
    values = view.values
    part = _part(values.reshape(-1, length, length) if len(values) == rows else values)
    if part is not None:
        spec = view.spec(
            family=FAMILY.name, heads=heads, seq_len=length, part=part, dtype="float64"
        )
        yield Proposal(f"alibi {part} (Press et al. slopes)", spec)


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
