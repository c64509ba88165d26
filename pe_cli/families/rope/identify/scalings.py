"""The rope parameters that explain fitted frequencies: each rope type's fit, registered by its
name in types.ROPE_TYPES (a plain power law, dynamic NTK's grown base, proportional RoPE's
zero tail (proportional.py), linear scaling, the llama3 and YaRN settings among common values
whose exact frequencies fit, else LongRoPE's factors, read from the table: factors.py)."""

from __future__ import annotations

import math

from ....core.dtypes import FORMATS
from ...reading import plausible_bases, round_numbers
from ..types import rope_frequencies
from .common import BASES, FACTORS, ORIGINAL_LENGTHS, REAL_BASES, Fit
from .factors import library_factors
from .proportional import proportional


def _default(dim: int, base: float, w, rows: int) -> list:
    """A power law from w_0 = 1 at the round bases near the fitted one (the fit where none is
    within _FIT_NOISE), and at the NTK-by-base ones it may be (_ntk_bases)."""
    return [Fit(dim, b, {}) for b in plausible_bases(base, _FIT_NOISE) or [base]] + [
        Fit(dim, b, {}, law) for b, law in _ntk_bases(dim, base)
    ]


def _ntk_bases(dim: int, base: float) -> list[tuple[float, str]]:
    """NTK-aware scaling by the base (bloc97's, as transformers' dynamic NTK computes its grown
    base): b * a**(dim / (dim - 2)) for a common base b and a round factor a (up to 3
    significant digits, 1 < a <= 1024) that give the fitted base to _NTK_CLOSE, written as
    Python's float arithmetic writes it, with the law in words."""
    if dim < 3:
        return []
    found = []
    for b in BASES:
        grown = (base / b) ** ((dim - 2) / dim)
        if not 1 < grown <= 1024:
            continue
        for digits in (1, 2, 3):
            factor = float(f"{grown:.{digits}g}")
            ntk = b * factor ** (dim / (dim - 2))
            if factor > 1 and math.isclose(ntk, base, rel_tol=_NTK_CLOSE):
                found.append((ntk, f"NTK-by-base {b:g} * {factor:g}^({dim}/{dim - 2})"))
                break
    return found


_NTK_CLOSE = 2e-6  # a float32 table's least-squares base is read to about 1e-7


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
                    rope = {"rope_type": "dynamic", "factor": factor}
                    found.append(Fit(dim, b, {**rope, "max_position_embeddings": original}))
    return found


def _linear(dim: int, base: float, w, rows: int) -> list:
    """w_0 = 1/factor: linear scaling, the roundest factors near the fit."""
    return [
        Fit(dim, b, {"rope_type": "linear", "factor": f})
        for b in plausible_bases(base, _FIT_NOISE) or [base]
        for f in sorted(round_numbers(1 / float(w[0]), (1, 2, 3, 4, 6), 1e-3))
    ]


_FIT_NOISE = 2e-5  # a float32 table's least-squares base is near 1e-7 of its round one


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


def yarn(original: int, factor: float) -> list[dict]:
    """YaRN's settings at an original length and factor, transformers' defaults for the rest:
    with its truncated bounds, without them, and with mscale and mscale_all_dim 1."""
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
# zero tail after a power law, which no other type has (TAILED: (dim, base, w, rows) -> Fits,
# read first); a power law from w_0 = 1 (PLAIN, as TAILED) or from w_0 = 1/factor
# (DIVIDED); the frequency-dependent scalings tried at common original lengths and factors
# (TRIED: (original, factor) -> rope parameters); the factors read from a table's columns in
# each library's arithmetic where no trial fits (READ: (view, plane, convention, part,
# attention, base, length, notes) -> (dim, base, rope) each; run by the `search` scalings is
# given, which has the table).
TAILED = {"proportional": proportional}
PLAIN = {"default": _default, "dynamic": _dynamic}
DIVIDED = {"linear": _linear}
TRIED = {"llama3": _llama3, "yarn": yarn}
READ = {"longrope": library_factors}
NOT_FITTED = {
    "axial": "a vision encoder's 2-D table: identification reads 1-D and diffusers' multi-axis "
    "tables",
    "ntk_alpha": "HunYuan's table is the original law at base theta * alpha**(dim/(dim-2)): it "
    "is read as that law, at that base",
}


