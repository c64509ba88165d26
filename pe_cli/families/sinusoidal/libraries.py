"""Library tables of the sinusoidal family, each in its library's arithmetic: the same
operations in the same order, dtypes and tensor shapes; tests/test_libraries.py compares each
with the library bit for bit. Each returns (L, d) float32 and is one entry in LIBRARIES beside
its function.
"""

from __future__ import annotations

import math

from ..base import even_width, variant
from ..libraries import positional_encodings_axis
from .timesteps import TIMESTEP_LIBRARIES, timesteps

LIBRARIES: dict = {}


@variant(
    LIBRARIES,
    "annotated",
    source="The Annotated Transformer (2022), PositionalEncoding buffer `pe`",
    conventions=("vaswani",),
    shape="batch-first",
    refuse=even_width("the Annotated Transformer"),
)
def _annotated(spec, device):
    # The Annotated Transformer, PositionalEncoding.__init__: integer positions and
    # div_term = exp(arange(0, d, 2) * -(ln 10000 / d)), both int64 tensors times floats.
    import torch

    d, length = spec.d_model, spec.seq_len
    pe = torch.zeros(length, d)
    position = torch.arange(0, length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2) * -(math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


@variant(
    LIBRARIES,
    "pytorch-tutorial",
    source="PyTorch tutorial 'Language Modeling with nn.Transformer', PositionalEncoding `pe`",
    conventions=("vaswani",),
    shape="seq-first",
    refuse=even_width("the PyTorch tutorial"),
)
def _pytorch_tutorial(spec, device):
    # The PyTorch transformer tutorial's PositionalEncoding: the same products into a
    # (max_len, 1, d_model) buffer.
    import torch

    d, length = spec.d_model, spec.seq_len
    position = torch.arange(length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = torch.zeros(length, 1, d)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    return pe[:, 0, :]


@variant(
    LIBRARIES,
    "tensor2tensor",
    source="tensor2tensor 1.15 layers/common_attention.py get_timing_signal_1d, in TensorFlow "
    "2.21 float32 on x86-64",
    conventions=("tensor2tensor",),
    shape="batch-first",
    parameters=frozenset({"base", "offset", "min_timescale"}),
)
def _tensor2tensor(spec, device):
    # get_timing_signal_1d in TensorFlow float32: the Python float ln(max/min) becomes float32
    # before it is divided by max(n - 1, 1), also float32; exp, sin and cos are TensorFlow's
    # own (Eigen's), reproduced in numerics/eigen.py.
    import numpy as np
    import torch

    from ...numerics import eigen

    f32 = np.float32
    d, length = spec.d_model, spec.seq_len
    position = (np.arange(length) + spec.offset).astype(f32)
    n = d // 2
    increment = f32(math.log(spec.base / spec.min_timescale)) / max(f32(n) - f32(1), f32(1))
    exponent = np.arange(n).astype(f32) * -increment
    inv_timescales = f32(spec.min_timescale) * eigen.tensorflow_op(eigen.exp, "expf", exponent)
    scaled_time = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate(
        [
            eigen.tensorflow_op(eigen.sin, "sinf", scaled_time),
            eigen.tensorflow_op(eigen.cos, "cosf", scaled_time),
        ],
        axis=1,
    )
    return torch.from_numpy(np.pad(signal, [(0, 0), (0, d % 2)]))


def _padding_row_in_table(spec) -> str | None:
    if spec.padding_idx is not None and spec.padding_idx >= spec.seq_len:
        return (
            f"variant 'fairseq' indexes row --padding-idx {spec.padding_idx} of a table of "
            f"{spec.seq_len} rows (the library raises IndexError)"
        )
    return None


@variant(
    LIBRARIES,
    "fairseq",
    source="fairseq 0.12 SinusoidalPositionalEmbedding.get_embedding (transformers 5.23 "
    "Speech2Text, M2M100, FSMT)",
    conventions=("fairseq",),
    parameters=frozenset({"padding_idx"}),
    refuse=_padding_row_in_table,
)
def _fairseq(spec, device):
    # fairseq SinusoidalPositionalEmbedding.get_embedding (and its copies in Hugging Face
    # Speech2Text, M2M100 and FSMT): float32 throughout, padding row zeroed.
    emb = _fairseq_table(0, spec.seq_len, spec.d_model, cos_first=False)
    if spec.padding_idx is not None:
        emb[spec.padding_idx, :] = 0
    return emb


def _fairseq_table(start: int, length: int, d: int, cos_first: bool):
    """fairseq's float32 get_embedding for positions start..start+length-1: [sin | cos | 0],
    or [cos | sin | 0] as MusicGen has it. A row is the same whether the table is built from 0
    and indexed or built from `start`: each element is its own product and sin or cos."""
    import torch

    half_dim = d // 2
    scale = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.int64).float() * -scale)
    emb = torch.arange(start, start + length, dtype=torch.int64).float().unsqueeze(
        1
    ) * emb.unsqueeze(0)
    halves = [torch.cos(emb), torch.sin(emb)] if cos_first else [torch.sin(emb), torch.cos(emb)]
    emb = torch.cat(halves, dim=1).view(length, -1)
    if d % 2 == 1:
        emb = torch.cat([emb, torch.zeros(length, 1)], dim=1)
    return emb


