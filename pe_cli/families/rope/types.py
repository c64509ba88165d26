"""The rope types, as a registry in the shape of transformers' ROPE_INIT_FUNCTIONS
(modeling_rope_utils.py): one entry per rope_type, named as transformers names it, holding its
keys, its checks, its exact frequencies and attention factor (in Decimal), and its arithmetic
as transformers 5.23 computes it (torch, float32). Adding a rope type is one entry here: the
keys it reads know it from its entry (keys.py), and for compare to name its tables its fit goes
in identify/scalings.py.

Each exact function takes an `Exact` and runs in numerics' Decimal context; each torch function
takes torch and a `Torch`. Both return (frequencies, attention factor).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from ...core.errors import BadInput
from ...numerics.frequencies import PI, context


class Exact(NamedTuple):
    """What a rope type's exact frequencies are made from."""

    rope: dict  # its parameters
    d_model: int  # the head dim
    dim: int  # the rotary dim: the exponents are 2i / dim
    n: int  # how many frequencies
    theta: Decimal  # the base, times diffusers' ntk_factor
    end: int  # one past the table's largest position (dynamic NTK and LongRoPE read it)

    def power_law(self, base: Decimal) -> list[Decimal]:
        log_b = base.ln()
        return [(-(Decimal(2 * i) / self.dim) * log_b).exp() for i in range(self.n)]

    @property
    def factor(self) -> Decimal | None:
        return Decimal(self.rope["factor"]) if "factor" in self.rope else None


class Torch(NamedTuple):
    """What a rope type's transformers arithmetic is made from."""

    rope: dict
    d_model: int
    dim: int
    base: float  # the base, times ntk_factor
    end: Callable[[], int]  # one past the largest position, when the type reads it


@dataclass(frozen=True, kw_only=True)
class RopeType:
    name: str  # transformers' rope_type
    summary: str
    transformers: str  # where transformers 5.23 computes it
    exact: Callable  # (Exact) -> (frequencies, attention factor), Decimals
    torch: Callable  # (torch, Torch) -> (inv_freq, attention factor)
    required: tuple[str, ...] = ()  # the --rope keys it needs
    optional: tuple[str, ...] = ()  # and those it reads when given
    validate: Callable | None = None  # (rope parameters) -> None, or BadInput
    check: Callable | None = None  # (rope, head dim, rotary dim, end()) -> None, or BadInput
    line: bool = True  # makes a 1-D table (axial: only a vision encoder's layout's)
    vision: bool = False  # a vision encoder's 2-D RoPE takes it
    diffusers: bool = False  # get_1d_rotary_pos_embed computes it (linear: its linear_factor)
    lengthwise: bool = False  # its frequencies depend on the table's length (its last position)
    kept: bool = False  # a layout more than a scaling: the wavelengths figure keeps it
    starts: str = "original_max_position_embeddings"  # the length where its scaling starts
    whole_dim: bool = False  # exponents over the whole head dim (partial_rotary_factor zeroes)
    facts: Callable | None = None  # (Torch) -> what show says of it beyond its frequencies


# ---------------------------------------------------------------------------------------------
# Exact frequencies: each type's law in Decimal


def _default_exact(law: Exact):
    return law.power_law(law.theta), Decimal(1)


def _linear_exact(law: Exact):
    return [w / law.factor for w in law.power_law(law.theta)], Decimal(1)


def _proportional_exact(law: Exact):
    rotated = rotated_count(law.d_model, law.rope)
    factor = law.factor or Decimal(1)
    return [
        w / factor if i < rotated else Decimal(0) for i, w in enumerate(law.power_law(law.theta))
    ], Decimal(1)


def _dynamic_exact(law: Exact):
    factor, limit = law.factor, law.rope["max_position_embeddings"]
    length = Decimal(max(law.end, limit))
    grown = factor * length / limit - (factor - 1)
    return law.power_law(
        law.theta * (grown.ln() * Decimal(law.dim) / Decimal(law.dim - 2)).exp()
    ), Decimal(1)


