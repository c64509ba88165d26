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


def _even(what: str):
    return lambda d: f"{what} needs an even d_model (odd d fails its pe[:, 1::2] assignment)" if d % 2 else None


@dataclass(frozen=True)
class LibraryVariant:
    name: str
    source: str  # where the function lives, and the version matched
    convention: str
    shape: str
    compute: Callable
    parameters: frozenset = frozenset()  # of base, offset, padding_idx, min_timescale
    refuse: Callable = lambda d: None  # why the library cannot build width d, or None


LIBRARY_VARIANTS: dict[str, LibraryVariant] = {
    v.name: v
    for v in (
        LibraryVariant(
            "annotated", "The Annotated Transformer (2022), PositionalEncoding buffer `pe`",
            "vaswani", "batch-first", _annotated, refuse=_even("the Annotated Transformer"),
        ),
        LibraryVariant(
            "pytorch-tutorial",
            "PyTorch tutorial 'Language Modeling with nn.Transformer', PositionalEncoding `pe`",
            "vaswani", "seq-first", _pytorch_tutorial, refuse=_even("the PyTorch tutorial"),
        ),
        LibraryVariant(
            "tensor2tensor",
            "tensor2tensor 1.15 layers/common_attention.py get_timing_signal_1d, in TensorFlow 2.21 "
            "float32 on x86-64",
            "tensor2tensor", "batch-first", _tensor2tensor,
            frozenset({"base", "offset", "min_timescale"}),
        ),
        LibraryVariant(
            "fairseq",
            "fairseq 0.12 SinusoidalPositionalEmbedding.get_embedding (transformers 5.23 "
            "Speech2Text, M2M100, FSMT)",
            "fairseq", "2d", _fairseq, frozenset({"padding_idx"}),
        ),
        LibraryVariant(
            "whisper", "openai-whisper model.py sinusoids (transformers 5.23 modeling_whisper)",
            "whisper", "2d", _whisper, frozenset({"base"}),
        ),
        LibraryVariant(
            "hf-marian",
            "transformers 5.23 MarianSinusoidalPositionalEmbedding.create_weight (Pegasus)",
            "concat", "2d", _hf_marian,
        ),
        LibraryVariant(
            "hf-distilbert", "transformers 5.23 distilbert create_sinusoidal_embeddings",
            "vaswani", "2d", _hf_distilbert,
        ),
        LibraryVariant(
            "positional-encodings", "positional-encodings 6.0 PositionalEncoding1D",
            "vaswani", "batch-first", _positional_encodings,
        ),
    )
}
