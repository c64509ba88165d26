"""The seed notebooks' formulas, each computed the way its notebook computes it.

Each function reproduces one notebook's arithmetic op for op (in torch, in the compute dtype,
with the notebook's slip fixed), so that on CPU in float32 the result is bit-identical to the
notebook. The op order matters: p * exp(-k) and p / exp(k) round differently, and torch
computes vectorized and scalar tails of one op with different sin/cos implementations, so
even the tensor shapes follow the notebook.

Every function returns an (L, d) tensor in the compute dtype; for odd d the notebooks'
`pe[:, 1::2] = cos(...)` cannot assign ceil(d/2) columns into floor(d/2), and the fix kept
here is to drop the last cos column (so the last column is a sin, as in the paper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


def _base_scalar(base: float):
    # the notebooks write torch.pow(10000, ...) with a Python int; keep integral bases integral
    return int(base) if base.is_integer() else base


def _interleave(torch, sin, cos, d: int, dtype):
    pe = torch.zeros(sin.shape[0], d, dtype=dtype, device=sin.device)
    pe[:, 0::2] = sin
    pe[:, 1::2] = cos[:, : d // 2]
    return pe


def _pow(torch, d, start, length, base, dtype, device):
    # seed 000 ("original" formula, with its multiply fixed to the intended divide)
    position = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    vector = torch.arange(0, d, 2, dtype=dtype, device=device)
    denominator = torch.pow(_base_scalar(base), vector / d)
    return _interleave(
        torch, torch.sin(position / denominator), torch.cos(position / denominator), d, dtype
    )


def _exp_log(torch, d, start, length, base, dtype, device):
    # seed 003 and seed 000's Harvard line: the Annotated Transformer's div_term
    position = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    div_term = torch.exp(
        torch.arange(0, d, 2, device=device).to(dtype) * (-math.log(base) / d)
    )
    return _interleave(
        torch, torch.sin(position * div_term), torch.cos(position * div_term), d, dtype
    )


def _neg_pow(torch, d, start, length, base, dtype, device):
    # seed 001's PositionalEncoding: a^-x instead of 1/a^x
    pos = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    frequency = torch.pow(
        _base_scalar(base), -torch.arange(0, d, 2, dtype=dtype, device=device) / d
    )
    return _interleave(torch, torch.sin(pos * frequency), torch.cos(pos * frequency), d, dtype)


def _exp_div(torch, d, start, length, base, dtype, device):
    # seed 002 (torch.zero fixed to torch.zeros): divide by exp(2i/d * ln(base))
    pos = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    denominator = torch.exp(
        torch.arange(0, d, 2, device=device).to(dtype) / d * math.log(base)
    )
    return _interleave(torch, torch.sin(pos / denominator), torch.cos(pos / denominator), d, dtype)


def _stack(torch, d, start, length, base, dtype, device):
    # seed 004's PositionalEncoding class: integer positions, sin and cos stacked then flattened
    even_i = torch.arange(0, d, 2, device=device).to(dtype)
    denominator = torch.pow(_base_scalar(base), even_i / d)
    position = torch.arange(start, start + length, device=device).reshape(length, 1)
    even_pe = torch.sin(position / denominator)
    odd_pe = torch.cos(position / denominator)
    stacked = torch.stack([even_pe, odd_pe], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)[:, :d]


@dataclass(frozen=True)
class SeedVariant:
    name: str
    formula: str
    source: str
    compute: Callable


SEED_VARIANTS: dict[str, SeedVariant] = {
    v.name: v
    for v in (
        SeedVariant("pow", "p / pow(base, 2i/d)", "seed 004; seed 000's intended formula", _pow),
        SeedVariant(
            "exp-log",
            "p * exp(2i * -(ln(base)/d))",
            "seeds 000, 003; the Annotated Transformer",
            _exp_log,
        ),
        SeedVariant("neg-pow", "p * pow(base, -2i/d)", "seed 001", _neg_pow),
        SeedVariant("exp-div", "p / exp(2i/d * ln(base))", "seed 002", _exp_div),
        SeedVariant(
            "stack", "sin and cos stacked, then flattened to interleave", "seed 004's class", _stack
        ),
    )
}


# ---------------------------------------------------------------------------------------------
# Library variants: the tables real libraries compute, in their arithmetic. Each reproduces
# the library's operations in the same order, dtypes and tensor shapes, and the conformance
# tests compare it with the installed library bit for bit. Each returns (L, d) float32.


def _annotated(torch, np, spec):
    # The Annotated Transformer, PositionalEncoding.__init__: integer positions and
    # div_term = exp(arange(0, d, 2) * -(ln 10000 / d)), both int64 tensors times floats.
    d, length = spec.d_model, spec.seq_len
    pe = torch.zeros(length, d)
    position = torch.arange(0, length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2) * -(math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def _pytorch_tutorial(torch, np, spec):
    # The PyTorch transformer tutorial's PositionalEncoding: the same products into a
    # (max_len, 1, d_model) buffer.
    d, length = spec.d_model, spec.seq_len
    position = torch.arange(length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = torch.zeros(length, 1, d)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    return pe[:, 0, :]


def _tensor2tensor(torch, np, spec):
    # get_timing_signal_1d in TensorFlow float32: the Python float ln(max/min) becomes float32
    # before it is divided by max(n - 1, 1), also float32; exp, sin and cos are TensorFlow's
    # own (Eigen's), reproduced in eigen.py.
    from . import eigen

    f32 = np.float32
    d, length = spec.d_model, spec.seq_len
    position = (np.arange(length) + spec.offset).astype(f32)
    n = d // 2
    increment = f32(math.log(spec.base / spec.min_timescale)) / max(f32(n) - f32(1), f32(1))
    exponent = np.arange(n).astype(f32) * -increment
    inv_timescales = f32(spec.min_timescale) * eigen.tensorflow_op(eigen.exp, "expf", exponent)
    scaled_time = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate(
        [eigen.tensorflow_op(eigen.sin, "sinf", scaled_time),
         eigen.tensorflow_op(eigen.cos, "cosf", scaled_time)],
        axis=1,
    )
    return torch.from_numpy(np.pad(signal, [(0, 0), (0, d % 2)]))


def _fairseq(torch, np, spec):
    # fairseq SinusoidalPositionalEmbedding.get_embedding (and its copies in Hugging Face
    # Speech2Text, M2M100 and FSMT): float32 throughout, padding row zeroed.
    d, length = spec.d_model, spec.seq_len
    half_dim = d // 2
    scale = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.int64).float() * -scale)
    emb = torch.arange(length, dtype=torch.int64).float().unsqueeze(1) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(length, -1)
    if d % 2 == 1:
        emb = torch.cat([emb, torch.zeros(length, 1)], dim=1)
    if spec.padding_idx is not None:
        emb[spec.padding_idx, :] = 0
    return emb


def _whisper(torch, np, spec):
    # OpenAI whisper's sinusoids(length, channels, max_timescale), also in Hugging Face
    # Whisper: the increment in float64, int64 ranges times it, float32 from there.
    length, channels = spec.seq_len, spec.d_model
    increment = math.log(spec.base) / (channels // 2 - 1)
    inv_timescales = torch.exp(-increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length).view(-1, 1) * inv_timescales.view(1, -1)
    return torch.cat([scaled_time.sin(), scaled_time.cos()], dim=1)


def _xlm_angles(np, length: int, dim: int):
    # pos / 10000^(2 (j//2) / dim) in float64, each denominator from numpy's scalar power as
    # the library's nested list computes it; the division is IEEE either way
    denominators = np.array([np.power(10000, 2 * (j // 2) / dim) for j in range(dim)])
    return np.arange(length, dtype=np.float64)[:, None] / denominators[None, :]


def _hf_marian(torch, np, spec):
    # Hugging Face MarianSinusoidalPositionalEmbedding.create_weight (Pegasus shares it):
    # float64 numpy angles, sin of the even columns then cos of the odd ones, cast to float32.
    length, dim = spec.seq_len, spec.d_model
    position_enc = _xlm_angles(np, length, dim)
    out = torch.empty(length, dim)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:sentinel] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, sentinel:] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    return out


def _hf_distilbert(torch, np, spec):
    # Hugging Face DistilBERT create_sinusoidal_embeddings: the same float64 angles,
    # interleaved, cast to float32.
    length, dim = spec.seq_len, spec.d_model
    position_enc = _xlm_angles(np, length, dim)
    out = torch.empty(length, dim)
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    return out


def _positional_encodings(torch, np, spec):
    # positional-encodings PositionalEncoding1D: width rounded up to even, inv_freq by
    # 1 / 10000^(2i/ch) in float32, an einsum outer product, sin/cos stacked and flattened.
    x, org_channels = spec.seq_len, spec.d_model
    channels = int(np.ceil(org_channels / 2) * 2)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
    pos_x = torch.arange(x, dtype=inv_freq.dtype)
    sin_inp_x = torch.einsum("i,j->ij", pos_x, inv_freq)
    emb_x = torch.flatten(torch.stack((sin_inp_x.sin(), sin_inp_x.cos()), dim=-1), -2, -1)
    emb = torch.zeros((x, channels))
    emb[:, :channels] = emb_x
    return emb[:, :org_channels]


# Rotary tables: Hugging Face transformers 5.23, modeling_rope_utils.ROPE_INIT_FUNCTIONS for
# inv_freq and the attention factor (GPT-NeoX's default, which honours partial_rotary_factor),
# then the rotary embedding's forward: float32 angles p*w, cat((freqs, freqs)), cos/sin times
# the attention factor.


def _hf_rope_inv_freq(torch, spec):
    from .families import rotary_dim

    rope = spec.rope_parameters
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


def _rope_table(torch, spec, lowered: str | None = None):
    # lowered: which stage runs in --compute-dtype (the precision failures reported in ports)
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
    emb = torch.cat((freqs, freqs), dim=-1)
    if lowered == "table":  # angles and cos/sin in the low dtype (autocast without a guard)
        emb = emb.to(low)
    table = (emb.cos() if spec.part == "cos" else emb.sin()) * attention_factor
    if spec.convention == "interleaved":  # the same frequencies as pairs 2i, 2i+1
        n = table.shape[-1] // 2
        table = table[..., :n].repeat_interleave(2, dim=-1)
    return table[0].float()


def _hf_rope(torch, np, spec):
    return _rope_table(torch, spec)


def _lowered(stage: str):
    return lambda torch, np, spec: _rope_table(torch, spec, stage)


# ALiBi slopes as BLOOM and MPT compute them in float32 (transformers 5.23)


def _bloom_slopes(torch, np, spec):
    # modeling_bloom: powers of 2**(-8/c) in float32 (torch.pow of a float32 base and int32
    # powers), then odd powers of 2**(-4/c) for the heads beyond the power of two c
    heads = spec.heads
    closest = 2 ** math.floor(math.log2(heads))
    base = torch.full((), 2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != heads:
        extra = torch.full((), 2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        remaining = min(closest, heads - closest)
        odd = torch.arange(1, 1 + 2 * remaining, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra, odd)], dim=0)
    return slopes[None, :]


def _mpt_slopes(torch, np, spec):
    # modeling_mpt build_mpt_alibi_tensor: 1 / 2**(k * 8 / n2) for the power of two n2 >= n,
    # odd-indexed slopes first, then even-indexed, the first n kept
    heads = spec.heads
    power = 2 ** math.ceil(math.log2(heads))
    exponents = torch.arange(1, power + 1, dtype=torch.int64).float() * (8 / power)
    slopes = 1.0 / torch.pow(2, exponents)
    if power != heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:heads]
    return slopes[None, :]


# 2-D sin-cos tables


def _mae(torch, np, spec):
    # MAE util/pos_embed.py get_2d_sincos_pos_embed: float64 numpy, the w coordinate first
    # (meshgrid(grid_w, grid_h)); omega = 1 / 10000**(i / (D/4)); sin and cos of each coordinate
    # concatenated; a zero row for the class token; torch .float() when the model loads it
    height, width = spec.grid
    d = spec.d_model
    grid = np.stack(np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32)))

    def one_axis(positions):
        omega = np.arange(d // 4, dtype=np.float64)
        omega /= d / 4.0
        omega = 1.0 / spec.base**omega
        angles = np.einsum("m,d->md", positions.reshape(-1), omega)
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)

    table = np.concatenate([one_axis(grid[0]), one_axis(grid[1])], axis=1)
    if spec.cls_token:
        table = np.concatenate([np.zeros([1, d]), table], axis=0)
    return torch.from_numpy(table).float()


def _timm(torch, np, spec):
    # timm layers/pos_embed_sincos.py build_sincos2d_pos_embed: float32 bands
    # 1 / T**(i / (D/4)), an (H*W, 2) grid of (row, column), sin and cos stacked either
    # [sin | cos] per table (dim 1) or per coordinate (dim 2, interleave_sin_cos)
    pos_dim = spec.d_model // 4
    bands = 1.0 / (spec.base ** (torch.arange(0, pos_dim, 1, dtype=torch.int64).to(torch.float32) / pos_dim))
    axes = [torch.arange(s, dtype=torch.int64).to(torch.float32) for s in spec.grid]
    grid = torch.stack(torch.meshgrid(axes, indexing="ij")).flatten(1).transpose(0, 1)
    angles = grid.unsqueeze(-1) * bands.unsqueeze(0)
    stack_dim = 2 if spec.convention == "timm-interleaved" else 1
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=stack_dim).flatten(1)


def _refuse_parts(name: str, parts: tuple, why: str):
    return lambda spec: None if spec.part in parts else f"variant {name!r} {why}"


def _even(what: str):
    return lambda spec: (
        f"{what} needs an even d_model (odd d fails its pe[:, 1::2] assignment)"
        if spec.d_model % 2 else None
    )


@dataclass(frozen=True)
class LibraryVariant:
    name: str
    source: str  # where the function lives, and the version matched
    conventions: tuple  # the layouts it can produce; the first is its default
    shape: str
    compute: Callable
    parameters: frozenset = frozenset()  # of base, offset, padding_idx, min_timescale
    refuse: Callable = lambda spec: None  # why the library cannot build this table, or None
    family: str = "sinusoidal"
    lowered: bool = False  # a precision recipe: --compute-dtype names the dtype of one stage
    part: str | None = None  # the part it builds when none is asked for


LIBRARY_VARIANTS: dict[str, LibraryVariant] = {
    v.name: v
    for v in (
        LibraryVariant(
            "annotated", "The Annotated Transformer (2022), PositionalEncoding buffer `pe`",
            ("vaswani",), "batch-first", _annotated, refuse=_even("the Annotated Transformer"),
        ),
        LibraryVariant(
            "pytorch-tutorial",
            "PyTorch tutorial 'Language Modeling with nn.Transformer', PositionalEncoding `pe`",
            ("vaswani",), "seq-first", _pytorch_tutorial, refuse=_even("the PyTorch tutorial"),
        ),
        LibraryVariant(
            "tensor2tensor",
            "tensor2tensor 1.15 layers/common_attention.py get_timing_signal_1d, in TensorFlow 2.21 "
            "float32 on x86-64",
            ("tensor2tensor",), "batch-first", _tensor2tensor,
            frozenset({"base", "offset", "min_timescale"}),
        ),
        LibraryVariant(
            "fairseq",
            "fairseq 0.12 SinusoidalPositionalEmbedding.get_embedding (transformers 5.23 "
            "Speech2Text, M2M100, FSMT)",
            ("fairseq",), "2d", _fairseq, frozenset({"padding_idx"}),
        ),
        LibraryVariant(
            "whisper", "openai-whisper model.py sinusoids (transformers 5.23 modeling_whisper)",
            ("whisper",), "2d", _whisper, frozenset({"base"}),
        ),
        LibraryVariant(
            "hf-marian",
            "transformers 5.23 MarianSinusoidalPositionalEmbedding.create_weight (Pegasus)",
            ("concat",), "2d", _hf_marian,
        ),
        LibraryVariant(
            "hf-distilbert", "transformers 5.23 distilbert create_sinusoidal_embeddings",
            ("vaswani",), "2d", _hf_distilbert,
        ),
        LibraryVariant(
            "positional-encodings", "positional-encodings 6.0 PositionalEncoding1D",
            ("vaswani",), "batch-first", _positional_encodings,
        ),
        LibraryVariant(
            "hf-rope",
            "transformers 5.23 modeling_rope_utils ROPE_INIT_FUNCTIONS and the rotary "
            "embedding's forward (GPT-NeoX, Llama)",
            ("half",), "2d", _hf_rope, frozenset({"base", "offset"}), family="rope",
        ),
        *(
            LibraryVariant(
                f"rope-{stage.replace('_', '-')}",
                f"hf-rope with {what} in --compute-dtype (default bfloat16)",
                ("half", "interleaved"), "2d", _lowered(stage), frozenset({"base", "offset"}),
                family="rope", lowered=True,
            )
            for stage, what in (
                ("inv_freq", "inv_freq"),
                ("positions", "the positions"),
                ("table", "the angles and cos/sin"),
            )
        ),
        LibraryVariant(
            "bloom", "transformers 5.23 modeling_bloom _get_alibi_slopes (build_alibi_tensor)",
            ("press",), "2d", _bloom_slopes, family="alibi", part="slopes",
            refuse=_refuse_parts("bloom", ("slopes",), "gives the slopes only (--part slopes)"),
        ),
        LibraryVariant(
            "mpt", "transformers 5.23 modeling_mpt build_mpt_alibi_tensor slopes",
            ("press",), "2d", _mpt_slopes, family="alibi", part="slopes",
            refuse=_refuse_parts("mpt", ("slopes",), "gives the slopes only (--part slopes)"),
        ),
        LibraryVariant(
            "mae", "MAE util/pos_embed.py get_2d_sincos_pos_embed (transformers 5.23 ViTMAE)",
            ("mae",), "2d", _mae, family="sincos2d",
        ),
        LibraryVariant(
            "timm", "timm 1.0 layers/pos_embed_sincos.py build_sincos2d_pos_embed",
            ("timm", "timm-interleaved"), "2d", _timm, frozenset({"base"}), family="sincos2d",
            refuse=lambda spec: "timm's table has no class-token row" if spec.cls_token else None,
        ),
    )
}
