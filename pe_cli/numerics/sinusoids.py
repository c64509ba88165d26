"""Correctly rounded sin(p*w_i) and cos(p*w_i) planes for lists of integer positions, from a
table's exact frequencies, and the array work a family's exact rows need (numpy on the CPU,
torch on other devices).

`Sinusoids` holds what is computed once per table (turns, their chunks, the factor every value
is multiplied by); `Workspace` is what a family's `exact_rows` is handed: planes for positions
and the few array operations that differ between numpy and torch.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..core.errors import BadInput
from . import exact
from .frequencies import DIGITS

_TINY = 2.0**-100  # kernel values this small are looked at again in decimal
_ZERO = Decimal(10) ** -50
_MEAN_ERROR = 2.0**-84  # the double-double means' absolute error bound (their terms': about 2**-88)
# The kernel's absolute error in sin and cos (the turns cut at 2**-126, times positions below
# 2**32: 2**-94 turns), which near a zero of sin, or for the tiny angles of timesteps over
# 2**-40, is more than its relative bound: elements this near a midpoint are recomputed
_ABSOLUTE_ERROR = 2.0**-88


class Sinusoids:
    """Per-table constants of the exact kernel: the frequencies in turns, their chunks, and
    the factor every sin and cos is multiplied by (RoPE's attention factor; None for 1)."""

    def __init__(self, frequencies: list[Decimal], scale: Decimal = Decimal(1)):
        self.frequencies = frequencies
        self.turns = exact.turns(frequencies)
        self.chunks = exact.chunk_table(self.turns)
        self.scale = None if scale == 1 else scale
        self.scale_dd = None if self.scale is None else exact.dd(self.scale)

    def sin_cos_dd(self, positions) -> np.ndarray:
        """sin and cos as double-doubles for a list of positions: (4, rows, n) planes, sin hi,
        cos hi, sin lo, cos lo (the C kernel's tables), each within about 2**-88."""
        column = np.asarray(positions, dtype=np.float64)[:, None]
        (sin_hi, sin_lo), (cos_hi, cos_lo) = exact.sin_cos_dd(np, column, self.chunks)
        return np.ascontiguousarray(np.stack([sin_hi, cos_hi, sin_lo, cos_lo]))

    def steps_dd(self, step: int, count: int) -> np.ndarray:
        """sin_cos_dd of positions k*step for k < count, quicker: rows k < r and k = m*r
        (r*r >= count) computed, every other row one double-double rotation of two of them."""
        r = math.isqrt(count - 1) + 1
        low = self.sin_cos_dd([k * step for k in range(r)])
        high = self.sin_cos_dd([m * r * step for m in range(-(-count // r))])
        rows = exact.rotate_dd(high[:, :, None, :], low[:, None, :, :])  # (4, m, k, n)
        _, m, k, n = rows.shape
        return np.ascontiguousarray(rows.reshape(4, m * k, n)[:, :count])

    def true_value(self, position: int, index: int, plane: int) -> Fraction:
        """sin (plane 0) or cos (plane 1) of position * w_index, times the scale, to about 60
        digits, as an exact rational for rounding. Below 1e-50 it is 0: the angle is then a
        multiple of pi/2 exactly (frequencies that are rational multiples of pi, as LTX-Video's
        (pi/2) 10^m), since otherwise p * w stays some 1e-10 from one for every p below 2^32."""
        value = exact.decimal_sin_cos(position, self.turns[index])[plane]
        if abs(value) < _ZERO:
            return Fraction(0)
        if self.scale is not None:
            value = value * self.scale
        return Fraction(value)

    def _true_mean(self, block, index: int, plane: int, unit: bool) -> Fraction:
        """The mean of sin (plane 0) or cos over a block of positions, as exactly as true_value's
        (below 1e-50 it is 0: a sum that cancels, as sin at -p and p); unit: over the length of
        the (cos, sin) mean, to 60 digits."""

        def mean(plane):
            found = sum(self.true_value(int(p), index, plane) for p in block) / len(block)
            return Fraction(0) if abs(found) < _ZERO else found

        if not unit:
            return mean(plane)
        with localcontext() as ctx:
            ctx.prec = 70
            sin, cos = (Decimal(m.numerator) / Decimal(m.denominator) for m in (mean(0), mean(1)))
            length = (sin * sin + cos * cos).sqrt()
            if length < _ZERO:
                raise BadInput(
                    "rope parameter pool_unit: a block's mean of cos and sin is 0, which has no "
                    "length to divide by"
                )
            return Fraction((sin, cos)[plane] / length)

    def planes(self, xp, positions: list[int], dtype: str, device: str = "cpu", chunks=None):
        """sin and cos (times the scale) for integer positions, every frequency, each element
        correctly rounded to dtype (float64 arrays on dtype's grid)."""
        chunks = self.chunks if chunks is None else chunks
        if xp is np:
            column = np.array(positions, dtype=np.float64)[:, None]
        else:
            column = xp.tensor(positions, dtype=xp.float64, device=device)[:, None]
        error = _ABSOLUTE_ERROR * (1.0 if self.scale is None else float(self.scale))
        if dtype == "float64":
            results = []
            for hi, lo in exact.sin_cos_dd(xp, column, chunks):
                if self.scale is not None:
                    hi, lo = exact.dd_mul(hi, lo, *self.scale_dd)
                results.append(exact.decide_float64(xp, hi, lo, error))
        else:
            values = exact.sin_cos(xp, column, chunks)
            if self.scale is not None:
                values = [v * self.scale_dd[0] for v in values]
            results = [exact.round_to(xp, v, dtype, error) for v in values]
        planes = []
        for plane, (rounded, suspect) in enumerate(results):
            # an exact zero the kernel misses by its error (not zeros it gets: position or
            # frequency 0, which the absolute error bound does not make suspect either)
            suspect = (suspect | (xp.abs(rounded) < _TINY)) & (rounded != 0)
            _fix_suspects(
                xp,
                rounded,
                suspect,
                dtype,
                lambda i, j, plane=plane: self.true_value(positions[i], j, plane),
            )
            planes.append(rounded)
        return planes

    def means(self, xp, blocks, dtype: str, device: str = "cpu", chunks=None, unit: bool = False):
        """sin and cos averaged over each row of `blocks` ((rows, k) integer positions: a pooled
        table's block along one axis), every frequency, each mean correctly rounded to dtype
        (float64 arrays on dtype's grid). unit: each (cos, sin) mean over its length (AnyFlow-
        FAR's renormalised pooling). Double-double sums over k, whose error is absolute (a sum
        may cancel): the means they cannot decide are computed exactly."""
        chunks = self.chunks if chunks is None else chunks
        rows, k = blocks.shape
        column = np.asarray(blocks, dtype=np.float64).reshape(-1, 1)
        if xp is not np:
            column = xp.from_numpy(column).to(device)
        means = []
        for hi, lo in exact.sin_cos_dd(xp, column, chunks):
            hi, lo = hi.reshape(rows, k, -1), lo.reshape(rows, k, -1)
            total = hi[:, 0], lo[:, 0]
            for j in range(1, k):
                total = exact.dd_add(xp, *total, hi[:, j], lo[:, j])
            means.append(exact.dd_divide(*total, float(k), 0.0))
        error = _MEAN_ERROR
        if unit:  # over sqrt(sin^2 + cos^2), whose own error divides the means' too
            (s_hi, s_lo), (c_hi, c_lo) = means
            length = exact.dd_sqrt(
                xp,
                *exact.dd_add(
                    xp, *exact.dd_mul(s_hi, s_lo, s_hi, s_lo), *exact.dd_mul(c_hi, c_lo, c_hi, c_lo)
                ),
            )
            means = [exact.dd_divide(*m, *length) for m in means]
            error = xp.where(
                length[0] > 0, _MEAN_ERROR * 4 / xp.where(length[0] > 0, length[0], 1.0), xp.inf
            )
        planes = []
        for plane, (mean_hi, mean_lo) in enumerate(means):
            if self.scale is not None:
                mean_hi, mean_lo = exact.dd_mul(mean_hi, mean_lo, *self.scale_dd)
            if dtype == "float64":
                rounded, suspect = exact.decide_float64(xp, mean_hi, mean_lo, error)
            else:
                rounded, suspect = exact.round_to(xp, mean_hi, dtype, error)
            _fix_suspects(
                xp,
                rounded,
                suspect,
                dtype,
                lambda i, j, plane=plane: self._true_mean(blocks[i], j, plane, unit),
            )
            planes.append(rounded)
        return planes

    def angles(self, xp, positions: list[int], dtype: str, device: str = "cpu"):
        """The angles p * w themselves for integer positions, every frequency, each correctly
        rounded to dtype (a float64 array on dtype's grid): each product a double-double, exact
        in p * hi; those it cannot decide rounded from the exact product."""
        his, los = (np.array(v) for v in zip(*(exact.dd(w) for w in self.frequencies)))
        column = np.array(positions, dtype=np.float64)[:, None]
        if xp is not np:
            column, his, los = (xp.from_numpy(a).to(device) for a in (column, his, los))
        hi, lo = exact.product_dd(xp, column, (his, los))
        rounded, suspect = (
            exact.decide_float64(xp, hi, lo)
            if dtype == "float64"
            else exact.round_to(xp, hi, dtype)
        )
        _fix_suspects(
            xp, rounded, suspect, dtype, lambda i, j: positions[i] * Fraction(self.frequencies[j])
        )
        return rounded


@lru_cache(maxsize=64)  # a table of float32 timesteps has a few dozen denominators
def _over(frequencies: tuple, scale, denominator: int) -> Sinusoids:
    """The sinusoids of these frequencies over a power of two (positions k / denominator)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Sinusoids([w / denominator for w in frequencies], scale or Decimal(1))


def _fix_suspects(xp, rounded, suspect, dtype: str, true_value) -> None:
    """Recompute, exactly, the few elements whose rounding the float64 value cannot decide:
    true_value(row, column) is the element as an exact rational."""
    if xp is np:
        rows, cols = np.nonzero(suspect)
        rows_h, cols_h = rows, cols
    else:
        rows, cols = xp.nonzero(suspect, as_tuple=True)
        rows_h, cols_h = rows.cpu().numpy(), cols.cpu().numpy()
    if len(rows_h) == 0:
        return
    values = [
        exact.round_fraction(true_value(i, j), dtype)
        for i, j in zip(rows_h.tolist(), cols_h.tolist())
    ]
    if xp is np:
        rounded[rows, cols] = values
    else:
        rounded[rows, cols] = xp.tensor(values, dtype=rounded.dtype, device=rounded.device)


def round_decimals(values, dtype: str) -> np.ndarray:
    """Exact numbers (Decimal or Fraction) correctly rounded to dtype, as one float64 row."""
    return np.array([[exact.round_fraction(Fraction(v), dtype) for v in values]])


class Workspace:
    """What a family's exact rows are computed with: planes of its sinusoids for positions, on
    numpy (CPU) or torch (any device), and zeroed tables on the same.
    Every array is float64 holding values on the output dtype's grid."""

    def __init__(self, xp, device: str, dtype: str, sinusoids: Sinusoids | None):
        self.xp, self.device, self.dtype, self.sinusoids = xp, device, dtype, sinusoids
        self.numpy = xp is np
        self.chunks = None
        if sinusoids is not None:
            self.chunks = (
                sinusoids.chunks if self.numpy else xp.from_numpy(sinusoids.chunks).to(device)
            )

    def planes(self, positions: list[int], denominator: int = 1):
        """Correctly rounded (sin, cos) planes, (len(positions), frequencies) each, at the
        positions k / denominator (a power of two: whole k at the frequencies over it)."""
        if denominator == 1:
            return self.sinusoids.planes(self.xp, positions, self.dtype, self.device, self.chunks)
        over = _over(tuple(self.sinusoids.frequencies), self.sinusoids.scale, denominator)
        chunks = over.chunks if self.numpy else self.xp.from_numpy(over.chunks).to(self.device)
        return over.planes(self.xp, positions, self.dtype, self.device, chunks)

    def means(self, blocks, unit: bool = False):
        """Correctly rounded means of (sin, cos) over each row of blocks, (rows, frequencies)
        each (unit: over their length)."""
        return self.sinusoids.means(self.xp, blocks, self.dtype, self.device, self.chunks, unit)

    def angles(self, positions: list[int]):
        """The correctly rounded angles p * w, (len(positions), frequencies)."""
        return self.sinusoids.angles(self.xp, positions, self.dtype, self.device)

    def rounded(self, values: list[float]):
        """Exact float64 values (positions k / 2^m) rounded once to the dtype, as a column."""
        column = np.array(values, dtype=np.float64)
        if not self.numpy:
            column = self.xp.from_numpy(column).to(self.device)
        return exact.round_to(self.xp, column, self.dtype)[0]

    def columns(self, planes, axis, frequency):
        """Per-axis planes, (rows, frequencies) each, as (rows, columns): column c from plane
        axis[c]'s frequency[c] (a multi-axis table's layout), on the workspace's device."""
        if self.numpy:
            return np.stack(planes, axis=1)[:, axis, frequency]
        at = [self.xp.as_tensor(np.asarray(k), device=self.device) for k in (axis, frequency)]
        return self.xp.stack(list(planes), dim=1)[:, at[0], at[1]]

    def zeros(self, rows: int, cols: int):
        if self.numpy:
            return np.zeros((rows, cols))
        return self.xp.zeros((rows, cols), dtype=self.xp.float64, device=self.device)
