"""RoPE parameters, named and typed as in Hugging Face's rope_parameters, and the exact
frequencies and attention factor of each rope_type (modeling_rope_utils' ROPE_INIT_FUNCTIONS,
computed in Decimal)."""

from __future__ import annotations

import math
from decimal import Decimal

from ...core.errors import BadInput
from ...numerics.frequencies import PI, context

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional", "axial")


# what scales the frequencies (or says for which context), as against the layout's keys
SCALING_KEYS = (
    "rope_type",
    "factor",
    "original_max_position_embeddings",
    "max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "truncate",
    "low_freq_factor",
    "high_freq_factor",
    "short_factor",
    "long_factor",
    "ntk_factor",
)


_REQUIRED = {
    "linear": ("factor",),
    "dynamic": ("factor", "max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "longrope": ("original_max_position_embeddings",),  # and the factor list its positions use
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
}


def rotary_dim(d_model: int, rope: dict) -> int:
    """Hugging Face's dim = int(head_dim * partial_rotary_factor): the exponents are 2i/dim,
    i < ceil(dim / 2). Proportional RoPE keeps the exponents 2i/head_dim and sets the
    frequencies past int(head_dim * partial_rotary_factor // 2) to zero instead."""
    if rope.get("rope_type") == "proportional":
        return d_model
    return int(d_model * rope.get("partial_rotary_factor", 1.0))


def frequency_count(d_model: int, rope: dict) -> int:
    """How many frequencies (columns of a single-column table): transformers' arange(0, dim, 2)."""
    return (rotary_dim(d_model, rope) + 1) // 2


def rotated_count(d_model: int, rope: dict) -> int:
    """How many of them are not zero (all but proportional RoPE's unrotated tail)."""
    if rope.get("rope_type") == "proportional":
        return int(rope.get("partial_rotary_factor", 1.0) * d_model // 2)
    return frequency_count(d_model, rope)


def longrope_factors(rope: dict, n: int, positions_end: int) -> tuple:
    """The LongRoPE factors a table uses: long once positions pass the original length, as
    Hugging Face's forward switches; one per frequency."""
    original = rope["original_max_position_embeddings"]
    key = "long_factor" if positions_end > original else "short_factor"
    if key not in rope:  # the other list changes nothing in this table
        reach = "past" if key == "long_factor" else "up to"
        raise BadInput(
            f"rope_type longrope needs {key}: the positions run {reach} "
            f"original_max_position_embeddings = {original}"
        )
    chosen = rope[key]
    if len(chosen) != n:
        raise BadInput(
            f"longrope factors must have rotary dim / 2 = {n} entries, got {len(chosen)}"
        )
    return chosen


def rope_frequencies(
    d_model: int, base: float, rope: dict, positions_end: int
) -> tuple[list[Decimal], Decimal]:
    """The exact w_i and attention factor of a rope_type, for a table whose positions run up to
    positions_end - 1 (dynamic NTK and LongRoPE depend on it, as in Hugging Face's forward)."""
    dim = rotary_dim(d_model, rope)
    with context():
        n = frequency_count(d_model, rope)
        kind = rope.get("rope_type", "default")
        theta = Decimal(base) * Decimal(
            rope.get("ntk_factor", 1.0)
        )  # diffusers' NTK: theta times it
        one = Decimal(1)

        def power_law(b: Decimal) -> list[Decimal]:
            log_b = b.ln()
            return [(-(Decimal(2 * i) / dim) * log_b).exp() for i in range(n)]

        factor = Decimal(rope["factor"]) if "factor" in rope else None
        attention = one
        if kind in ("default", "axial"):  # axial: the default law, over each position axis
            return power_law(theta), attention
        if kind == "proportional":
            rotated = rotated_count(d_model, rope)
            factor = factor or one
            return [
                w / factor if i < rotated else Decimal(0) for i, w in enumerate(power_law(theta))
            ], attention
        if kind == "linear":
            return [w / factor for w in power_law(theta)], attention
        if kind == "dynamic":
            limit = rope["max_position_embeddings"]
            length = Decimal(max(positions_end, limit))
            grown = factor * length / limit - (factor - 1)
            return power_law(
                theta * (grown.ln() * Decimal(dim) / Decimal(dim - 2)).exp()
            ), attention
        original = rope["original_max_position_embeddings"]
        if kind == "yarn":
            two_pi = 2 * PI

            def correction_dim(rotations: Decimal) -> Decimal:
                return dim * (Decimal(original) / (rotations * two_pi)).ln() / (2 * theta.ln())

            low = correction_dim(Decimal(rope.get("beta_fast") or 32))
            high = correction_dim(Decimal(rope.get("beta_slow") or 1))
            if rope.get("truncate", True):
                low, high = Decimal(math.floor(low)), Decimal(math.ceil(high))
            low, high = max(low, Decimal(0)), min(high, Decimal(dim - 1))
            if low == high:
                high += Decimal("0.001")
            frequencies = []
            for i, w in enumerate(power_law(theta)):
                ramp = min(max((i - low) / (high - low), Decimal(0)), one)
                frequencies.append(w * (one - ramp) + w / factor * ramp)
            if "attention_factor" in rope:
                attention = Decimal(rope["attention_factor"])
            else:
                mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")

                def get_mscale(scale: Decimal, m) -> Decimal:
                    return one if scale <= 1 else Decimal("0.1") * Decimal(m) * scale.ln() + 1

                if mscale and all_dim:
                    attention = get_mscale(factor, mscale) / get_mscale(factor, all_dim)
                else:
                    attention = get_mscale(factor, 1)
            return frequencies, attention
        if kind == "longrope":
            if factor is None:
                factor = Decimal(rope["max_position_embeddings"]) / original
            chosen = longrope_factors(rope, n, positions_end)
            frequencies = [w / Decimal(f) for w, f in zip(power_law(theta), chosen)]
            if "attention_factor" in rope:
                attention = Decimal(rope["attention_factor"])
            elif factor > 1:
                attention = (one + factor.ln() / Decimal(original).ln()).sqrt()
            return frequencies, attention
        # llama3: long wavelengths divided by factor, short ones kept, a smooth blend between
        low_factor, high_factor = (
            Decimal(rope["low_freq_factor"]),
            Decimal(rope["high_freq_factor"]),
        )
        low_wavelength, high_wavelength = original / low_factor, original / high_factor
        frequencies = []
        for w in power_law(theta):
            wavelength = 2 * PI / w
            if wavelength > low_wavelength:
                frequencies.append(w / factor)
            elif wavelength < high_wavelength:
                frequencies.append(w)
            else:
                smooth = (original / wavelength - low_factor) / (high_factor - low_factor)
                frequencies.append((1 - smooth) * w / factor + smooth * w)
        return frequencies, attention
