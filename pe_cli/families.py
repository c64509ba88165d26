"""The families of tables pe-cli builds, and the exact mathematics of each.

* sinusoidal: the 1-D tables of "Attention Is All You Need" and its descendants (conventions.py).
* rope: rotary embeddings' cos and sin tables, cos(p*w_i) and sin(p*w_i) times an attention
  factor, each frequency in two columns: half-split (GPT-NeoX, Hugging Face's rotate_half) or
  interleaved pairs (GPT-J, RoFormer, Meta's llama). Frequencies and factor as Hugging Face
  modeling_rope_utils defines them for each rope_type.
* alibi: the head slopes of Press et al. (2022) and the bias -m_h*|i-j| they imply.
* sincos2d: MAE's and timm's tables for a grid of image patches: sin and cos of the row and
  the column coordinate, D/4 frequencies T**(-i/(D/4)) each, in three column layouts.

A family is one entry in FAMILIES: its conventions (layouts) and parts (which table). The
mathematics here is exact: Decimal numbers to 70 digits, from the float64 values given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from .conventions import CONVENTIONS
from .errors import BadInput

_DIGITS = 70


@dataclass(frozen=True)
class Family:
    name: str
    summary: str
    conventions: dict[str, str]  # layout name -> what it is; the first is the default
    parts: dict[str, str]  # which of the family's tables; the first is the default


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "sinusoidal", "1-D sin/cos tables (Vaswani et al. and the libraries after it)",
            {name: c.summary for name, c in CONVENTIONS.items()}, {"table": "the table"},
        ),
        Family(
            "rope", "rotary embedding tables, every Hugging Face rope_type",
            {
                "half": "frequencies i and i+dim/2 pair up (GPT-NeoX, Hugging Face rotate_half)",
                "interleaved": "columns 2i and 2i+1 pair up (GPT-J, RoFormer, Meta's llama)",
            },
            {
                "cos": "cos(p*w_i) * attention factor, (positions, rotary dim)",
                "sin": "sin(p*w_i) * attention factor, (positions, rotary dim)",
                "inv_freq": "the frequencies w_i, (rotary dim / 2,)",
            },
        ),
        Family(
            "alibi", "ALiBi head slopes and attention biases",
            {"press": "slopes 2**(-8k/n), non-powers of two completed as Press et al. do"},
            {
                "causal": "-m_h*(i-j) for key j <= query i, 0 above the diagonal (heads, L, L)",
                "symmetric": "-m_h*|i-j| (heads, L, L)",
                "slopes": "m_h (heads,)",
            },
        ),
        Family(
            "sincos2d", "2-D sin-cos tables for image patch grids (MAE, timm)",
            {
                "mae": "[sin x | cos x | sin y | cos y] (MAE get_2d_sincos_pos_embed)",
                "timm": "[sin y | sin x | cos y | cos x] (timm build_sincos2d_pos_embed)",
                "timm-interleaved": "[sin y | cos y | sin x | cos x] (timm, interleave_sin_cos=True)",
            },
            {"table": "the table, (grid rows * columns [+1 class row], d_model)"},
        ),
    )
}

CONVENTION_NAMES = tuple(dict.fromkeys(c for f in FAMILIES.values() for c in f.conventions))
PART_NAMES = tuple(dict.fromkeys(p for f in FAMILIES.values() for p in f.parts))

# ---------------------------------------------------------------------------------------------
# RoPE parameters, named and typed as in Hugging Face's rope_parameters

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
ROPE_KEYS = {
    "rope_type": str,
    "partial_rotary_factor": float,
    "factor": float,
    "max_position_embeddings": int,
    "original_max_position_embeddings": int,
    "attention_factor": float,
    "beta_fast": float,
    "beta_slow": float,
    "mscale": float,
    "mscale_all_dim": float,
    "truncate": bool,
    "low_freq_factor": float,
    "high_freq_factor": float,
    "short_factor": list,
    "long_factor": list,
}
_REQUIRED = {
    "linear": ("factor",),
    "dynamic": ("factor", "max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "longrope": ("short_factor", "long_factor", "original_max_position_embeddings"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
}


def _typed(key: str, value):
    kind = ROPE_KEYS[key]
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                return value.lower() in ("true", "1")
            return bool(value)
        if kind is list:
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(float(v) for v in items)
        if kind is int:
            number = float(value)
            if not number.is_integer():
                raise ValueError
            return int(number)
        if kind is float:
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            return number
        return str(value)
    except (TypeError, ValueError):
        raise BadInput(f"rope parameter {key} = {value!r} is not a {kind.__name__}") from None


def rope_parameters(items) -> tuple:
    """Check and normalize rope parameters (pairs or a dict) into sorted (key, value) pairs."""
    from .spec import did_you_mean

    pairs = dict(items.items() if isinstance(items, dict) else items)
    out = {}
    for key, value in pairs.items():
        if key == "type":  # the old name in configs
            key = "rope_type"
        if key not in ROPE_KEYS:
            raise BadInput(
                f"unknown rope parameter {key!r}{did_you_mean(key, ROPE_KEYS)}; "
                f"known: {', '.join(ROPE_KEYS)}"
            )
        if value is None:
            continue
        out[key] = _typed(key, value)
    kind = out.get("rope_type", "default")
    if kind not in ROPE_TYPES:
        raise BadInput(
            f"unknown rope_type {kind!r}{did_you_mean(kind, ROPE_TYPES)}; choose from {', '.join(ROPE_TYPES)}"
        )
    missing = [k for k in _REQUIRED.get(kind, ()) if k not in out]
    if missing:
        raise BadInput(f"rope_type {kind} needs {', '.join(missing)} (pass --rope KEY=VALUE)")
    for key in ("factor", "partial_rotary_factor", "max_position_embeddings",
                "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"):
        if key in out and out[key] <= 0:
            raise BadInput(f"rope parameter {key} must be > 0, got {out[key]}")
    if "partial_rotary_factor" in out and out["partial_rotary_factor"] > 1:
        raise BadInput("rope parameter partial_rotary_factor must be at most 1")
    if kind == "llama3" and out["high_freq_factor"] <= out["low_freq_factor"]:
        raise BadInput("llama3 needs high_freq_factor > low_freq_factor")
    if kind == "longrope" and "factor" not in out and "max_position_embeddings" not in out:
        raise BadInput("rope_type longrope needs factor, or max_position_embeddings to derive it")
    return tuple(sorted(out.items()))


def rope_config(path: str) -> dict:
    """The RoPE settings of a Hugging Face config.json: theta, head dim and rope parameters."""
    import json
    from pathlib import Path

    try:
        config = json.loads(Path(path).read_text())
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})") from None
    except ValueError:
        raise BadInput(f"{path}: not a JSON config") from None
    if not isinstance(config, dict):
        raise BadInput(f"{path}: not a JSON object")
    parameters = dict(config.get("rope_parameters") or config.get("rope_scaling") or {})
    theta = parameters.pop("rope_theta", None) or config.get("rope_theta") or 10000.0
    for key in ("partial_rotary_factor", "max_position_embeddings", "original_max_position_embeddings"):
        if key in config and key not in parameters:
            parameters[key] = config[key]
    head_dim = config.get("head_dim")
    if head_dim is None:
        if not config.get("hidden_size") or not config.get("num_attention_heads"):
            raise BadInput(f"{path}: needs head_dim, or hidden_size and num_attention_heads")
        head_dim = config["hidden_size"] // config["num_attention_heads"]
    known = {k: v for k, v in parameters.items() if k in ROPE_KEYS or k == "type"}
    return {"base": float(theta), "d_model": int(head_dim), "rope": rope_parameters(known)}


def rotary_dim(d_model: int, rope: dict) -> int:
    """Hugging Face's dim = int(head_dim * partial_rotary_factor)."""
    return int(d_model * rope.get("partial_rotary_factor", 1.0))


