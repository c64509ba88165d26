"""Reading a pooled table (--rope pool: FramePack's and Helios's history, AnyFlow-FAR's
compressed frames) back: its blocks' centres, their sizes, and the grid before pooling."""

from __future__ import annotations

from ..layouts import axes_plan
from ..split import distinct, law_frequencies, row_major
from .common import CLOSE, RUNS_NEAR, is_whole
from .grids import read_axes

POOL_LEADING = 256  # leading rows a pooled reading is checked on before the whole table


POOLS = (
    2,
    4,
    None,
)  # the blocks identification tries: FramePack's and Helios's 2x2x2 and 4x4x4; AnyFlow-FAR's


def read_pooled(spec, table, values, reading: str, k: int | None) -> tuple[str, tuple, bool] | None:
    """Where the table reads as the spec's (cos or sin) table averaged over blocks of k tokens
    on each axis (--rope pool, FramePack's and Helios's history), or with k None over blocks
    renormalised (pool_unit, AnyFlow-FAR's compressed frames): (its grid before pooling as one
    --ids run, the block sizes, whether renormalised); else None. A block of k steady positions
    from s is the table at its centre s + (k - 1)/2, times sin(k w/2) / (k sin(w/2)) unless
    renormalised (which leaves each axis's k in the spacing of its centres). An axis's last block
    may repeat its last position (replicate padding): which of k such blocks it is, is taken
    from how near each comes to the table's last row."""
    import numpy as np

    laws, columns = axes_plan(spec)
    unit = k is None
    if (
        not 1 <= len(laws) <= 3
        or (unit and spec.convention != "single")
        or len(columns) != values.shape[1]
    ):
        return None
    frequencies = [float(w) for law in law_frequencies(spec) for w in law]
    w = np.array([frequencies[j] for _, j in columns])
    axis_of = np.array([a for a, _ in columns])
    with np.errstate(divide="ignore", invalid="ignore"):
        damping = 1.0 if unit else np.where(w > 0, np.sin(k * w / 2) / (k * np.sin(w / 2)), 1.0)
    if np.min(np.abs(damping)) < 0.1:
        return None

    def blocks_of(
        order,
    ):  # (first position, size) of blocks with these centres, all but the last steady
        size = k or (
            round(order[1] - order[0]) if len(order) > 1 else 1 + int(not is_whole(order[:1]))
        )
        starts = order[:-1] - np.arange(len(order) - 1) * size - (size - 1) / 2
        if (
            size < 1
            or len(order) > 1
            and not (is_whole(starts) and np.all(np.abs(starts - starts[0]) < CLOSE))
        ):
            return None
        return (starts[0] if len(order) > 1 else None), size

    leading = read_axes(values / damping, spec, reading)  # the leading rows first
    if any(blocks_of(distinct(axis)) is None for axis in leading.T):
        return None
    centres = np.concatenate(
        [read_axes(block / damping, spec, reading) for _, block in table.blocks()]
    )
    orders = row_major(centres)
    blocks = None if orders is None else [blocks_of(order) for order in orders]
    if blocks is None or None in blocks:
        return None
    last = table.at([table.length - 1])[0]
    runs, sizes = [], []
    for axis, (order, (start, size)) in enumerate(zip(orders, blocks)):
        n = len(order)
        begins = [float(np.round(start))] if n > 1 else [order[0] - (size - 1) / 2, order[0]]
        mine = axis_of == axis

        # the last block from its first position, r positions then repeats
        def misfit(begin, r, size=size, n=n, mine=mine):
            at = (begin + size * (n - 1) + np.minimum(np.arange(size), r - 1))[:, None] * w[mine]
            cos, sin = np.cos(at).mean(axis=0), np.sin(at).mean(axis=0)
            mean = cos if reading == "cos" else sin
            return np.max(
                np.abs(mean / (np.hypot(cos, sin) if unit else 1.0) - last[mine]), initial=0.0
            )

        error, begin, r = min(
            (
                (misfit(b, r), b, r)
                for b in begins
                if is_whole(np.array([b]))
                for r in range(1, size + 1)
            ),
            default=(np.inf, 0, 0),
        )
        if not error <= RUNS_NEAR:
            return None
        begin = int(round(begin))
        runs.append(
            f"{begin}:{begin + size * (n - 1) + r}" if size * (n - 1) + r > 1 else str(begin)
        )
        sizes.append(size)
    return ",".join(runs), tuple(sizes), unit