def scalings(
    dtype: str,
    w,
    resolved,
    attention: float,
    part: str,
    rows: int,
    notes: list,
    search=lambda base: [],
) -> list[Fit]:
    """The rope settings (Fit) that explain fitted frequencies w (the `resolved` ones to 1e-3)
    and the attention factor: proportional where they end in zeros (a zero tail), plain
    (at round bases, or NTK-by-base), linear, or the llama3 and YaRN settings among common
    values whose exact frequencies fit; else LongRoPE's factors, read by `search` (given the
    base fitted) in each library's arithmetic.
    The dim is 2n, or 2n - 1 where that reads a round base (an odd rotary dim, as GLM-4-MoE's
    int(42 * 0.5) = 21: transformers' arange(0, dim, 2) still gives n frequencies). Where
    nothing fits, a note says what the frequencies do, and the nearest plain power law at a
    real model's base is the one Fit, marked nearest. `part` inv_freq or angle: no attention
    factor to check."""
    # a zero tail: its law's base fitted to every frequency that turns (a half dtype's two
    # highest tell it too roughly for the check below); the other fits are proposed beside it
    dims = rotary_dims(w, resolved, dtype)
    tailed = [f for d, b in dims for read in TAILED.values() for f in read(d, b, w, rows)]
    return tailed + _fits(dtype, w, resolved, attention, part, rows, notes, search)


def _fits(dtype, w, resolved, attention, part, rows, notes, search) -> list[Fit]:
    """scalings' fits of every rope type but those read from a zero tail (TAILED)."""
    import numpy as np

    n = len(w)
    # the base at dim 2n from the two highest frequencies, which every scaling keeps
    with np.errstate(over="ignore"):  # a ratio read from broken rows may overflow: no base
        high = float((w[0] / w[1]) ** n) if n >= 2 and w[1] > 0 and w[0] > w[1] else 10000.0
    if not 1 < high < math.inf:  # w_1 / w_0 = base**(-2/dim)
        high = 10000.0
    if part == "inv_freq" and dtype in ("float16", "bfloat16"):  # two values rounded to a
        high = rotary_dims(w, resolved, dtype)[0][1]  # few bits tell little: the law of them all
    ratio = w[resolved] / (w[0] * high ** (-np.arange(n) / n))[resolved]
    # frequencies read to 1e-3 (scalings' own), or as a vector's values rounded to its dtype
    close = max(1e-3, FORMATS[dtype].epsilon) if part == "inv_freq" else 1e-3
    if len(ratio) == 0 or np.allclose(ratio, 1, rtol=close):
        found = []
        for dim, base in rotary_dims(w, resolved, dtype):
            fit = PLAIN if math.isclose(w[0], 1, rel_tol=1e-4) else DIVIDED
            for read in fit.values():
                found += read(dim, base, w, rows)
        if part == "cos" and not math.isclose(attention, 1, rel_tol=FORMATS[dtype].epsilon):
            notes.append(
                f"its cos columns start at {attention:.6g}, not 1: an attention factor, which a "
                "power law's plain, linear and dynamic NTK tables do not have (YaRN's and "
                "LongRoPE's, which do, scale frequencies the table does not resolve)"
            )
        return found
    dim, base = 2 * n, high
    # a sin table's peak only bounds its factor; a half table's row 0 holds it rounded
    tolerance = max(1e-3 if part == "cos" else 2e-2, FORMATS[dtype].epsilon / 2)
    checked = part in ("cos", "sin")  # a part whose values carry the attention factor
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
            if checked and not math.isclose(float(factor), attention, rel_tol=tolerance):
                continue
            mine = np.array([float(x) for x in exact])
            error = float(np.max(np.abs(mine[resolved] / w[resolved] - 1)))
            if error < 1e-3:
                found.append((error, b, rope))
    if found:
        found.sort(key=lambda item: item[0])
        return [Fit(dim, b, rope) for _, b, rope in found[:4]]
    read = search(base) if checked else []  # LongRoPE's factors, in some library's arithmetic
    if read:
        return [Fit(*f) for f in read]
    if _scaled(ratio, high):  # the nearest plain law: the one the high end follows
        notes.append(
            f"rotary frequencies follow base {base:.6g} at the high end and are divided by up to "
            f"{1 / ratio.min():.4g} at the low end: a frequency-dependent scaling that no common "
            "llama3 or YaRN setting fits, nor LongRoPE factors read in any library's arithmetic"
            + (
                ""
                if dtype == "float32"
                else f" (no factors within the bounds its {dtype} values allow make every column)"
            )
            + "; give its --rope parameters to compare exactly"
        )
        return [Fit(2 * n, float(f"{high:.6g}"), {}, nearest=True)]
    notes.append(_lawless(w, resolved))
    return _nearest(w, resolved)