def _dec(x) -> Decimal:
    return Decimal(x)  # the exact value of the float64 (or int) given


def _ln(x: Decimal) -> Decimal:
    return x.ln()


def rope_frequencies(dim: int, base: float, rope: dict, positions_end: int) -> tuple[list[Decimal], Decimal]:
    """The exact w_i and attention factor of a rope_type, for a table whose positions run up to
    positions_end - 1 (dynamic NTK and LongRoPE depend on it, as in Hugging Face's forward)."""
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        n = (dim + 1) // 2
        kind = rope.get("rope_type", "default")
        theta = _dec(base)
        one = Decimal(1)

        def power_law(b: Decimal) -> list[Decimal]:
            log_b = _ln(b)
            return [(-(Decimal(2 * i) / dim) * log_b).exp() for i in range(n)]

        factor = _dec(rope["factor"]) if "factor" in rope else None
        attention = one
        if kind == "default":
            return power_law(theta), attention
        if kind == "linear":
            return [w / factor for w in power_law(theta)], attention
        if kind == "dynamic":
            limit = rope["max_position_embeddings"]
            length = Decimal(max(positions_end, limit))
            grown = factor * length / limit - (factor - 1)
            return power_law(theta * (_ln(grown) * Decimal(dim) / Decimal(dim - 2)).exp()), attention
        original = rope["original_max_position_embeddings"]
        if kind == "yarn":
            two_pi = 2 * _pi()

            def correction_dim(rotations: Decimal) -> Decimal:
                return dim * _ln(Decimal(original) / (rotations * two_pi)) / (2 * _ln(theta))

            low = correction_dim(_dec(rope.get("beta_fast") or 32))
            high = correction_dim(_dec(rope.get("beta_slow") or 1))
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
                attention = _dec(rope["attention_factor"])
            else:
                mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")

                def get_mscale(scale: Decimal, m) -> Decimal:
                    return one if scale <= 1 else Decimal("0.1") * _dec(m) * _ln(scale) + 1

                if mscale and all_dim:
                    attention = get_mscale(factor, mscale) / get_mscale(factor, all_dim)
                else:
                    attention = get_mscale(factor, 1)
            return frequencies, attention
        if kind == "longrope":
            if factor is None:
                factor = Decimal(rope["max_position_embeddings"]) / original
            chosen = longrope_factors(rope, n, positions_end)
            frequencies = [w / _dec(f) for w, f in zip(power_law(theta), chosen)]
            if "attention_factor" in rope:
                attention = _dec(rope["attention_factor"])
            elif factor > 1:
                attention = (one + _ln(factor) / _ln(Decimal(original))).sqrt()
            return frequencies, attention
        # llama3: long wavelengths divided by factor, short ones kept, a smooth blend between
        low_factor, high_factor = _dec(rope["low_freq_factor"]), _dec(rope["high_freq_factor"])
        low_wavelength, high_wavelength = original / low_factor, original / high_factor
        frequencies = []
        for w in power_law(theta):
            wavelength = 2 * _pi() / w
            if wavelength > low_wavelength:
                frequencies.append(w / factor)
            elif wavelength < high_wavelength:
                frequencies.append(w)
            else:
                smooth = (original / wavelength - low_factor) / (high_factor - low_factor)
                frequencies.append((1 - smooth) * w / factor + smooth * w)
        return frequencies, attention


