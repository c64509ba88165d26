"""The rope family: rotary embeddings' cos and sin tables, cos(p*w_i) and sin(p*w_i) times an
attention factor, each frequency in two columns, and the frequencies themselves (inv_freq).

Frequencies and factor are Hugging Face modeling_rope_utils' for each rope_type, computed
exactly here. The two columns of frequency i are i and i + dim/2 (half: GPT-NeoX, Hugging
Face's rotate_half) or 2i and 2i + 1 (interleaved: GPT-J, RoFormer, Meta's llama); `_pairs`
is the one place that says so.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from decimal import Decimal

from ..core.errors import BadInput
from ..core.names import choice, did_you_mean
from ..core.params import Param
from ..numerics.frequencies import PI, context
from .base import Family, plausible_bases, variant
from .hf_config import LayerTypes, read

# ---------------------------------------------------------------------------------------------
# RoPE parameters, named and typed as in Hugging Face's rope_parameters

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")
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
    # M-RoPE's split of the frequencies over (t, h, w) positions: a text token has t = h = w,
    # so a table of 1-D positions is the same with or without it
    "mrope_section": list,
    "mrope_interleaved": bool,
    # the attention's position-dependent query scaling (Ministral 3, Mistral 4), not the table's
    "llama_4_scaling_beta": float,
}
# keys that do not change a table of 1-D positions
TABLE_NEUTRAL = ("mrope_section", "mrope_interleaved", "llama_4_scaling_beta")
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
    chosen = rope["long_factor"] if positions_end > original else rope["short_factor"]
    if len(chosen) != n:
        raise BadInput(f"longrope factors must have rotary dim / 2 = {n} entries, got {len(chosen)}")
    return chosen


def rope_frequencies(d_model: int, base: float, rope: dict, positions_end: int) -> tuple[list[Decimal], Decimal]:
    """The exact w_i and attention factor of a rope_type, for a table whose positions run up to
    positions_end - 1 (dynamic NTK and LongRoPE depend on it, as in Hugging Face's forward)."""
    dim = rotary_dim(d_model, rope)
    with context():
        n = frequency_count(d_model, rope)
        kind = rope.get("rope_type", "default")
        theta = Decimal(base)
        one = Decimal(1)

        def power_law(b: Decimal) -> list[Decimal]:
            log_b = b.ln()
            return [(-(Decimal(2 * i) / dim) * log_b).exp() for i in range(n)]

        factor = Decimal(rope["factor"]) if "factor" in rope else None
        attention = one
        if kind == "default":
            return power_law(theta), attention
        if kind == "proportional":
            rotated = rotated_count(d_model, rope)
            factor = factor or one
            return [w / factor if i < rotated else Decimal(0)
                    for i, w in enumerate(power_law(theta))], attention
        if kind == "linear":
            return [w / factor for w in power_law(theta)], attention
        if kind == "dynamic":
            limit = rope["max_position_embeddings"]
            length = Decimal(max(positions_end, limit))
            grown = factor * length / limit - (factor - 1)
            return power_law(theta * (grown.ln() * Decimal(dim) / Decimal(dim - 2)).exp()), attention
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
        low_factor, high_factor = Decimal(rope["low_freq_factor"]), Decimal(rope["high_freq_factor"])
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


# ---------------------------------------------------------------------------------------------
# The layout: which two columns hold frequency i


def _pairs(n: int, convention: str) -> tuple[slice, slice]:
    """The first and second column of each frequency in a part of 2n columns."""
    if convention == "half":
        return slice(0, n), slice(n, 2 * n)
    if convention == "single":
        return slice(0, n), slice(0, n)
    return slice(0, 2 * n, 2), slice(1, 2 * n, 2)


def _lay_out(plane, convention: str):
    """A (rows, n) plane, numpy or torch, as the part's (rows, 2n) columns."""
    import numpy as np

    rows, n = plane.shape
    if convention == "single":
        return plane
    if isinstance(plane, np.ndarray):
        out = np.empty((rows, 2 * n), dtype=plane.dtype)
    else:
        out = plane.new_empty((rows, 2 * n))
    for columns in _pairs(n, convention):
        out[:, columns] = plane
    return out


# ---------------------------------------------------------------------------------------------
# Rotary tables as Hugging Face transformers 5.23 computes them: modeling_rope_utils'
# ROPE_INIT_FUNCTIONS for inv_freq and the attention factor (GPT-NeoX's default, which honours
# partial_rotary_factor), then the rotary embedding's forward: float32 angles p*w,
# cat((freqs, freqs)), cos/sin times the attention factor.

VARIANTS: dict = {}


def _hf_rope_inv_freq(torch, spec):
    rope = dict(spec.rope)
    kind = rope.get("rope_type", "default")
    base, dim = spec.base, rotary_dim(spec.d_model, rope)
    factor = rope.get("factor")
    attention_factor = 1.0
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    if kind == "dynamic":
        limit = rope["max_position_embeddings"]
        end = spec.last_position + 1
        if end > limit:  # the forward pass regrows base from the int64 tensor max(position) + 1
            length = torch.maximum(torch.tensor(end), torch.tensor(limit, dtype=torch.int64))
        else:  # the frequencies made at construction, from max_position_embeddings
            length = limit
        base = base * ((factor * length / limit) - (factor - 1)) ** (dim / (dim - 2))
    if kind == "yarn":
        return _hf_yarn(torch, rope, base, dim, factor)
    if kind == "proportional":  # Gemma 4: the first int(p * head_dim // 2) angles rotate, the rest are 0
        rotated = rotated_count(spec.d_model, rope)
        exponents = torch.arange(0, 2 * rotated, 2, dtype=torch.int64).float() / dim
        inv_freq = torch.cat((1.0 / (base**exponents), torch.zeros(dim // 2 - rotated)))
        return inv_freq / (factor or 1.0), attention_factor
    if kind == "longrope":
        original = rope["original_max_position_embeddings"]
        if factor is None:
            factor = rope["max_position_embeddings"] / original
        attention_factor = rope.get("attention_factor")
        if attention_factor is None:
            attention_factor = (
                1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
            )
        long = spec.last_position + 1 > original
        ext = torch.tensor(rope["long_factor" if long else "short_factor"], dtype=torch.float32)
        return 1.0 / (ext * base**exponents), attention_factor
    inv_freq = 1.0 / (base**exponents)
    if kind == "linear":
        inv_freq /= factor
    if kind == "llama3":
        inv_freq = _hf_llama3(torch, rope, inv_freq)
    return inv_freq, attention_factor


def _hf_yarn(torch, rope, base, dim, factor):
    original = rope["original_max_position_embeddings"]
    attention_factor = rope.get("attention_factor")
    if attention_factor is None:
        def m_scale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        mscale, all_dim = rope.get("mscale"), rope.get("mscale_all_dim")
        if mscale and all_dim:
            attention_factor = float(m_scale(factor, mscale) / m_scale(factor, all_dim))
        else:
            attention_factor = m_scale(factor)

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low = correction_dim(rope.get("beta_fast") or 32)
    high = correction_dim(rope.get("beta_slow") or 1)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype=torch.float) / dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - ramp.to(dtype=torch.float)
    return interpolation * (1 - keep) + extrapolation * keep, attention_factor


def _hf_llama3(torch, rope, inv_freq):
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    original = rope["original_max_position_embeddings"]
    low_wavelength, high_wavelength = original / low, original / high
    wavelength = 2 * math.pi / inv_freq
    scaled = torch.where(wavelength > low_wavelength, inv_freq / factor, inv_freq)
    smooth = (original / wavelength - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < high_wavelength) * ~(wavelength > low_wavelength)
    return torch.where(medium, smoothed, scaled)


def _rope_table(spec, lowered: str | None = None):
    # lowered: which stage runs in --compute-dtype (the precision failures reported in ports)
    import torch

    low = getattr(torch, spec.compute_dtype or "bfloat16")
    inv_freq, attention_factor = _hf_rope_inv_freq(torch, spec)
    if lowered == "inv_freq":  # the buffer cast by model.to(dtype), widened again in forward
        inv_freq = inv_freq.to(low)
    if spec.part == "inv_freq":
        return inv_freq.float()[None, :]
    positions = torch.arange(spec.offset, spec.offset + spec.seq_len)[None, :]
    if lowered == "positions":
        positions = positions.to(low)
    freqs = positions[..., None].float() * inv_freq.float()
    if lowered == "table":  # angles and cos/sin in the low dtype (autocast without a guard)
        freqs = freqs.to(low)
    if spec.arithmetic == "polar":  # DeepSeek-V2, Llama 4: torch.polar(1, angle) in complex64
        value = torch.polar(torch.ones_like(freqs), freqs) * attention_factor
        plane = value.real if spec.part == "cos" else value.imag
    else:  # cos and sin of each angle (the same numbers in cat((freqs, freqs)) or repeat_interleave)
        plane = (freqs.cos() if spec.part == "cos" else freqs.sin()) * attention_factor
    return _lay_out(plane[0], spec.convention).float()


_HF = dict(parameters=frozenset({"base", "offset"}))


@variant(VARIANTS, "hf-rope", source="transformers 5.23 modeling_rope_utils ROPE_INIT_FUNCTIONS and the "
         "rotary embedding's forward (GPT-NeoX, Llama; Cohere's interleaved; DeepSeek-V2's polar)",
         conventions=("half", "interleaved", "single"), **_HF)
def _hf_rope(spec, device):
    return _rope_table(spec)


for _stage, _what in (("inv_freq", "inv_freq"), ("positions", "the positions"),
                      ("table", "the angles and cos/sin")):
    variant(VARIANTS, f"rope-{_stage.replace('_', '-')}", kind="recipe",
            source=f"hf-rope with {_what} in --compute-dtype (default bfloat16)",
            conventions=("half", "interleaved", "single"), **_HF)(
        lambda spec, device, stage=_stage: _rope_table(spec, stage)
    )


# ---------------------------------------------------------------------------------------------
# The family


class Rope(Family):
    name = "rope"
    summary = "rotary embedding tables, every Hugging Face rope_type"
    conventions = {
        "half": "frequencies i and i+dim/2 pair up (GPT-NeoX, Hugging Face rotate_half)",
        "interleaved": "columns 2i and 2i+1 pair up (GPT-J, RoFormer, Meta's llama, Cohere)",
        "single": "one column per frequency (complex tables' real and imaginary parts; gpt-oss)",
    }
    parts = {
        "cos": "cos(p*w_i) * attention factor, (positions, rotary dim)",
        "sin": "sin(p*w_i) * attention factor, (positions, rotary dim)",
        "inv_freq": "the frequencies w_i, (rotary dim / 2,)",
    }
    params = (
        Param("rope", (), "a Hugging Face rope parameter KEY=VALUE (rope_type=yarn, factor=4, ...); repeat.",
              list),
        Param("rope_config", None, "take theta, head dim, rope parameters and the model's layout "
              "from a Hugging Face config.json, a model folder, or a model id in the local Hugging "
              "Face cache.", str, field=False),
        Param("layer_type", None, "the layer type whose rope parameters a config gives per layer "
              "type (full_attention, sliding_attention, ...).", str, field=False),
        Param("config_part", None, "the part of a composite config to read (text_config, "
              "vision_config, thinker_config.text_config, ...); default: the language model's.",
              str, field=False),
        Param("arithmetic", "cos-sin", "how hf-rope computes cos and sin: of the float32 angles "
              "(cos-sin), or through complex torch.polar (polar: DeepSeek-V2, Llama 4).", str,
              flags=("--rope-arithmetic",), choices=("cos-sin", "polar")),
    )
    variants = VARIANTS
    export_parts = ("cos", "sin")

    def from_options(self, options):
        """--rope KEY=VALUE pairs over a --rope-config file's settings; the model's layout and
        arithmetic where --convention and --rope-arithmetic are not given."""
        values, rope = super().from_options(options), {}
        for name in ("layer_type", "config_part"):
            if options.get(name) and not options.get("rope_config"):
                raise BadInput(f"--{name.replace('_', '-')} selects within a --rope-config")
        if options.get("rope_config"):
            config = read(options["rope_config"], options.get("config_part"), options.get("layer_type"))
            rope = config["rope"]
            values.update(family=self.name, base=config["base"], d_model=config["d_model"])
            for name, key in (("convention", "convention"), ("arithmetic", "arithmetic")):
                if options.get(name) is None:
                    values[name] = config[key]
        for item in options.get("rope") or []:
            key, sep, value = item.partition("=")
            if not sep:
                raise BadInput(f"--rope {item!r} is not KEY=VALUE")
            rope[key.strip()] = value.strip()
        return values | ({"rope": rope} if rope else {})

    def normalize(self, spec):
        return {"rope": rope_parameters(spec.rope)}

    def selections(self, options):
        """A config with rope parameters per layer type, read without --layer-type: one table
        set per layer type (export writes each)."""
        if not options.get("rope_config") or options.get("layer_type"):
            return {}
        try:
            read(options["rope_config"], options.get("config_part"))
        except LayerTypes as e:
            return {name: {"layer_type": name} for name in e.names}
        return {}

    def check(self, spec):
        rope = dict(spec.rope)
        dim = rotary_dim(spec.d_model, rope)
        if dim < 1:
            raise BadInput(f"the rotary dim int(d_model * partial_rotary_factor) = {dim} must be at least 1")
        kind = rope.get("rope_type", "default")
        if kind == "dynamic" and dim < 3:
            raise BadInput("dynamic NTK divides by rotary dim - 2: it needs a rotary dim >= 3")
        if kind == "longrope":
            longrope_factors(rope, frequency_count(spec.d_model, rope), spec.last_position + 1)
        choice("rope arithmetic", spec.arithmetic, ("cos-sin", "polar"))
        if spec.arithmetic != "cos-sin" and spec.variant == "exact":
            raise BadInput("--rope-arithmetic is how hf-rope computes; the exact table is the same "
                           "for every arithmetic (drop it, or add --variant hf-rope)")

    def _vector(self, spec) -> bool:
        return spec.part == "inv_freq"

    def rows(self, spec):
        return 1 if self._vector(spec) else spec.seq_len

    def cols(self, spec):
        n = frequency_count(spec.d_model, dict(spec.rope))
        return n if self._vector(spec) or spec.convention == "single" else 2 * n

    def dims(self, spec):
        return (self.cols(spec),) if self._vector(spec) else super().dims(spec)

    def frequencies(self, spec):
        return rope_frequencies(spec.d_model, spec.base, dict(spec.rope), spec.last_position + 1)

    def exact_rows(self, spec, start, stop, work):
        if self._vector(spec):
            from ..numerics.sinusoids import round_decimals

            return round_decimals(work.sinusoids.frequencies, spec.dtype)
        sin, cos = work.planes(list(range(spec.offset + start, spec.offset + stop)))
        plane = cos if spec.part == "cos" else sin
        return _lay_out(plane, spec.convention)

    def fast_columns(self, spec):
        if self._vector(spec):
            return None
        import numpy as np

        from ..numerics.fast import Columns

        n = frequency_count(spec.d_model, dict(spec.rope))  # the kernel fills [sin | cos]; laid out after
        return Columns(2 * n, np.arange(n, dtype=np.int32), np.arange(n, 2 * n, dtype=np.int32),
                       np.empty(0, dtype=np.int32))

    def fast_finish(self, spec, block, start, stop):
        n = block.shape[1] // 2
        plane = block[:, n:] if spec.part == "cos" else block[:, :n]
        return _lay_out(plane, spec.convention)

    def settings(self, spec):
        return [
            *super().settings(spec),
            ("base", f"{spec.base:g}"),
            ("positions", f"{spec.offset} .. {spec.last_position}"),
            ("rope", ", ".join(f"{k}={v}" for k, v in spec.rope) or "rope_type=default"),
        ]

    def row_label(self, spec):
        return (lambda i: "-") if self._vector(spec) else super().row_label(spec)

    def facts(self, spec):
        frequencies, attention = self.frequencies(spec)
        columns = range(2 * len(frequencies))
        first, second = (columns[pair] for pair in _pairs(len(frequencies), spec.convention))
        return {
            "attention_factor": float(attention),
            "frequencies": [] if self._vector(spec) else [
                {
                    "index": i,
                    "columns": [first[i], second[i]],
                    "frequency": float(w),
                    "wavelength": 2 * math.pi / float(w),
                }
                for i, w in enumerate(frequencies)
            ],
            "positions": [spec.offset, spec.last_position],
        }

    def candidates(self, values, dtype, notes, bench):
        """A cos or sin part starting at position 0: its pairing, attention factor, theta and
        scaling (linear, llama3 or YaRN) fitted from the angles; each in the exact table,
        transformers' arithmetic and its polar one."""
        import numpy as np

        rows, cols = values.shape
        if rows < 3:
            return
        duplicated = False
        for convention in self.conventions:
            if convention == "single":
                if duplicated:  # a two-column layout explained it
                    continue
                n = cols
            elif cols % 2:
                continue
            else:
                n = cols // 2
            first, second = _pairs(n, convention)
            plane, twin = values[:, first], values[:, second]
            if not np.array_equal(plane, twin):
                continue
            duplicated = duplicated or convention != "single"
            head = plane[0]
            if np.all(head == head[0]) and head[0] > 0:
                part, attention = "cos", float(head[0])
            elif not np.any(head):
                part, attention = "sin", float(np.max(np.abs(plane[:, 0])))
            else:
                continue  # not starting at position 0: the fit below assumes it does
            inverse = np.arccos if part == "cos" else np.arcsin
            rough = inverse(np.clip(plane[1] / attention, -1, 1))
            at = np.clip(np.round(1 / np.maximum(rough, 1e-12)), 1, rows - 1).astype(int)
            w = inverse(np.clip(plane[at, np.arange(n)] / attention, -1, 1)) / at
            # only angles of at least 0.1 rad by row `at` say their frequency to 1e-3; below,
            # float rounding of cos near 1 (and a table shorter than a wavelength) hide it
            resolved = (w * at >= 0.1) & (w > 0)
            for base, rope in _scalings(w, resolved, attention, part, rows, notes):
                spec = bench.spec(family=self.name, d_model=2 * n, seq_len=rows, base=base, rope=rope,
                                  convention=convention, part=part, dtype="float64")
                if spec is None:
                    continue
                reference = bench.reference(spec)
                yield bench.candidate(f"rope {part}, {convention} pairing", spec, reference=reference)
                yield from bench.libraries(spec, reference)
                if dtype == "float32":
                    polar = bench.spec(**{**asdict(spec), "variant": "hf-rope", "arithmetic": "polar",
                                          "dtype": "float32"})
                    if polar is not None:
                        yield bench.candidate("library hf-rope, polar", polar, VARIANTS["hf-rope"].source,
                                              reference)


# common values of the scaled rope_types' parameters, for the fit to choose among
_ORIGINAL_LENGTHS = (2048, 4096, 8192, 16384, 32768, 65536)
_FACTORS = (2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0, 128.0)


def _scalings(w, resolved, attention: float, part: str, rows: int, notes: list) -> list:
    """(base, rope parameters) that explain fitted frequencies w (the `resolved` ones to 1e-3)
    and the attention factor: plain, linear, or the llama3 and YaRN settings among common values
    whose exact frequencies fit. Empty, with a note, when none does."""
    import numpy as np

    n = len(w)
    if n >= 2 and w[1] > 0 and w[0] > w[1]:
        base = float((w[0] / w[1]) ** n)  # w_1 / w_0 = base**(-2/dim), dim = 2n
    else:
        base = 10000.0
    plain = w[0] * base ** (-2 * np.arange(n) / (2 * n))
    ratio = w[resolved] / plain[resolved]
    tolerance = 1e-3 if part == "cos" else 2e-2  # a sin table's peak only bounds its factor
    if len(ratio) == 0 or np.allclose(ratio, 1, rtol=1e-3):
        if math.isclose(w[0], 1, rel_tol=1e-4):
            return [(b, {}) for b in plausible_bases(base) or [base]]
        factor = 1 / float(w[0])  # w_0 = 1/factor: linear scaling, the roundest factors near the fit
        factors = sorted({float(f"{factor:.{k}g}") for k in (1, 2, 3, 4, 6)})
        return [(b, {"rope_type": "linear", "factor": f}) for b in plausible_bases(base) or [base]
                for f in factors if math.isclose(f, factor, rel_tol=1e-3)]
    trials = []
    # the lowest frequencies are divided by the whole factor when the table resolves them
    fitted = {float(f"{1 / ratio.min():.{k}g}") for k in (1, 2)}
    for original in _ORIGINAL_LENGTHS:
        for factor in sorted(set(_FACTORS) | fitted):
            trials.append({"rope_type": "llama3", "factor": factor, "low_freq_factor": 1.0,
                           "high_freq_factor": 4.0, "original_max_position_embeddings": original})
            for extra in ({}, {"truncate": False}, {"mscale": 1.0, "mscale_all_dim": 1.0}):
                trials.append({"rope_type": "yarn", "factor": factor, "beta_fast": 32.0, "beta_slow": 1.0,
                               "original_max_position_embeddings": original, **extra})
    found = []
    for b in plausible_bases(base) or [base]:
        for rope in trials:
            exact, factor = rope_frequencies(2 * n, b, rope, rows)
            if not math.isclose(float(factor), attention, rel_tol=tolerance):
                continue
            mine = np.array([float(x) for x in exact])
            error = float(np.max(np.abs(mine[resolved] / w[resolved] - 1)))
            if error < 1e-3:
                found.append((error, b, rope))
    if not found:
        notes.append(
            f"rotary frequencies follow base {base:.6g} at the high end and are divided by up to "
            f"{1 / ratio.min():.4g} at the low end: a frequency-dependent scaling that no common "
            "llama3 or YaRN setting fits; give its --rope parameters to compare exactly"
        )
    found.sort(key=lambda item: item[0])
    return [(b, rope) for _, b, rope in found[:4]]


FAMILY = Rope()