@variant(
    LIBRARIES,
    "hf-musicgen",
    source="transformers 5.23 MusicgenSinusoidalPositionalEmbedding.get_embedding (and MusicGen-Melody's)",
    conventions=("musicgen",),
    parameters=frozenset({"offset"}),
)
def _hf_musicgen(spec, device):
    # fairseq's float32 arithmetic with the cos half first, from the offset
    return _fairseq_table(spec.offset, spec.seq_len, spec.d_model, cos_first=True)


# diffusion timestep embeddings live with --timesteps (timesteps.py); they take their place in
# the list here, as --help, errors and identification list the variants in this order
LIBRARIES.update(TIMESTEP_LIBRARIES)


@variant(
    LIBRARIES,
    "whisper",
    source="openai-whisper model.py sinusoids (transformers 5.23 modeling_whisper)",
    conventions=("whisper",),
    parameters=frozenset({"base"}),
)
def _whisper(spec, device):
    # OpenAI whisper's sinusoids(length, channels, max_timescale), also in Hugging Face
    # Whisper: the increment in float64, int64 ranges times it, float32 from there.
    import torch

    length, channels = spec.seq_len, spec.d_model
    increment = math.log(spec.base) / (channels // 2 - 1)
    inv_timescales = torch.exp(-increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length).view(-1, 1) * inv_timescales.view(1, -1)
    return torch.cat([scaled_time.sin(), scaled_time.cos()], dim=1)


def _xlm_angles(length: int, dim: int):
    # pos / 10000^(2 (j//2) / dim) in float64, each denominator from numpy's scalar power as
    # the library's nested list computes it; the division is IEEE either way
    import numpy as np

    denominators = np.array([np.power(10000, 2 * (j // 2) / dim) for j in range(dim)])
    return np.arange(length, dtype=np.float64)[:, None] / denominators[None, :]


@variant(
    LIBRARIES,
    "hf-marian",
    source="transformers 5.23 MarianSinusoidalPositionalEmbedding.create_weight (Pegasus)",
    conventions=("concat",),
)
def _hf_marian(spec, device):
    # Hugging Face MarianSinusoidalPositionalEmbedding.create_weight (Pegasus shares it):
    # float64 numpy angles, sin of the even columns then cos of the odd ones, cast to float32.
    import numpy as np
    import torch

    length, dim = spec.seq_len, spec.d_model
    position_enc = _xlm_angles(length, dim)
    out = torch.empty(length, dim)
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:sentinel] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, sentinel:] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    return out


@variant(
    LIBRARIES,
    "hf-distilbert",
    source="transformers 5.23 distilbert create_sinusoidal_embeddings",
    conventions=("vaswani",),
)
def _hf_distilbert(spec, device):
    # Hugging Face DistilBERT create_sinusoidal_embeddings: the same float64 angles,
    # interleaved, cast to float32.
    import numpy as np
    import torch

    length, dim = spec.seq_len, spec.d_model
    position_enc = _xlm_angles(length, dim)
    out = torch.empty(length, dim)
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    return out


@variant(
    LIBRARIES,
    "x-transformers",
    source="x-transformers 2.31 ScaledSinusoidalEmbedding (--base: theta; --amplitude: its "
    "scale, d^-0.5 at init)",
    conventions=("concat",),
    parameters=frozenset({"base", "offset", "amplitude"}),
    refuse=lambda spec: (
        f"x-transformers' ScaledSinusoidalEmbedding asserts an even dim (got --d-model {spec.d_model})"
        if spec.d_model % 2
        else None
    ),
)
def _x_transformers(spec, device):
    # frequencies theta ** -(i / n) in float32: torch's pow of the base to a negative float32
    # exponent, which rounds otherwise than 1 / theta ** (i / n); positions times them (einsum
    # of int64 positions and float32 frequencies: one float32 product each), [sin | cos],
    # times the float32 scale
    import torch

    n = spec.d_model // 2
    # theta as the module holds it: an int where it is whole (10000), which torch's pow takes
    # as a scalar of its own; one past int64 would overflow there, and is a float
    theta = int(spec.base) if spec.base.is_integer() and spec.base < 2**63 else spec.base
    inverse_frequencies = theta ** -(torch.arange(n).float() / n)
    positions = torch.arange(spec.offset, spec.offset + spec.seq_len)
    angles = torch.einsum("i, j -> i j", positions, inverse_frequencies)
    table = torch.cat((angles.sin(), angles.cos()), dim=-1)
    return table * torch.tensor([spec.amplitude], dtype=torch.float32)


@variant(
    LIBRARIES,
    "diffusers-nerf",
    source="diffusers 0.42 Shap-E posenc_nerf of a 1-D position (min_deg 0, max_deg (d - 1) / 2)",
    conventions=("nerf",),
    parameters=frozenset({"offset", "timesteps"}),
    refuse=lambda spec: (
        None
        if spec.d_model % 2
        else "posenc_nerf writes x and 2 * max_deg columns: an odd --d-model "
        f"(got --d-model {spec.d_model})"
    ),
)
def _diffusers_nerf(spec, device):
    # Shap-E's posenc_nerf(x, 0, L): scales 2.0 ** arange(L) in x's dtype (float32), x times
    # them, sin of those and of those plus pi/2 (its cos: one more float32 rounding before the
    # sin), x itself first
    import torch

    if spec.timesteps is None:
        x = torch.arange(spec.offset, spec.offset + spec.seq_len).float()
    else:
        x = torch.from_numpy(timesteps(spec).values).float()
    scales = 2.0 ** torch.arange(0, (spec.d_model - 1) // 2, dtype=x.dtype)
    angles = x[:, None] * scales[None, :]
    return torch.cat(
        [x[:, None], torch.cat([angles, angles + math.pi / 2.0], dim=-1).sin()], dim=-1
    )


@variant(
    LIBRARIES,
    "positional-encodings",
    source="positional-encodings 6.0 PositionalEncoding1D",
    conventions=("vaswani",),
    shape="batch-first",
)
def _positional_encodings(spec, device):
    # positional-encodings PositionalEncoding1D: width rounded up to even, inv_freq by
    # 1 / 10000^(2i/ch) in float32, an einsum outer product, sin/cos stacked and flattened.
    import torch

    x, org_channels = spec.seq_len, spec.d_model
    channels = -(-org_channels // 2) * 2
    inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
    emb_x = positional_encodings_axis(torch, x, inv_freq)
    emb = torch.zeros((x, channels))
    emb[:, :channels] = emb_x
    return emb[:, :org_channels]
