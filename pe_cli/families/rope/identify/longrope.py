"""LongRoPE's factors read from a float32 table in Hugging Face's arithmetic (Phi-3, OmniGen):
each column's float32 frequencies read exactly from its values, then the shortest decimal
factors that give them."""

from __future__ import annotations

import math

from ....core.dtypes import FORMATS
from ....core.limits import one_thread
from ...reading import plausible_bases
from ..transformers import hf_part
from ..types import hf_exponents, longrope_attention, longrope_inv_freq
from .common import BASES, FACTORS, ORIGINAL_LENGTHS


def read_longrope(plane, part: str, attention: float, fitted: float, rows: int) -> list:
    """(rotary dim, base, LongRoPE parameters) of a float32 table in Hugging Face's arithmetic
    (Phi-3, OmniGen): the common (original length, factor) pairs whose attention factor it
    shows; each column's float32 frequencies read exactly from its values; each factor the
    shortest decimal whose float32 gives one of them, under the base (common, or round near
    the fit) whose factors are shortest. Every base explains the frequencies with some
    factors: the shortest ones are the config's. Empty where no column reading holds."""
    import torch

    n = plane.shape[1]
    tolerance = 1e-6 if part == "cos" else 2e-2  # a cos table's first row is the factor itself
    pairs: dict[float, list] = {}
    for original in ORIGINAL_LENGTHS:
        for factor in FACTORS:
            scale = longrope_attention(factor, original)
            if math.isclose(scale, attention, rel_tol=tolerance):
                pairs.setdefault(scale, []).append((original, factor))
    bases = list(dict.fromkeys([*plausible_bases(fitted), *BASES]))
    for scale in sorted(pairs, key=lambda s: abs(s - attention)):
        with one_thread(torch):
            read = _column_frequencies(torch, plane, part, scale)
            found = [
                (sum(digits for _, digits in factors), base, [f for f, _ in factors])
                for base in bases
                if (factors := _shortest_factors(torch, read, base, 2 * n)) is not None
            ]
        if not found:
            continue
        _, base, factors = min(found, key=lambda item: item[0])
        return [
            (
                2 * n,
                base,
                {
                    "rope_type": "longrope",
                    "original_max_position_embeddings": original,
                    "max_position_embeddings": int(original * factor),
                    "long_factor" if rows > original else "short_factor": tuple(factors),
                },
            )
            for original, factor in pairs[scale]
        ]
    return []


_FIT_ROUNDS = 16  # rounds of a column's fit, at most (each a least squares over more rows)


_READ_ROWS = 64  # a column's last rows, which tell its frequency best, try every candidate first


_WIDEST = (
    1 << 16
)  # float32 frequencies tried each side of a column's bounds' middle, at most, one by one


_SAMPLES = 1 << 12  # else frequencies sampled over its bounds, to find one that holds


_CHUNK = 1 << 22  # elements of candidate columns computed at once


_LARGEST = 0x7F7FFFFF  # float32's largest finite value, as bits


_TINIEST = 2.0**-149  # its smallest positive one


_HUGE = 1e38  # the largest factor tried


