"""What a serving dtype does to positions: `compare --rope-config CFG --dtype bfloat16`'s
precision view. A position held in bfloat16 keeps 8 significant bits (float16: 11), so past
256 (2048) neighbouring positions share a value: the model sees them as one. For each position
band: the share of adjacent positions the dtype cannot tell apart, and the largest error that
makes in the angles p * w_i and in the cos and sin values of the table (times its factor), were
the angles computed from the positions as the dtype holds them. The table's own rounding to the
dtype (a float32 cache cast to it) is what the engines' rows show.

Which positions a dtype holds as one is counted exactly, in whole numbers (a position is
rounded to nearest, ties to even); the errors are computed in float64 from the exact
frequencies, block by block. show --precision's view (serving.py) counts positions here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.dtypes import FORMATS
from .metrics import position_bands

_BLOCK = 1 << 14  # positions per block


@dataclass
class Band:
    first: int
    stop: int  # last position + 1
    merged: float  # share of adjacent pairs (p, p + 1) in the band with one value in the dtype
    angle: float  # max |w_i (held(p) - p)|
    value: float  # max |cos or sin of w_i held(p) - of w_i p|, times the factor


@dataclass
class Precision:
    dtype: str
    length: int  # positions 0 .. length - 1
    merged: float  # share of adjacent positions with one value, over them all
    run: tuple[int, int, int] | None  # the positions held as one power of two: first, last, it
    bands: list[Band]
    lost: int | None = None  # the first position the dtype holds as inf (float16: 65520)

    def to_json(self) -> dict:
        return {
            "dtype": self.dtype,
            "positions": self.length,
            "adjacent_positions_merged": self.merged,
            "positions_held_as_one": None
            if self.run is None
            else {"first": self.run[0], "last": self.run[1], "value": self.run[2]},
            "first_position_held_as_inf": self.lost,
            "bands": [
                {
                    "positions": [b.first, b.stop - 1],
                    "adjacent_positions_merged": b.merged,
                    "max_abs_angle_error": None if math.isinf(b.angle) else b.angle,
                    "max_abs_value_error": None if math.isnan(b.value) else b.value,
                }
                for b in self.bands
            ],
        }


@dataclass
class PositionBand:
    first: int  # positions first .. stop - 1
    stop: int
    distinct: int  # values the dtype holds them as
    merged: float  # share of pairs (p, p + 1), p in the band and p + 1 in the table, held as one


@dataclass
class Positions:
    """Positions first .. first + length - 1 held in a dtype, counted exactly."""

    dtype: str
    first: int
    length: int
    distinct: int  # values they are held as (inf, past float16's largest, one of them)
    first_collapse: int | None  # the least p with p and p + 1 one value
    merged: float  # share of the length - 1 adjacent pairs held as one
    bands: list[PositionBand]
    lost: int | None = None  # the first position held as inf (float16: 65520)

    def to_json(self) -> dict:
        return {
            "distinct_positions": self.distinct,
            "first_collapse": self.first_collapse,
            "adjacent_equal_share": self.merged,
            "first_position_held_as_inf": self.lost,
        }


def held_position(p: int, dtype: str) -> float:
    """Whole position p >= 0 as the dtype holds it (held's rule, for one position)."""
    return float(held(np.array([p]), dtype)[0])


def _exact_below(n: int, dtype: str) -> int:
    """How many whole numbers 0 .. n the dtype holds exactly."""
    fmt = FORMATS[dtype]
    n = min(n, int(fmt.max_value))
    if n < 0:
        return 0
    top = 1 << fmt.precision  # every whole number up to 2**precision
    if n < top:
        return n + 1
    count, e = top, fmt.precision
    while 1 << e <= n:  # [2**e, 2**(e + 1)) in steps of 2**(e + 1 - precision)
        count += (min(n, (2 << e) - 1) - (1 << e)) // (1 << (e + 1 - fmt.precision)) + 1
        e += 1
    return count


def distinct_positions(first: int, last: int, dtype: str) -> int:
    """How many values positions first .. last are held as: those held exactly, and the values
    first and last round to outside the range (rounding keeps the order)."""
    low, high = held_position(first, dtype), held_position(last, dtype)
    if low == high:
        return 1
    return (
        _exact_below(last, dtype) - _exact_below(first - 1, dtype) + (low < first) + (high > last)
    )


def first_collapse(first: int, last: int, dtype: str) -> int | None:
    """The least p in first .. last - 1 whose p + 1 the dtype holds as the same value."""
    start = max(first, 1 << FORMATS[dtype].precision)  # below, every position is held exactly
    for p in range(start, min(start + 4, last)):  # past it, every other pair at least is one
        if held_position(p, dtype) == held_position(p + 1, dtype):
            return p
    return None


def positions(dtype: str, first: int, length: int) -> Positions:
    """Positions first .. first + length - 1 held in `dtype`, and by band of rows."""
    last = first + length - 1

    def merged(a: int, b: int) -> int:  # pairs (p, p + 1) with a <= p < b held as one
        return (b - a) - (distinct_positions(a, b, dtype) - 1) if b > a else 0

    bands = []
    for start, stop in position_bands(length):
        a, b = first + start, first + min(stop, length - 1)
        bands.append(
            PositionBand(
                first + start,
                first + stop,
                distinct_positions(first + start, first + stop - 1, dtype),
                merged(a, b) / (b - a) if b > a else 0.0,
            )
        )
    lost = _first_inf(dtype)
    return Positions(
        dtype,
        first,
        length,
        distinct_positions(first, last, dtype),
        first_collapse(first, last, dtype),
        merged(first, last) / (length - 1) if length > 1 else 0.0,
        bands,
        max(lost, first) if lost <= last else None,
    )


def _first_inf(dtype: str) -> int:
    """The least whole position the dtype holds as inf: its largest value and half a step."""
    fmt = FORMATS[dtype]
    return int(fmt.max_value + 2.0 ** (math.floor(math.log2(fmt.max_value)) - fmt.precision))


def held(positions: np.ndarray, dtype: str) -> np.ndarray:
    """Whole positions (below 2**53) as the dtype holds them, as float64: each one's top
    significant bits, rounded to nearest, ties to even, in integers; inf past the dtype's
    largest value (float16: from 65520)."""
    fmt = FORMATS[dtype]
    p = np.asarray(positions).astype(np.int64)
    _, length = np.frexp(p.astype(np.float64))  # each one's bit length (exact below 2**53)
    shift = np.maximum(length - fmt.precision, 0).astype(np.int64)
    unit = np.left_shift(np.int64(1), shift)
    top, rest = np.divmod(p, unit)
    half = unit >> 1
    top += (shift > 0) & ((rest > half) | ((rest == half) & (top % 2 == 1)))
    found = np.left_shift(top, shift).astype(np.float64)
    found[found > fmt.max_value] = np.inf
    return found


def precision(dtype: str, length: int, frequencies, factor: float = 1.0) -> Precision:
    """The precision view of positions 0 .. length - 1 held in `dtype`, for a table of these
    angular frequencies whose cos and sin are times `factor`."""
    w = np.asarray(frequencies, dtype=np.float64)
    counted = positions(dtype, 0, length)
    stops = np.array([b.stop for b in counted.bands])
    angle, value = np.zeros(len(stops)), np.zeros(len(stops))
    for start in range(0, length, _BLOCK):
        _block(start, length, dtype, w, abs(factor), stops, angle, value)
    bands = [
        Band(b.first, b.stop, b.merged, angle[k], value[k]) for k, b in enumerate(counted.bands)
    ]
    return Precision(dtype, length, counted.merged, _run(length, dtype), bands, counted.lost)


def _block(start, length, dtype, w, factor, stops, angle, value) -> None:
    """Positions start .. start + _BLOCK into the bands' figures."""
    with np.errstate(invalid="ignore"):  # nan marks a band's positions held as inf
        p = np.arange(start, min(start + _BLOCK, length), dtype=np.float64)
        h = held(p, dtype)
        moved = np.flatnonzero(h != p)
        if not len(moved):
            return
        band = np.searchsorted(stops, p[moved], side="right")
        lost = ~np.isfinite(h[moved])  # past the dtype's largest value (float16: 65520 on)
        np.maximum.at(angle, band[lost], np.inf)
        np.maximum.at(value, band[lost], np.nan)  # no value: the position is not held
        moved, band = moved[~lost], band[~lost]
        at, to = np.outer(p[moved], w), np.outer(h[moved], w)
        wrong = np.maximum(np.abs(np.cos(to) - np.cos(at)), np.abs(np.sin(to) - np.sin(at)))
        np.maximum.at(angle, band, np.abs(to - at).max(axis=1, initial=0.0))
        np.maximum.at(value, band, wrong.max(axis=1, initial=0.0) * factor)


def _run(length: int, dtype: str) -> tuple[int, int, int] | None:
    """The positions below `length` the dtype holds as the largest power of two among them,
    where several are: (first, last, the power)."""
    if length < 2:
        return None
    power = 1 << (length - 1).bit_length() - 1
    near = np.arange(max(0, power // 2), min(length, 2 * power), dtype=np.float64)
    on = near[held(near, dtype) == power]
    if len(on) < 2:
        return None
    return int(on[0]), int(on[-1]), power
