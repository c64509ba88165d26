"""The rope parameters that explain fitted frequencies: each rope type's fit, registered by its
name in types.ROPE_TYPES (a plain power law, dynamic NTK's grown base, linear scaling, the
llama3 and YaRN settings among common values whose exact frequencies fit, else LongRoPE's
factors, read from the table)."""

from __future__ import annotations

import math

from ....core.dtypes import FORMATS
from ...reading import plausible_bases
from ..types import rope_frequencies
from .common import BASES, FACTORS, ORIGINAL_LENGTHS
from .longrope import read_longrope


def _default(dim: int, base: float, w, rows: int) -> list:
    """A power law from w_0 = 1 at the round bases near the fitted one."""
    return [(dim, b, {}) for b in plausible_bases(base) or [base]]


def _dynamic(dim: int, base: float, w, rows: int) -> list:
    """Dynamic NTK settings among common values whose grown base (for a table of `rows`
    positions, longer than max_position_embeddings) is the fitted one."""
    if dim < 3:
        return []
    found = []
    for original in ORIGINAL_LENGTHS:
        if original >= rows:
            continue
        for factor in FACTORS:
            grown = (factor * rows / original - (factor - 1)) ** (dim / (dim - 2))
            for b in BASES:
                if math.isclose(b * grown, base, rel_tol=1e-4):
                    found.append(
                        (
                            dim,
                            b,
                            {
                                "rope_type": "dynamic",
                                "factor": factor,
                                "max_position_embeddings": original,
                            },
                        )
                    )
    return found


def _linear(dim: int, base: float, w, rows: int) -> list:
    """w_0 = 1/factor: linear scaling, the roundest factors near the fit."""
    factor = 1 / float(w[0])
    factors = sorted({float(f"{factor:.{k}g}") for k in (1, 2, 3, 4, 6)})
    return [
        (dim, b, {"rope_type": "linear", "factor": f})
        for b in plausible_bases(base) or [base]
        for f in factors
        if math.isclose(f, factor, rel_tol=1e-3)
    ]


def _llama3(original: int, factor: float) -> list[dict]:
    return [
        {
            "rope_type": "llama3",
            "factor": factor,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": original,
        }
    ]


def _yarn(original: int, factor: float) -> list[dict]:
    return [
        {
            "rope_type": "yarn",
            "factor": factor,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "original_max_position_embeddings": original,
            **extra,
        }
        for extra in ({}, {"truncate": False}, {"mscale": 1.0, "mscale_all_dim": 1.0})
    ]


# How each rope type is read from a table's fitted frequencies, by its name in ROPE_TYPES: a
# power law from w_0 = 1 (PLAIN: (dim, base, w, rows) -> candidates) or from w_0 = 1/factor
# (DIVIDED); the frequency-dependent scalings tried at common original lengths and factors
# (TRIED: (original, factor) -> rope parameters); the factors read from a float32 table's
# columns where no trial fits (READ: (plane, part, attention, base, rows) -> candidates).
PLAIN = {"default": _default, "dynamic": _dynamic}
DIVIDED = {"linear": _linear}
TRIED = {"llama3": _llama3, "yarn": _yarn}
READ = {"longrope": read_longrope}
NOT_FITTED = {
    "proportional": "its zero tail reads as frequencies the table does not resolve: the power "
    "law of its rotated head is proposed instead",
    "axial": "a vision encoder's 2-D table: identification reads 1-D and diffusers' multi-axis "
    "tables",
}


def scalings(
    plane,
    dtype: str,
    w,
    resolved,
    attention: float,
    part: str,
    rows: int,
    notes: list,
    search=lambda: [],
) -> list:
    """(rotary dim, base, rope parameters) that explain fitted frequencies w (the `resolved`
    ones to 1e-3) and the attention factor: plain, linear, or the llama3 and YaRN settings
    among common values whose exact frequencies fit; else LongRoPE's factors, read from the
    plane in transformers' float32 arithmetic, or by `search` in each library's. The dim is
    2n, or 2n - 1 (an odd rotary dim: transformers' arange(0, dim, 2) still gives n
    frequencies), whichever power law the frequencies follow. Empty, with a note, when none
    does."""
    import numpy as np

    n = len(w)
    fits = []
    for dim in (2 * n, 2 * n - 1) if n > 1 else (2 * n,):
        if n >= 2 and w[1] > 0 and w[0] > w[1]:
            base = float((w[0] / w[1]) ** (dim / 2))  # w_1 / w_0 = base**(-2/dim)
        else:
            base = 10000.0
        plain = w[0] * base ** (-2 * np.arange(n) / dim)
        fits.append((dim, base, w[resolved] / plain[resolved]))
    # both dims give the same power law (base^(1/dim) is what the table shows): the plain and
    # linear candidates are tried with each, the roundest base wins; scaled ones with 2n
    dim, base, ratio = fits[0]
    # a sin table's peak only bounds its factor; a half table's row 0 holds it rounded
    tolerance = max(1e-3 if part == "cos" else 2e-2, FORMATS[dtype].epsilon / 2)
    if len(ratio) == 0 or np.allclose(ratio, 1, rtol=1e-3):
        found = []
        for dim, base, _ in fits:
            fit = PLAIN if math.isclose(w[0], 1, rel_tol=1e-4) else DIVIDED
            for read in fit.values():
                found += read(dim, base, w, rows)
        return found
    # the lowest frequencies are divided by the whole factor when the table resolves them
    fitted = {float(f"{1 / ratio.min():.{k}g}") for k in (1, 2)}
    trials = [
        rope
        for original in ORIGINAL_LENGTHS
        for factor in sorted(set(FACTORS) | fitted)
        for tried in TRIED.values()
        for rope in tried(original, factor)
    ]
    found = []
    for b in plausible_bases(base) or [base]:
        for rope in trials:
            exact, factor = rope_frequencies(dim, b, rope, rows)
            if part != "angle" and not math.isclose(float(factor), attention, rel_tol=tolerance):
                continue
            mine = np.array([float(x) for x in exact])
            error = float(np.max(np.abs(mine[resolved] / w[resolved] - 1)))
            if error < 1e-3:
                found.append((error, b, rope))
    if not found:
        read = (
            [c for reader in READ.values() for c in reader(plane, part, attention, base, rows)]
            if dtype == "float32" and part != "angle"
            else []
        )
        if not read and part != "angle":  # factors in another library's arithmetic
            read = search()
        if not read:
            notes.append(
                f"rotary frequencies follow base {base:.6g} at the high end and are divided by up to "
                f"{1 / ratio.min():.4g} at the low end: a frequency-dependent scaling that no common "
                "llama3 or YaRN setting fits, nor LongRoPE factors read in any library's arithmetic"
                + (
                    ""
                    if dtype == "float32"
                    else f" (no factors within the bounds its {dtype} values allow make every "
                    "column)"
                )
                + "; give its --rope parameters to compare exactly"
            )
        return read
    found.sort(key=lambda item: item[0])
    return [(dim, b, rope) for _, b, rope in found[:4]]
