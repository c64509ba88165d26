"""YaRN with its ramp the other way round, as litgpt's build_rope_cache computes it: the fastest
frequencies interpolated (divided by the factor) and the slowest kept. No frequency law fits
such a table (its ratios to a power law rise where YaRN's fall), so it is read here: the base
from the two fastest frequencies, which the factor divides alike, and the factor from the
fastest, then litgpt's float32 frequencies at the common original lengths, with and without
truncated bounds, kept where they are the table's to 1e-3. The rope parameters are
transformers' names; --variant litgpt builds their table."""

from __future__ import annotations

from ...reading import plausible_bases
from ..litgpt import inv_freq
from .common import ORIGINAL_LENGTHS, Fit
from .scalings import yarn


def reversed_yarn(w, resolved) -> list[Fit]:
    import numpy as np
    import torch

    n = len(w)
    if n < 2 or not (0 < w[1] < w[0] < 0.999):
        return []
    high = float((w[0] / w[1]) ** n)  # w_1 / w_0 = base**(-2/dim) at the interpolated end
    factors = {round(1 / w[0]), float(f"{1 / w[0]:.3g}")}
    found = []
    for base in plausible_bases(high) or [high]:
        for original in ORIGINAL_LENGTHS:
            for factor in sorted(f for f in factors if f > 1):
                for rope in yarn(original, float(factor))[:2]:  # truncated bounds, or not
                    mine, _ = inv_freq(torch, rope, 2 * n, base)
                    mine = mine.double().numpy()
                    error = float(np.max(np.abs(mine[resolved] / w[resolved] - 1)))
                    if error < 1e-3:
                        found.append((error, Fit(2 * n, base, rope)))
    found.sort(key=lambda item: item[0])
    return [fit for _, fit in found[:4]]