def _column_frequencies(torch, plane, part: str, scale: float) -> list | None:
    """Each column's float32 frequencies w that give its values bit for bit as Hugging Face
    computes them, (p * w).cos() * scale in float32: runs (first, last) of consecutive float32
    bit patterns; None where a column has none. Every value within its bounds
    (_frequency_bounds) is tried; where they are wide (a column that barely turns), a sample of
    them, narrowed around the one that misses fewest values until one holds, then its run is
    followed to its ends."""
    import numpy as np

    rows, n = plane.shape
    if rows < 2:
        return None
    positions = torch.arange(rows)[:, None].float()
    target = torch.from_numpy(plane.astype(np.float32))
    found = []
    for i in range(n):

        def misses(
            bits, first=0, column=i
        ):  # values from row `first` each frequency (float32 bits) misses
            if not len(bits):
                return np.zeros(0, np.int64)
            tried = torch.from_numpy(np.asarray(bits, np.int32).view(np.float32))
            at, values = positions[first:], target[first:, column, None]
            step = max(1, _CHUNK // len(at))
            return torch.cat(
                [
                    (hf_part(at * tried[None, k : k + step], part, scale) != values).sum(dim=0)
                    for k in range(0, len(tried), step)
                ]
            ).numpy()

        def holds(bits):  # the last rows, which tell most, first
            bits = np.asarray(bits)
            kept = misses(bits, max(0, rows - _READ_ROWS)) == 0
            kept[kept] = misses(bits[kept]) == 0
            return kept

        bounds = _frequency_bounds(plane[:, i], part, scale)
        if bounds is None or not bounds[1] < FORMATS["float32"].max_value:
            return None
        low, high = (int(np.float32(b).view(np.int32)) for b in bounds)
        low, high = max(1, low - 1), min(_LARGEST, high + 1)
        if high - low <= 2 * _WIDEST:
            bits = np.arange(low, high + 1)
            good = bits[holds(bits)]
            if not len(good):
                return None
            breaks = np.flatnonzero(np.diff(good) > 1)
            found.append(
                list(
                    zip(
                        good[np.r_[0, breaks + 1]].tolist(),
                        good[np.r_[breaks, len(good) - 1]].tolist(),
                    )
                )
            )
            continue
        while True:
            bits = np.unique(np.linspace(low, high, _SAMPLES).astype(np.int64))
            missed = misses(bits)
            if not missed.min() == 0 and len(bits) < _SAMPLES:  # every value between tried
                return None
            if missed.min() == 0:
                break
            best = int(np.argmin(missed))
            low, high = int(bits[max(best - 2, 0)]), int(bits[min(best + 2, len(bits) - 1)])
        seed = int(bits[np.flatnonzero(missed == 0)[np.count_nonzero(missed == 0) // 2]])
        found.append([(_run_end(holds, seed, -1), _run_end(holds, seed, 1))])
    return found


def _run_end(holds, seed: int, direction: int) -> int:
    """The last float32 (as bits) from `seed` in `direction` before one that fails `holds`:
    steps doubling until one fails, then halving back."""
    good, step = seed, 1
    while True:
        bad = min(max(good + direction * step, 1), _LARGEST)
        if bad == good or not holds([bad])[0]:
            break
        good, step = bad, step * 2
    if bad == good:
        return good
    while abs(bad - good) > 1:
        middle = (good + bad) // 2
        if holds([middle])[0]:
            good = middle
        else:
            bad = middle
    return good


def _frequency_bounds(column, part: str, scale: float) -> tuple[float, float] | None:
    """Bounds on a column's frequency w: each row's value (give or take 3 ulps: the float32 cos
    or sin and the product with the factor) bounds its angle, on the branch a least squares fit
    of the rows' angles chooses (unwrapped by the fit so far, over 8 times the rows each round,
    from the first row whose angle is past half a radian), and the angle, p * w rounded to
    float32, bounds w. A row at a peak of cos or sin, whose branch its value cannot tell,
    bounds it from both sides of the peak. None where the bounds cross."""
    import numpy as np

    rows = len(column)
    value = column / scale
    spread = 3 * np.spacing(np.abs(column).astype(np.float32)).astype(np.float64) / scale
    inverse, limits = (
        (np.arccos, (0.0, np.pi)) if part == "cos" else (np.arcsin, (-np.pi / 2, np.pi / 2))
    )
    angle = inverse(np.clip(value, -1, 1))
    ends = [
        inverse(np.clip(value + d, -1, 1)) for d in (-spread, spread)
    ]  # the principal angle's bounds
    if part == "cos":  # low first: arccos falls as the value rises
        ends.reverse()
    branches = (angle, -angle) if part == "cos" else (angle, np.pi - angle)
    k = np.arange(rows, dtype=float)
    slope = np.sqrt(1 - np.clip(value, -1, 1) ** 2)
    # the first fit: the first principal angle past half a radian (before it none wraps), over
    # its position, or the last angle where none is
    past = np.flatnonzero(np.abs(angle[1:]) >= 0.5)
    start = int(past[0]) + 1 if len(past) else rows - 1
    w = float(np.abs(angle[start]) / start)
    used = int(min(rows, 8 * start))
    for _ in range(_FIT_ROUNDS):  # over every row, until the branches chosen hold still
        predicted = k * w
        near = [b + 2 * np.pi * np.round((predicted - b) / (2 * np.pi)) for b in branches]
        first = np.abs(near[0] - predicted) <= np.abs(near[1] - predicted)
        theta = np.where(first, near[0], near[1])
        weight = np.where(k < used, slope**2 * k, 0.0)
        total = float(np.sum(weight * k))
        if (
            not total > 0
        ):  # no value off a peak: nothing to fit, and (the angles small) no branch to choose
            break
        w, last = float(np.sum(weight * theta) / total), w
        if used == rows and w == last:
            break
        used = min(rows, used * 8)
    sign = np.where(first, 1.0, -1.0)  # the angle rises with the principal one on the first branch
    low, high = np.sort(
        [theta + sign * (ends[0] - angle), theta + sign * (ends[1] - angle)], axis=0
    )
    # a value that may be at a peak of cos or sin (the principal angle's bound reaches an end of
    # its range): the angle is within the far bound's distance of the peak, on either side
    for peak, reached, reach in (
        (limits[0], ends[0] <= limits[0], ends[1] - limits[0]),
        (limits[1], ends[1] >= limits[1], limits[1] - ends[0]),
    ):
        centre = peak + 2 * np.pi * np.round((theta - peak) / (2 * np.pi))
        low, high = np.where(reached, centre - reach, low), np.where(reached, centre + reach, high)
    margin = 2.0**-22  # the float32 angle: p * w within half an ulp
    bounds = (
        max(float(np.max(low[1:] / k[1:])) * (1 - margin), _TINIEST),
        float(np.min(high[1:] / k[1:])) * (1 + margin),
    )
    return bounds if bounds[0] <= bounds[1] else None


def _shortest_factors(torch, read, base: float, dim: int) -> list | None:
    """(factor, its significant digits) per column under `base`: the decimal with fewest
    digits (then the middle one of those) whose float32, in 1 / (factor * base**(2i/dim)),
    gives one of the column's frequencies read; None where a column has none."""
    import numpy as np

    if read is None:
        return None
    powers = base ** hf_exponents(torch, dim)
    found = []
    for runs, power in zip(read, powers):
        starts, stops = (np.array(ends, np.int64) for ends in zip(*runs))
        w = np.array([starts[0], stops[-1]], np.int32).view(np.float32).astype(np.float64)
        low, high = sorted(1 / (w * float(power)))  # (a column that never turns: up to infinity)
        low, high = (
            low * (1 - 2**-20),
            min(high * (1 + 2**-20), _HUGE),
        )  # and the rounding of factor * power
        for digits in range(1, 10):  # 9 significant digits tell every float32 apart
            decimals = []
            for e in sorted({math.floor(math.log10(low)), math.floor(math.log10(high))}):
                shift = digits - 1 - e  # the decimals k / 10**shift, k of `digits` digits
                first = max(math.ceil(low * 10.0**shift), 10 ** (digits - 1))
                last = min(math.floor(high * 10.0**shift), 10**digits - 1)
                if last - first >= _SAMPLES:  # the middle ones
                    first = (first + last - _SAMPLES) // 2
                    last = first + _SAMPLES - 1
                ks = np.arange(first, last + 1, dtype=np.float64)
                decimals.append(ks / 10.0**shift if shift >= 0 else ks * 10.0**-shift)
            decimals = np.concatenate(decimals)
            made = longrope_inv_freq(torch.from_numpy(decimals.astype(np.float32)), power).numpy()
            at = made.view(np.int32).astype(np.int64)
            run = np.searchsorted(starts, at, side="right") - 1
            hits = decimals[(run >= 0) & (at <= stops[np.maximum(run, 0)])]
            if len(hits):
                found.append((float(f"{hits[len(hits) // 2]:.{digits}g}"), digits))
                break
        else:
            return None
    return found
