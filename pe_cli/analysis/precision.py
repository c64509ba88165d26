"""What a serving dtype does to positions: `compare --rope-config CFG --dtype bfloat16`'s
precision view. A position held in bfloat16 keeps 8 significant bits (float16: 11), so past
256 (2048) neighbouring positions share a value: the model sees them as one. For each position
band: the share of adjacent positions the dtype cannot tell apart, and the largest error that
makes in the angles p * w_i and in the cos and sin values of the table (times its factor), were
the angles computed from the positions as the dtype holds them. The table's own rounding to the
dtype (a float32 cache cast to it) is what the engines' rows show.

Positions are rounded by torch (round to nearest, ties to even); the errors are computed in
float64 from the exact frequencies, block by block.
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


def held(positions: np.ndarray, dtype: str) -> np.ndarray:
    """Whole positions as the dtype holds them (float64 numbers)."""
    import torch

    return torch.from_numpy(positions.astype(np.float64)).to(getattr(torch, dtype)).double().numpy()


def precision(dtype: str, length: int, frequencies, factor: float = 1.0) -> Precision:
    """The precision view of positions 0 .. length - 1 held in `dtype`, for a table of these
    angular frequencies whose cos and sin are times `factor`."""
    w = np.asarray(frequencies, dtype=np.float64)
    edges = position_bands(length)
    stops = np.array([stop for _, stop in edges])
    merged = np.zeros(len(edges), dtype=np.int64)
    angle, value = np.zeros(len(edges)), np.zeros(len(edges))
    for start in range(0, length, _BLOCK):
        _block(start, length, dtype, w, abs(factor), stops, merged, angle, value)
    pairs = [max(0, min(stop, length - 1) - first) for first, stop in edges]
    bands = [
        Band(first, stop, merged[k] / pairs[k] if pairs[k] else 0.0, angle[k], value[k])
        for k, (first, stop) in enumerate(edges)
    ]
    fmt = FORMATS[dtype]  # the least position it rounds to inf: its largest value + half an ulp
    lost = fmt.max_value + 2.0 ** (math.floor(math.log2(fmt.max_value)) - fmt.precision)
    return Precision(
        dtype,
        length,
        int(merged.sum()) / max(1, length - 1),
        _run(length, dtype),
        bands,
        int(lost) if lost < length else None,
    )


def _block(start, length, dtype, w, factor, stops, merged, angle, value) -> None:
    """Positions start .. start + _BLOCK (and the pair over its end) into the bands' figures."""
    with np.errstate(invalid="ignore"):  # nan marks a band's positions held as inf
        p = np.arange(start, min(start + _BLOCK + 1, length), dtype=np.float64)  # one more: pairs
        h = held(p, dtype)
        same = np.flatnonzero(h[1:] == h[:-1])  # pairs (p, p + 1), by p's index
        np.add.at(merged, np.searchsorted(stops, p[same], side="right"), 1)
        own = min(_BLOCK, length - start)
        moved = np.flatnonzero(h[:own] != p[:own])
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
