"""Tokens' positions written back as inline --ids runs (positions.token_runs reads them): what
`compare` writes for a table whose tokens make no grid; and those positions read from a table,
block by block."""

from __future__ import annotations

from ..split import divisors
from .common import MOST_RUNS, is_whole
from .grids import read_axes


def _entry(start: int, size: int, step: int) -> str:
    if size == 1:
        return str(start)
    return f"{start}:{start + size * step}" + ("" if step == 1 else f":{step}")


def _box(positions, r: int, unsigned: bool = False) -> tuple[int, str]:
    """The longest row-major grid (product of steady ranges, the last axis fastest) starting at
    row r: (its tokens, its run). unsigned: positions known up to their signs (a cos table's
    |p|), matched by |p|: a centred range -2:2 reads 2, 1, 0, 1, its run 2:-2:-1."""
    import numpy as np

    def equal(a, b):
        return np.abs(a) == np.abs(b) if unsigned else a == b

    n, k = positions.shape
    start, sizes, steps, stride = positions[r], [1] * k, [1] * k, 1
    for a in range(k - 1, -1, -1):
        if r + stride >= n:
            break
        step = int(positions[r + stride, a] - start[a])
        if step == 0:
            continue
        unit = np.zeros(k, dtype=positions.dtype)
        unit[a] = step
        at = r + stride * np.arange(1, (n - r - 1) // stride + 1)
        steady = np.all(
            equal(positions[at], start + np.arange(1, len(at) + 1)[:, None] * unit), axis=1
        )
        sizes[a] = 1 + (int(np.argmin(steady)) if not steady.all() else len(at))
        steps[a] = step
        stride *= sizes[a]
    grids = np.meshgrid(
        *[start[a] + steps[a] * np.arange(sizes[a]) for a in range(k)], indexing="ij"
    )
    expected = np.stack([g.reshape(-1) for g in grids], axis=1)
    same = np.all(equal(positions[r : r + len(expected)], expected[: n - r]), axis=1)
    length = int(np.argmin(same)) if not same.all() else len(same)
    outer = next(a for a in range(k) if sizes[a] > 1 or a == k - 1)
    inner = len(expected) // sizes[outer]  # only whole slices of the outermost axis that moves
    sizes[outer] = length // inner
    if sizes[outer] < 1:
        return 1, ",".join(map(str, start))
    return sizes[outer] * inner, ",".join(
        _entry(int(start[a]), sizes[a], steps[a]) for a in range(k)
    )


def _line(positions, r: int) -> tuple[int, str]:
    """The longest run of tokens a steady step apart starting at row r: (its tokens, its run)."""
    import numpy as np

    n, start = len(positions), positions[r]
    if r + 1 == n:
        return 1, ",".join(map(str, start))
    step = positions[r + 1] - start
    steady = np.all(np.diff(positions[r:], axis=0) == step, axis=1)
    length = 1 + (int(np.argmin(steady)) if not steady.all() else len(steady))
    return length, f"{length}*" + ",".join(
        _entry(int(s), length if d else 1, int(d)) for s, d in zip(start, step)
    )


def runs_of(positions, most: int, denominators=None, unsigned: bool = False) -> str | None:
    """Positions (tokens, axes), integers over each axis's denominator (default 1), as inline
    --ids runs (`token_runs`), each the longer of the grid and the line starting where the last
    ended; None past `most` runs. unsigned: positions known only up to sign, whose runs give
    the same |p| (`_box`)."""
    runs, r = [], 0
    while r < len(positions):
        if len(runs) == most:
            return None
        grid, line = _box(positions, r, unsigned), _line(positions, r)
        length, run = grid if grid[0] >= line[0] or line[0] < 3 else line  # no line of two tokens
        count, star, body = run.rpartition("*")
        runs.append(
            count
            + star
            + ",".join(
                _over(e, q)
                for e, q in zip(body.split(","), denominators or [1] * positions.shape[1])
            )
        )
        r += length
    return "; ".join(runs)


def _over(entry: str, q: int) -> str:
    """A run's entry of numerators over q: V/Q or START:STOP[:STEP]/Q; a whole V as itself."""
    if q == 1:
        return entry
    if ":" not in entry and int(entry) % q == 0:
        return str(int(entry) // q)
    return f"{entry}/{q}"


_FINEST = (
    16  # positions identification reads as fractions: over 2, 4, 8 or 16 (FLUX.3's rows at k/2)
)


def binary_denominators(positions) -> tuple[int, ...] | None:
    """Each axis's least power of two up to _FINEST over which its positions read whole; None
    where some axis has none."""
    found = []
    for axis in positions.T:
        q = next(
            (q for q in (1 << e for e in range(_FINEST.bit_length())) if is_whole(axis * q)), None
        )
        if q is None:
            return None
        found.append(q)
    return tuple(found)


def read_runs(spec, table, view, reading) -> str | None:
    """Every token's positions read from the table, in blocks, as inline --ids runs (over each
    axis's divisor): integers over each axis's power of two; None where some token's are no
    such fractions or they make over MOST_RUNS runs. A cos table tells each position only up
    to its sign: its runs are of signed positions with the same |p|, the same table."""
    import numpy as np

    scale = np.array(divisors(spec))
    found, denominators = [], (1,) * len(scale)
    for _, block in table.blocks():
        found.append(read_axes(view(block), spec, reading) * scale)  # the ids, before the divisors
        finer = binary_denominators(found[-1])
        if finer is None:
            return None
        denominators = tuple(max(q) for q in zip(denominators, finer))
    numerators = np.round(np.concatenate(found) * np.array(denominators))
    return runs_of(
        (np.abs(numerators) if reading == "cos" else numerators).astype(np.int64),
        MOST_RUNS,
        denominators,
        unsigned=reading == "cos",
    )
