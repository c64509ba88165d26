"""Positions a user hands pe-cli, read exactly: --grid's shape, a positions file (.npy), the
--timesteps of a 1-D table, the inline --ids runs, and the binary fractions that carry a float
position into exact tables.

Every reader returns integers over a power of two (`binary_fractions`): an exact table takes
position k / q at frequency w / q, so fractions cost nothing in accuracy. Several of them come
as `Positions`, the exact numerators with their denominators beside the float32 values a
library holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from ..core.errors import BadInput
from ..core.limits import MAX_POSITION, available_memory


class Positions(NamedTuple):
    """Tokens' positions: integers (tokens, axes) over each axis's denominator, exactly, and
    the float32 positions a library computes for them (made when asked: only a library's
    arithmetic reads them)."""

    numerators: Any  # numpy int64 (tokens, axes)
    denominators: tuple[int, ...]
    floats: Callable[[], Any]

    @property
    def values(self):
        """The positions as float64 (tokens, axes): each numerator over its axis's
        denominator, a power of two, so exactly the numbers given."""
        import numpy as np

        return self.numerators / np.asarray(self.denominators, dtype=np.float64)


def parse_grid(text, axes: tuple[str, ...]) -> tuple[int, ...]:
    """'14x14', '14', (14, 14) -> (14, 14) for axes ("ROWS", "COLUMNS"); one number stands
    for every axis. '14,14' too: the generate command compare prints writes a grid so."""
    if isinstance(text, (tuple, list)):
        parts = list(text)
    else:
        parts = str(text).lower().replace("*", "x").replace(",", "x").split("x")
    shape = "x".join(axes)
    try:
        numbers = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise BadInput(
            f"--grid {text!r} is not {shape} (e.g. {'x'.join(['14'] * len(axes))})"
        ) from None
    if len(numbers) == 1:
        numbers *= len(axes)
    if len(numbers) != len(axes) or min(numbers) < 1:
        raise BadInput(f"--grid {text!r} is not {shape} with each at least 1")
    return tuple(numbers)


def positions_file(path: str, flag: str, columns: int | None):
    """Positions from a .npy file a user hands us (never unpickled): (rows, columns) float64,
    or (rows,) where `columns` is None; finite numbers of an integer or float dtype."""
    import numpy as np

    try:
        found = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise BadInput(f"{flag} {path}: not a readable .npy file ({e})") from None
    shape = "(count,)" if columns is None else f"(tokens, {columns})"
    if (
        found.ndim != (1 if columns is None else 2)
        or found.shape[0] < 1
        or (columns is not None and found.shape[1] != columns)
    ):
        raise BadInput(f"{flag} {path}: shape {tuple(found.shape)} is not {shape}")
    if found.dtype.kind not in "iuf" or found.dtype.itemsize > 8:
        raise BadInput(f"{flag} {path}: dtype {found.dtype} is not an integer or float type")
    values = np.asarray(found, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise BadInput(f"{flag} {path}: positions must be finite")
    return values


def binary_fractions(values, flag: str):
    """Positions (float64, any shape) as integers over the power of two that makes them all
    whole: (numerators, denominator), so that exact tables take them at frequencies w / q."""
    import numpy as np

    scale = 0  # the finest binary place the values use
    while scale <= 32 and not np.array_equal(
        np.ldexp(values, scale), np.round(np.ldexp(values, scale))
    ):
        scale += 1
    whole = np.ldexp(values, scale)
    if scale > 32 or np.max(np.abs(whole)) > MAX_POSITION:
        raise BadInput(
            f"{flag}: positions that need {scale} binary places reach past 2^32 times 2^-{scale}, "
            "beyond pe-cli's exact positions"
        )
    return whole.astype(np.int64), 1 << scale


def binary_places(values, flag: str):
    """Each position (float64, 1-D) as an integer over its own power of two, the fewest binary
    places it needs: (numerators, places), values = numerators / 2**places. Where one common
    denominator would push the largest positions' numerators past 2^32 (float32 sigmas from
    0.001 to 1 need 2^-33 and 2^-24), each keeps a numerator of at most its significand's bits."""
    import numpy as np

    mantissa, exponent = np.frexp(values)  # values = mantissa * 2**exponent, |mantissa| < 1
    numerators = np.ldexp(mantissa, 53).astype(np.int64)  # whole: 53 bits carry any float64
    places = 53 - exponent.astype(np.int64)
    live = numerators != 0
    lowest = np.where(live, numerators & -numerators, 1)  # the lowest set bit, a power of two
    trailing = np.minimum(np.round(np.log2(lowest.astype(np.float64))).astype(np.int64), places)
    trailing = np.where(live, np.maximum(trailing, 0), 0)
    numerators, places = numerators >> trailing, np.where(live, places - trailing, 0)
    too_big = (places < 0) | (np.abs(numerators) > MAX_POSITION)  # (places < 0: 2^53 and past)
    if np.any(too_big):
        first = int(np.argmax(too_big))
        raise BadInput(
            f"{flag}: position {float(values[first])!r} is {int(numerators[first])} / "
            f"2^{int(places[first])}, whose numerator passes 2^32: pe-cli's exact positions "
            "carry at most 32 significant bits (a float32 has 24)"
        )
    return numerators, places