def _ntk_alpha_exact(law: Exact):
    # HunYuan: the base stretched once, theta * alpha^(dim / (dim - 2)), whatever the length
    grown = Decimal(law.rope["alpha"]).ln() * Decimal(law.dim) / Decimal(law.dim - 2)
    return law.power_law(law.theta * grown.exp()), Decimal(1)


def _yarn_exact(law: Exact):
    rope, dim, theta, factor, one = law.rope, law.dim, law.theta, law.factor, Decimal(1)
    original = rope["original_max_position_embeddings"]
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
    for i, w in enumerate(law.power_law(theta)):
        ramp = min(max((i - low) / (high - low), Decimal(0)), one)
        frequencies.append(w * (one - ramp) + w / factor * ramp)
    if "attention_factor" in rope:
        return frequencies, Decimal(rope["attention_factor"])
    mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")

    def get_mscale(scale: Decimal, m) -> Decimal:
        return one if scale <= 1 else Decimal("0.1") * Decimal(m) * scale.ln() + 1

    if mscale and all_dim:
        return frequencies, get_mscale(factor, mscale) / get_mscale(factor, all_dim)
    return frequencies, get_mscale(factor, 1)


def _longrope_exact(law: Exact):
    rope, factor, one = law.rope, law.factor, Decimal(1)
    original = rope["original_max_position_embeddings"]
    if factor is None:
        factor = Decimal(rope["max_position_embeddings"]) / original
    chosen = longrope_factors(rope, law.n, law.end)
    frequencies = [w / Decimal(f) for w, f in zip(law.power_law(law.theta), chosen)]
    if "attention_factor" in rope:
        return frequencies, Decimal(rope["attention_factor"])
    if factor > 1:
        return frequencies, (one + factor.ln() / Decimal(original).ln()).sqrt()
    return frequencies, one


def _llama3_exact(law: Exact):
    # long wavelengths divided by factor, short ones kept, a smooth blend between
    rope, factor = law.rope, law.factor
    original = rope["original_max_position_embeddings"]
    low_factor, high_factor = Decimal(rope["low_freq_factor"]), Decimal(rope["high_freq_factor"])
    low_wavelength, high_wavelength = original / low_factor, original / high_factor
    frequencies = []
    for w in law.power_law(law.theta):
        wavelength = 2 * PI / w
        if wavelength > low_wavelength:
            frequencies.append(w / factor)
        elif wavelength < high_wavelength:
            frequencies.append(w)
        else:  # never where the factors are equal (Llama 4): no wavelength is both bounds
            smooth = (original / wavelength - low_factor) / (high_factor - low_factor)
            frequencies.append((1 - smooth) * w / factor + smooth * w)
    return frequencies, Decimal(1)


# ---------------------------------------------------------------------------------------------
# transformers 5.23's arithmetic: float32 tensors, Python floats for the scalars


def hf_exponents(torch, dim: int):  # 2i / dim in float32, from int64 arange(0, dim, 2)
    return torch.arange(0, dim, 2, dtype=torch.int64).float() / dim


def longrope_attention(factor: float, original: int) -> float:  # Phi-3's, in Python floats
    return 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))


def longrope_inv_freq(ext, powers):  # 1 / (factor * base**(2i / dim)), each step in float32
    return 1.0 / (ext * powers)


def _default_torch(torch, law: Torch):
    return 1.0 / (law.base ** hf_exponents(torch, law.dim)), 1.0


def _linear_torch(torch, law: Torch):
    inv_freq = 1.0 / (law.base ** hf_exponents(torch, law.dim))
    inv_freq /= law.rope["factor"]
    return inv_freq, 1.0


def _ntk_alpha_torch(torch, law: Torch):
    # HunYuan's compute_ntk_alpha_rope_parameters: the base in Python floats
    base = law.base * law.rope["alpha"] ** (law.dim / (law.dim - 2))
    return 1.0 / (base ** hf_exponents(torch, law.dim)), 1.0