def _scaled(ratio, high: float) -> bool:
    """Whether frequencies over a plain law's (`ratio`, from its base `high` at the high end)
    look scaled: the base a real model's, each frequency kept or divided (by up to 1024)."""
    return bool(_real(high) and ratio.max() <= 1 + 1e-2 and ratio.min() >= 1 / 1024)


def _lawless(w, resolved) -> str:
    """What frequencies that follow no power law do: the spread of their successive ratios
    (one value for base**(-2/dim))."""
    step = w[1:] / w[:-1]
    step = step[resolved[1:] & resolved[:-1]]
    spread = (
        f"successive ratios w_(i+1) / w_i run from {step.min():.3g} to {step.max():.3g}"
        if len(step)
        else "too few of them turn to tell a ratio"
    )
    return (
        f"its {len(w)} rotary frequencies, read from its first rows, follow no power law "
        f"base^(-2i/d) ({spread}; a power law has one ratio) nor a llama3 or YaRN scaling of "
        f"one at the settings tried (original lengths {ORIGINAL_LENGTHS[0]} to "
        f"{ORIGINAL_LENGTHS[-1]}, factors {FACTORS[0]:g} to {FACTORS[-1]:g})"
    )


def _nearest(w, resolved) -> list[Fit]:
    """The plain power law nearest the frequencies (in log, at the resolved ones) among the
    common bases and the least-squares one where a real model's: the nearest candidate of a
    table nothing explains, marked as such."""
    import numpy as np

    n = len(w)
    if not resolved.any() or not w[0] > 0:
        return []
    laws = [*BASES, *[b for _, b in rotary_dims(w, resolved, "float32")[:1] if _real(b)]]
    at = np.flatnonzero(resolved)

    def misfit(base):
        return float(np.max(np.abs(np.log(w[at]) - np.log(base ** (-at / n)))))

    best = min(laws, key=misfit)
    return [Fit(2 * n, best, {}, nearest=True)]


def _real(base: float) -> bool:
    return REAL_BASES[0] <= base <= REAL_BASES[1]


_ROUND = {"float16": 1e-4, "bfloat16": 1e-4}  # how near a round number a fitted base reads
# (relative, by the table's dtype; 2e-5 for float32 and float64, whose fits are near 1e-7 from
# cos, 1e-6 from sin; NTK's 75684.4 at rotary dim 127 is 6e-5 from 75680)


def rotary_dims(w, resolved, dtype: str) -> list[tuple[int, float]]:
    """(rotary dim, least-squares base) of frequencies that follow one power law: 2n, and
    2n - 1 where its base is a round number (4 significant digits at most) and 2n's is not."""
    import numpy as np

    n = len(w)
    at = np.flatnonzero(resolved & (w > 0))
    if n < 2 or len(at) < 2:
        return [(2 * n, 10000.0)]
    slope = float(np.polyfit(at, np.log(w[at]), 1)[0])  # -(2 / dim) ln base

    def base(dim):
        return float(np.exp(-slope * dim / 2))

    def rounded(b):
        close = _ROUND.get(dtype, 2e-5)
        return any(math.isclose(float(f"{b:.{k}g}"), b, rel_tol=close) for k in (1, 2, 3, 4))

    found = [(2 * n, base(2 * n))]
    if rounded(base(2 * n - 1)) and not rounded(base(2 * n)):
        found.append((2 * n - 1, base(2 * n - 1)))
    return found