# ---------------------------------------------------------------------------------------------
# --ids: a file of positions, or inline runs of tokens, "0,0,0,0:512; 0,0:32,0:32,0;
# 10,0:32,0:32,0" (FLUX.2's text, its image and a reference image): what `compare` writes for a
# table whose tokens it reads back


def timestep_values(text: str):
    """--timesteps as float64 (count,): a range START:STOP[:STEP] (whole numbers, as Python's
    range), a list t1,t2,... (each t written as its exact value: a float32 t reads back as
    itself), or a .npy file of any t."""
    import numpy as np

    if "," in text:
        try:
            values = np.array([float(t) for t in text.split(",")], dtype=np.float64)
        except ValueError:
            raise BadInput(
                f"--timesteps {shown_timesteps(text)}: not a list of numbers t1,t2,..."
            ) from None
        if not np.all(np.isfinite(values)):
            raise BadInput(f"--timesteps {shown_timesteps(text)}: timesteps must be finite")
    elif ":" in text:
        try:
            bounds = [int(part) for part in text.split(":")]
            steps = range(*bounds) if 2 <= len(bounds) <= 3 else None
        except ValueError:
            steps = None
        if not steps:
            raise BadInput(
                f"--timesteps {text!r} is not a non-empty range START:STOP[:STEP] of whole "
                "numbers (a file of t values takes fractions)"
            )
        values = np.array(steps, dtype=np.float64)
    else:
        values = positions_file(text, "--timesteps", None)
    return values


def shown_timesteps(text: str) -> str:
    """A --timesteps value as messages and summaries show it (a long list cut)."""
    return text if len(text) <= 60 else f"{text[:50]} ... ({text.count(',') + 1} values)"


_RUNS = re.compile(r"[-0-9:,;*/\s]*[0-9][-0-9:,;*/\s]*")
_LARGEST_DENOMINATOR = 1 << 16  # an entry's /Q: a power of two, so its float32 positions are exact


def _run_entry(text: str, run: str) -> tuple[range, int]:
    """An entry's positions over its denominator: V or START:STOP[:STEP], then /Q for positions
    over Q (FLUX.3's rows and columns at k/2: 0:64/2)."""
    body, slash, below = text.partition("/")
    try:
        numbers = [int(n) for n in body.split(":")]
        q = int(below) if slash else 1
    except ValueError:
        numbers, q = [], 1
    if not (0 < q <= _LARGEST_DENOMINATOR and q & (q - 1) == 0):
        raise BadInput(
            f"--ids run {run.strip()!r}: {text.strip()!r} divides by {below.strip()}: a denominator is a "
            f"power of two up to {_LARGEST_DENOMINATOR}"
        )
    if len(numbers) == 1:
        return range(numbers[0], numbers[0] + 1), q
    if len(numbers) in (2, 3) and (len(numbers) == 2 or numbers[2]) and len(range(*numbers)):
        return range(*numbers), q
    raise BadInput(
        f"--ids run {run.strip()!r}: {text.strip()!r} is not a position V or a range START:STOP[:STEP] "
        "(over /Q) with at least one position"
    )