def _dynamic_torch(torch, law: Torch):
    rope, dim = law.rope, law.dim
    factor, limit = rope["factor"], rope["max_position_embeddings"]
    end = law.end()
    if end > limit:  # the forward pass regrows base from the int64 tensor max(position) + 1
        length = torch.maximum(torch.tensor(end), torch.tensor(limit, dtype=torch.int64))
    else:  # the frequencies made at construction, from max_position_embeddings
        length = limit
    base = law.base * ((factor * length / limit) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / (base ** hf_exponents(torch, dim)), 1.0


def _yarn_torch(torch, law: Torch):
    rope, base, dim, factor = law.rope, law.base, law.dim, law.rope.get("factor")
    attention_factor = rope.get("attention_factor")
    if attention_factor is None:

        def m_scale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")
        if mscale and all_dim:
            attention_factor = float(m_scale(factor, mscale) / m_scale(factor, all_dim))
        else:
            attention_factor = m_scale(factor)

    low, high = yarn_range(rope, dim, base)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** hf_exponents(torch, dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - ramp.to(dtype=torch.float)
    return interpolation * (1 - keep) + extrapolation * keep, attention_factor


def yarn_range(rope: dict, dim: int, base: float) -> tuple[float, float]:
    """YaRN's correction range as transformers' find_correction_range computes it, in Python
    floats: the dims where beta_fast and beta_slow rotations fit the original length, floored
    and ceiled unless truncate is false, within 0 .. dim - 1."""
    original = rope["original_max_position_embeddings"]

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(rope.get("beta_fast") or 32)
    high = correction_dim(rope.get("beta_slow") or 1)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, dim - 1)


def _yarn_facts(law: Torch) -> dict:
    return {
        "yarn_correction_range": list(yarn_range(law.rope, law.dim, law.base)),
        "yarn_truncate": bool(law.rope.get("truncate", True)),
    }


def _longrope_facts(law: Torch) -> dict:
    # transformers' forward switches to long_factor once max(position) + 1 passes the original
    original = law.rope["original_max_position_embeddings"]
    used = "long_factor" if law.end() > original else "short_factor"
    return {"longrope_switch": original, "longrope_factors": used}


def _longrope_torch(torch, law: Torch):
    rope, factor = law.rope, law.rope.get("factor")
    original = rope["original_max_position_embeddings"]
    if factor is None:
        factor = rope["max_position_embeddings"] / original
    attention_factor = rope.get("attention_factor")
    if attention_factor is None:
        attention_factor = longrope_attention(factor, original)
    long = law.end() > original
    ext = torch.tensor(rope["long_factor" if long else "short_factor"], dtype=torch.float32)
    return longrope_inv_freq(ext, law.base ** hf_exponents(torch, law.dim)), attention_factor


def _llama3_torch(torch, law: Torch):
    rope = law.rope
    inv_freq = 1.0 / (law.base ** hf_exponents(torch, law.dim))
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    original = rope["original_max_position_embeddings"]
    low_wavelength, high_wavelength = original / low, original / high
    wavelength = 2 * math.pi / inv_freq
    scaled = torch.where(wavelength > low_wavelength, inv_freq / factor, inv_freq)
    smooth = (original / wavelength - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < high_wavelength) * ~(wavelength > low_wavelength)
    return torch.where(medium, smoothed, scaled), 1.0


def _proportional_torch(torch, law: Torch):
    # Gemma 4: the first int(p * head_dim // 2) angles rotate, the rest are 0
    rotated, dim = rotated_count(law.d_model, law.rope), law.dim
    exponents = torch.arange(0, 2 * rotated, 2, dtype=torch.int64).float() / dim
    inv_freq = torch.cat((1.0 / (law.base**exponents), torch.zeros(dim // 2 - rotated)))
    return inv_freq / (law.rope.get("factor") or 1.0), 1.0


# ---------------------------------------------------------------------------------------------
# Checks


def _longrope_validate(rope: dict) -> None:
    if "factor" not in rope and "max_position_embeddings" not in rope:
        raise BadInput("rope_type longrope needs factor, or max_position_embeddings to derive it")


def _dynamic_check(rope: dict, d_model: int, dim: int, end) -> None:
    if dim < 3:
        raise BadInput("dynamic NTK divides by rotary dim - 2: it needs a rotary dim >= 3")


def _longrope_check(rope: dict, d_model: int, dim: int, end) -> None:
    longrope_factors(rope, frequency_count(d_model, rope), end())


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
    wrong = longrope_length(rope, key, n)
    if wrong:
        raise BadInput(wrong)
    return rope[key]


def longrope_length(rope: dict, key: str, n: int) -> str | None:
    """Why a LongRoPE factor list cannot serve n frequencies (one factor each), or None: the
    one check of its length, for the exact table and every engine's."""
    if len(rope[key]) != n:
        return f"longrope's {key} must have rotary dim / 2 = {n} entries, got {len(rope[key])}"
    return None


# ---------------------------------------------------------------------------------------------
# The registry

_YARN_KEYS = ("attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate")

ROPE_TYPES: dict[str, RopeType] = {
    t.name: t
    for t in (
        RopeType(
            name="default",
            summary="theta**(-2i/dim), the original RoPE",
            transformers="each model's compute_default_rope_parameters",
            exact=_default_exact,
            torch=_default_torch,
            vision=True,
            diffusers=True,
        ),
        RopeType(
            name="linear",
            summary="every frequency divided by factor (position interpolation)",
            transformers="_compute_linear_scaling_rope_parameters",
            exact=_linear_exact,
            torch=_linear_torch,
            required=("factor",),
            diffusers=True,
        ),
        RopeType(
            name="dynamic",
            summary="dynamic NTK: the base grown with the table's length past "
            "max_position_embeddings",
            transformers="_compute_dynamic_ntk_parameters (and dynamic_rope_update)",
            exact=_dynamic_exact,
            torch=_dynamic_torch,
            required=("factor", "max_position_embeddings"),
            check=_dynamic_check,
            lengthwise=True,
            starts="max_position_embeddings",
        ),
        RopeType(
            name="ntk_alpha",
            summary="HunYuan's NTK by alpha: the base times alpha**(dim/(dim-2)), for any "
            "length (its configs say rope_type dynamic with alpha)",
            transformers="HunYuanDenseV1RotaryEmbedding.compute_ntk_alpha_rope_parameters",
            exact=_ntk_alpha_exact,
            torch=_ntk_alpha_torch,
            required=("alpha",),
            check=_dynamic_check,
        ),
        RopeType(
            name="yarn",
            summary="YaRN: a ramp from the base's frequencies to them divided by factor, and an "
            "attention factor",
            transformers="_compute_yarn_parameters",
            exact=_yarn_exact,
            torch=_yarn_torch,
            required=("factor", "original_max_position_embeddings"),
            optional=_YARN_KEYS,
            facts=_yarn_facts,
        ),
        RopeType(
            name="longrope",
            summary="LongRoPE: each frequency divided by its own factor, short or long by the "
            "table's length",
            transformers="_compute_longrope_parameters (and longrope_frequency_update)",
            exact=_longrope_exact,
            torch=_longrope_torch,
            # and the factor list its positions use
            required=("original_max_position_embeddings",),
            optional=(
                "factor",
                "max_position_embeddings",
                "attention_factor",
                "short_factor",
                "long_factor",
            ),
            validate=_longrope_validate,
            check=_longrope_check,
            lengthwise=True,
            facts=_longrope_facts,
        ),
        RopeType(
            name="llama3",
            summary="Llama 3: long wavelengths divided by factor, short ones kept, a blend between",
            transformers="_compute_llama3_parameters",
            exact=_llama3_exact,
            torch=_llama3_torch,
            required=(
                "factor",
                "low_freq_factor",
                "high_freq_factor",
                "original_max_position_embeddings",
            ),
        ),
        RopeType(
            name="proportional",
            summary="Gemma 4: exponents over the whole head dim, the frequencies past "
            "partial_rotary_factor's share zero",
            transformers="_compute_proportional_rope_parameters",
            exact=_proportional_exact,
            torch=_proportional_torch,
            optional=("factor",),
            kept=True,
            whole_dim=True,
        ),
        RopeType(
            name="axial",
            summary="a vision encoder's 2-D RoPE: the default law over each position axis",
            transformers="its vision models' rotary modules (RopeParameters' 'axial')",
            exact=_default_exact,
            torch=_default_torch,
            line=False,
            vision=True,
            kept=True,
        ),
    )
}


# transformers' rope types pe-cli does not build, each with the reason (a test holds the two
# registries side by side)
NOT_SUPPORTED: dict[str, str] = {}


def rope_type(rope: dict) -> RopeType:
    """The rope type of (checked) rope parameters."""
    return ROPE_TYPES[rope.get("rope_type", "default")]


def _whole_dim(rope: dict) -> bool:
    found = ROPE_TYPES.get(rope.get("rope_type", "default"))
    return found is not None and found.whole_dim


def rotary_dim(d_model: int, rope: dict) -> int:
    """Hugging Face's dim = int(head_dim * partial_rotary_factor): the exponents are 2i/dim,
    i < ceil(dim / 2). Proportional RoPE keeps the exponents 2i/head_dim and sets the
    frequencies past int(head_dim * partial_rotary_factor // 2) to zero instead."""
    if _whole_dim(rope):
        return d_model
    return int(d_model * rope.get("partial_rotary_factor", 1.0))


def frequency_count(d_model: int, rope: dict) -> int:
    """How many frequencies (columns of a single-column table): transformers' arange(0, dim, 2)."""
    return (rotary_dim(d_model, rope) + 1) // 2


def rotated_count(d_model: int, rope: dict) -> int:
    """How many of them are not zero (all but proportional RoPE's unrotated tail)."""
    if _whole_dim(rope):
        return int(rope.get("partial_rotary_factor", 1.0) * d_model // 2)
    return frequency_count(d_model, rope)


def rope_frequencies(
    d_model: int, base: float, rope: dict, positions_end: int
) -> tuple[list[Decimal], Decimal]:
    """The exact w_i and attention factor of a rope_type, for a table whose positions run up to
    positions_end - 1 (dynamic NTK and LongRoPE depend on it, as in Hugging Face's forward)."""
    dim = rotary_dim(d_model, rope)
    with context():
        law = Exact(
            rope,
            d_model,
            dim,
            frequency_count(d_model, rope),
            Decimal(base) * Decimal(rope.get("ntk_factor", 1.0)),  # diffusers' NTK: theta times it
            positions_end,
        )
        return rope_type(rope).exact(law)


def type_facts(spec, end: Callable[[], int]) -> dict:
    """What show says of a spec's rope type beyond its frequencies and attention factor."""
    rope = dict(spec.rope)
    found = rope_type(rope)
    if found.facts is None:
        return {}
    base = spec.base * rope.get("ntk_factor", 1.0)
    return found.facts(Torch(rope, spec.d_model, rotary_dim(spec.d_model, rope), base, end))


def hf_inv_freq(torch, spec, end: Callable[[], int], dim: int | None = None):
    """inv_freq and the attention factor as transformers computes them for a spec's rope
    parameters, over `dim` (default the rotary dim); `end` gives one past its last position."""
    rope = dict(spec.rope)
    dim = dim or rotary_dim(spec.d_model, rope)
    law = Torch(rope, spec.d_model, dim, spec.base * rope.get("ntk_factor", 1.0), end)
    return rope_type(rope).torch(torch, law)