def longrope_factors(rope: dict, n: int, positions_end: int) -> tuple:
    """The LongRoPE factors a table uses: long once positions pass the original length, as
    Hugging Face's forward switches; one per frequency."""
    original = rope["original_max_position_embeddings"]
    chosen = rope["long_factor"] if positions_end > original else rope["short_factor"]
    if len(chosen) != n:
        raise BadInput(f"longrope factors must have rotary dim / 2 = {n} entries, got {len(chosen)}")
    return chosen


def _pi() -> Decimal:
    from .exact import PI

    return PI


# ---------------------------------------------------------------------------------------------
# ALiBi


def alibi_slopes(heads: int) -> list[Decimal]:
    """Press et al.: for n a power of two, m_k = 2**(-8k/n), k = 1..n; otherwise the slopes of
    the power of two c below n, then every other slope of 2c (2**(-4(2k-1)/c)) for the rest.
    BLOOM computes the same numbers as powers of 2**(-8/c); MPT as 1/2**(8k/2c), reordered."""
    c = 2 ** (heads.bit_length() - 1)
    exponents = [Fraction(8 * k, c) for k in range(1, c + 1)]
    exponents += [Fraction(4 * (2 * k - 1), c) for k in range(1, heads - c + 1)]
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        log2 = Decimal(2).ln()
        return [(-(Decimal(e.numerator) / e.denominator) * log2).exp() for e in exponents]


# ---------------------------------------------------------------------------------------------
# 2-D sin-cos: each convention is the order of its four column blocks

SINCOS2D_BLOCKS = {
    "mae": (("x", "sin"), ("x", "cos"), ("y", "sin"), ("y", "cos")),
    "timm": (("y", "sin"), ("x", "sin"), ("y", "cos"), ("x", "cos")),
    "timm-interleaved": (("y", "sin"), ("y", "cos"), ("x", "sin"), ("x", "cos")),
}


def sincos2d_exponents(d_model: int) -> list[Fraction]:
    # w_i = T**(-i/(D/4)), i < D/4, in MAE and timm alike
    quarter = d_model // 4
    return [Fraction(i, quarter) for i in range(quarter)]


def parse_grid(text) -> tuple[int, int]:
    """'14x14', '14', (14, 14) -> (rows, columns)."""
    if isinstance(text, (tuple, list)):
        parts = list(text)
    else:
        parts = str(text).lower().replace("*", "x").split("x")
    try:
        numbers = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise BadInput(f"--grid {text!r} is not ROWSxCOLUMNS (e.g. 14x14)") from None
    if len(numbers) == 1:
        numbers *= 2
    if len(numbers) != 2 or min(numbers) < 1:
        raise BadInput(f"--grid {text!r} is not ROWSxCOLUMNS with both at least 1")
    return numbers[0], numbers[1]