def token_runs(text: str, axes: int):
    """Inline --ids: runs separated by ';', each one entry per axis, a position V or a range
    START:STOP[:STEP] (STOP excluded), either over /Q. A run is the row-major product of its
    ranges (a grid), or with a leading COUNT*, COUNT tokens along a line: every range, COUNT
    long, advances together and every position stays (text tokens at (k, k, k) or at 0).
    ((tokens, axes) int64 numerators, each axis's denominator: the largest of its entries')."""
    import numpy as np

    runs, denominators = [], [1] * axes
    for run in text.split(";"):
        count, star, body = run.rpartition("*")
        entries = [_run_entry(e, run) for e in body.split(",")]
        if len(entries) != axes:
            raise BadInput(f"--ids run {run.strip()!r} has {len(entries)} entries for {axes} axes")
        if star:
            try:
                n = int(count)
            except ValueError:
                raise BadInput(
                    f"--ids run {run.strip()!r}: {count.strip()!r} is not a count of tokens"
                ) from None
            if n < 1 or any(len(e) not in (1, n) for e, _ in entries):
                raise BadInput(
                    f"--ids run {run.strip()!r}: a line of {n} tokens takes ranges of {n} positions"
                )
        runs.append((n if star else math.prod(len(e) for e, _ in entries), star, entries))
        denominators = [max(d, q) for d, (_, q) in zip(denominators, entries)]
    total = sum(n for n, _, _ in runs)
    if total * axes * 16 > available_memory() // 2:
        raise BadInput(f"--ids: {total} tokens need more memory than there is room for")
    found = []
    for n, line, entries in runs:  # each axis over its denominator
        values = [
            np.array(e, dtype=np.int64) * (d // q) for (e, q), d in zip(entries, denominators)
        ]
        if line:
            found.append(np.stack([np.resize(v, n) for v in values], axis=1))
        else:
            grids = np.meshgrid(*values, indexing="ij")
            found.append(np.stack([g.reshape(-1) for g in grids], axis=1))
    numerators = np.concatenate(found)
    if np.abs(numerators).max() > MAX_POSITION:
        raise BadInput(
            "--ids: positions pass 2^32 (over their denominators), beyond pe-cli's exact positions"
        )
    return numerators, tuple(denominators)


def inline_runs(ids) -> str:
    """Whole positions of tokens, (tokens, axes), as inline --ids runs that token_runs reads
    back to the same rows: greedily, at each token the longer of a grid (row-major, each axis
    a run of steps of 1) and a line (every axis moving by its own constant step)."""
    import numpy as np

    ids = np.asarray(ids, dtype=np.int64)
    count, axes = ids.shape
    runs, i = [], 0
    while i < count:
        extents = [1] * axes
        for a in reversed(range(axes)):  # the grid: the block so far, repeated along axis a
            size = math.prod(extents)
            block = ids[i : i + size]
            step = np.zeros(axes, np.int64)
            step[a] = 1
            m = 1
            while i + size * (m + 1) <= count and np.array_equal(
                ids[i + size * m : i + size * (m + 1)], block + m * step
            ):
                m += 1
            extents[a] = m
        grid = math.prod(extents)
        steps = ids[i + 1] - ids[i] if i + 1 < count else np.zeros(axes, np.int64)
        n = 1
        if np.all(steps >= 0):
            while i + n < count and np.array_equal(ids[i + n] - ids[i + n - 1], steps):
                n += 1
        start = ids[i]
        if grid >= n:
            entries = [
                str(v) if e == 1 else f"{v}:{v + e}" for v, e in zip(start.tolist(), extents)
            ]
            runs.append(",".join(entries))
            i += grid
        else:
            entries = [
                str(v) if s == 0 else f"{v}:{v + n * s}" + (f":{s}" if s != 1 else "")
                for v, s in zip(start.tolist(), steps.tolist())
            ]
            runs.append(f"{n}*" + ",".join(entries))
            i += n
    return "; ".join(runs)


@lru_cache(maxsize=4)
def ids_axes(path: str) -> int:
    """How many position axes --ids gives each token, as ids_positions reads it: inline runs'
    entries (the first run's, after any COUNT*), a .npy file's columns from its header (0
    where it cannot be read: ids_positions says why)."""
    import numpy as np

    if _RUNS.fullmatch(path):
        return len(path.split(";")[0].rpartition("*")[2].split(","))
    try:
        shape = np.load(path, mmap_mode="r", allow_pickle=False).shape
    except (OSError, ValueError):
        return 0
    return shape[1] if len(shape) == 2 else 1


def ids_positions(path: str, axes: int) -> Positions:
    """An --ids file's positions (.npy, (tokens, axes), integers or floats), or inline runs
    (`token_runs`), each axis as integers over the power of two that makes them whole."""
    import numpy as np

    if _RUNS.fullmatch(path):
        numerators, denominators = token_runs(path, axes)
        return Positions(
            numerators,
            denominators,
            lambda: (numerators / np.array(denominators)).astype(np.float32),
        )
    values = positions_file(path, "--ids", axes)
    found = [binary_fractions(values[:, a], f"--ids {path}, axis {a}") for a in range(axes)]
    numerators = np.stack([n for n, _ in found], axis=1)
    return Positions(
        numerators,
        tuple(q for _, q in found),
        lambda: values.astype(np.float32),  # FLUX's ids.float()
    )
