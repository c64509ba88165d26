"""Gemma 4's proportional RoPE read back (transformers' _compute_proportional_rope_parameters):
its first k frequencies a power law whose exponents are 2i / head dim (the whole head dim, not
the 2k dims that turn, as a partial-rotary table's are), the other head dim / 2 - k zero (cos 1,
sin 0); partial_rotary_factor is what makes k."""

from __future__ import annotations

import math

from ...reading import plausible_bases
from .common import REAL_BASES, Fit

SHOWN = 0.1  # radians: a turn this large by the last row shows in any dtype's cos and sin


def proportional(dim: int, base: float, w, rows: int) -> list[Fit]:
    """Frequencies w (one per pair, w_0 = 1: no factor) that fall as base^(-2i/dim) over the
    whole head dim (to 1e-3), dim = 2 len(w), then stop: the last ones exactly 0, where the
    law would have turned the first of them SHOWN by the last of `rows` positions (a plain
    law's slowest columns, which a short half-precision table rounds to cos 1, are no zero
    tail; `rows` 0: a vector of frequencies, whose zeros are its own). At the round bases near
    the fitted one that a real model has; partial_rotary_factor the shortest decimal that turns
    k."""
    import numpy as np

    n, turning = len(w), int(np.count_nonzero(w))
    if not (dim == 2 * n and 2 <= turning < n and np.all(w[:turning] > 0)):
        return []
    if not math.isclose(w[0], 1, rel_tol=1e-3):  # a factor divides it: not read
        return []
    # every frequency that turns on the law (read to 1e-3, as scalings' are): a scaled law's
    # slowest columns, which a half dtype rounds to cos 1, end in zeros too (YaRN's in bfloat16)
    law = base ** (-2 * np.arange(turning) / dim)
    if np.max(np.abs(w[:turning] / law - 1)) > 1e-3:
        return []
    if rows and base ** (-2 * turning / dim) * (rows - 1) < SHOWN:
        return []
    # transformers' int(partial_rotary_factor * head_dim // 2) frequencies turn
    factors = (float(f"{2 * turning / dim:.{k}g}") for k in range(1, 8))
    factor = next((f for f in factors if int(f * dim // 2) == turning), None)
    if factor is None:
        return []
    rope = {"rope_type": "proportional", "partial_rotary_factor": factor}
    bases = [b for b in plausible_bases(base) if REAL_BASES[0] <= b <= REAL_BASES[1]]
    # the fit itself only where no round base is as near as a fit reads (scalings' _bases)
    if any(b != base and math.isclose(b, base, rel_tol=2e-5) for b in bases):
        bases.remove(base)
    return [Fit(dim, b, rope) for b in bases]
