"""The sinusoidal family: the 1-D tables of "Attention Is All You Need" and the libraries after it.

For positions p and angular frequencies w_i = base**(-e_i), a convention computes the planes
sin(p*w_i) and cos(p*w_i) and places them into d_model columns. Each convention is one entry
in CONVENTIONS beside its functions; each seed notebook's formula and each library's table is
one entry in VARIANTS beside its function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

from ..core.errors import BadInput
from ..core.params import Param
from ..numerics.frequencies import context, power_law
from .base import Family, even_width, variant
from .libraries import diffusers_sincos, positional_encodings_axis
from .positions import binary_fractions, positions_file
from .reading import digits, float32_near, plausible_bases, read_positions

# ---------------------------------------------------------------------------------------------
# Conventions: which frequencies, and where sin and cos go


def _interleaved(out, sin, cos, d: int) -> None:
    # Vaswani et al. (2017): column 2i is sin, column 2i+1 is cos of the same angle;
    # for odd d the last column is a sin and the last cos is not used.
    out[:, 0::2] = sin
    out[:, 1::2] = cos[:, : d // 2]


def _sin_then_cos(out, sin, cos, d: int) -> None:
    # Marian/Pegasus in Hugging Face: all sin columns (ceil(d/2)) first, then the cos columns.
    half = sin.shape[1]
    out[:, :half] = sin
    out[:, half:] = cos[:, : d - half]


def _sin_cos_zero(out, sin, cos, d: int) -> None:
    # tensor2tensor's get_timing_signal_1d and its descendants: [sin | cos], then a zero
    # column when d is odd.
    n = sin.shape[1]
    out[:, :n] = sin
    out[:, n : 2 * n] = cos
    out[:, 2 * n :] = 0


def _cos_sin_zero(out, sin, cos, d: int) -> None:
    # MusicGen and diffusion timestep embeddings (flip_sin_to_cos): [cos | sin], then a zero
    # column when d is odd.
    n = sin.shape[1]
    out[:, :n] = cos
    out[:, n : 2 * n] = sin
    out[:, 2 * n :] = 0


def _paper_exponents(d: int) -> list[Fraction]:
    # w_i = base^(-2i/d) for i < ceil(d/2)
    return [Fraction(2 * i, d) for i in range((d + 1) // 2)]


def _timescale_exponents(d: int) -> list[Fraction]:
    # w_i = exp(-i * ln(base) / max(n - 1, 1)) = base^(-i / max(n - 1, 1)), n = d // 2
    n = d // 2
    return [Fraction(i, max(n - 1, 1)) for i in range(n)]


def _half_exponents(d: int) -> list[Fraction]:
    # w_i = base^(-i / n), n = d // 2: diffusers' get_timestep_embedding with no frequency shift
    n = d // 2
    return [Fraction(i, n) for i in range(n)]


@dataclass(frozen=True)
class Convention:
    name: str
    summary: str
    exponents: Callable[[int], list[Fraction]]
    place: Callable
    min_d_model: int = 1
    even_only: bool = False
    padding: bool = False  # whether --padding-idx (a zeroed row) is part of the convention
    timescales: bool = False  # whether --min-timescale is part of the convention
    refusal: str = ""  # why d_model below the minimum or odd d cannot be served

    def columns(self, d_model: int):
        """Where each frequency lands: (sin column, cos column or -1) per frequency, and the
        columns that stay zero; found by laying out the frequency indices themselves."""
        import numpy as np

        n = len(self.exponents(d_model))
        index = np.arange(1, n + 1, dtype=np.float64)[None, :]
        layout = np.zeros((1, d_model))
        self.place(layout, index, -index, d_model)
        sin_col = np.full(n, -1, dtype=np.int32)
        cos_col = np.full(n, -1, dtype=np.int32)
        for column, value in enumerate(layout[0].astype(int).tolist()):
            if value > 0:
                sin_col[value - 1] = column
            elif value < 0:
                cos_col[-value - 1] = column
        zero_col = np.flatnonzero(layout[0] == 0).astype(np.int32)
        return sin_col, cos_col, zero_col

    def check(self, d_model: int) -> None:
        if d_model < self.min_d_model or (self.even_only and d_model % 2):
            raise BadInput(f"convention {self.name!r} {self.refusal} (got --d-model {d_model})")


CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention(
            "vaswani",
            "interleaved sin/cos, w_i = base^(-2i/d) (the paper; the seeds)",
            _paper_exponents,
            _interleaved,
        ),
        Convention(
            "concat",
            "[sin | cos] with the paper's frequencies (Hugging Face Marian, Pegasus)",
            _paper_exponents,
            _sin_then_cos,
        ),
        Convention(
            "tensor2tensor",
            "[sin | cos (| 0)], w_i = base^(-i/max(d//2-1, 1)) (the authors' own code)",
            _timescale_exponents,
            _sin_cos_zero,
            timescales=True,
        ),
        Convention(
            "fairseq",
            "tensor2tensor's table with an optional zeroed padding row (fairseq, M2M100, Speech2Text)",
            _timescale_exponents,
            _sin_cos_zero,
            min_d_model=4,
            padding=True,
            refusal="needs --d-model >= 4: fairseq divides by d//2 - 1",
        ),
        Convention(
            "whisper",
            "tensor2tensor's table for even d >= 4 (OpenAI whisper's sinusoids)",
            _timescale_exponents,
            _sin_cos_zero,
            min_d_model=4,
            even_only=True,
            refusal="needs an even --d-model >= 4: whisper asserts even channels and returns NaN for 2",
        ),
        Convention(
            "musicgen",
            "[cos | sin (| 0)] with tensor2tensor's frequencies (MusicGen, MusicGen-Melody)",
            _timescale_exponents,
            _cos_sin_zero,
            min_d_model=4,
            refusal="needs --d-model >= 4: MusicGen divides by d//2 - 1",
        ),
        Convention(
            "timestep",
            "[cos | sin (| 0)], w_i = base^(-i/(d//2)) (diffusion timestep embeddings with "
            "flip_sin_to_cos and no frequency shift: VibeVoice)",
            _half_exponents,
            _cos_sin_zero,
            min_d_model=2,
            refusal="needs --d-model >= 2",
        ),
    )
}

# ---------------------------------------------------------------------------------------------
# Seed notebooks' formulas, each computed the way its notebook computes it: the notebook's
# torch operations op for op, in --compute-dtype, with its slip fixed, so that on CPU in
# float32 the result is bit-identical to the notebook. The op order matters: p * exp(-k) and
# p / exp(k) round differently, and torch computes vectorized and scalar tails of one op with
# different sin/cos implementations, so even the tensor shapes follow the notebook. For odd d
# the notebooks' `pe[:, 1::2] = cos(...)` cannot assign ceil(d/2) columns into floor(d/2); the
# fix kept here drops the last cos column (the last column is a sin, as in the paper).

VARIANTS: dict = {}
_SEED = dict(kind="seed", conventions=("vaswani",), parameters=frozenset({"base", "offset"}))


def _seed_setting(spec):
    import torch

    from ..core.dtypes import torch_dtype

    # the notebooks write torch.pow(10000, ...) with a Python int; keep integral bases integral
    base = int(spec.base) if spec.base.is_integer() else spec.base
    return torch, torch_dtype(spec.compute_dtype or "float32"), base


def _interleave(torch, sin, cos, d: int, dtype):
    pe = torch.zeros(sin.shape[0], d, dtype=dtype, device=sin.device)
    pe[:, 0::2] = sin
    pe[:, 1::2] = cos[:, : d // 2]
    return pe


@variant(VARIANTS, "pow", source="seed 004; seed 000's intended formula", **_SEED)
def _pow(spec, device):
    # seed 000 ("original" formula, with its multiply fixed to the intended divide)
    torch, dtype, base = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    position = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    vector = torch.arange(0, d, 2, dtype=dtype, device=device)
    denominator = torch.pow(base, vector / d)
    return _interleave(
        torch, torch.sin(position / denominator), torch.cos(position / denominator), d, dtype
    )


@variant(VARIANTS, "exp-log", source="seeds 000, 003; the Annotated Transformer", **_SEED)
def _exp_log(spec, device):
    # seed 003 and seed 000's Harvard line: the Annotated Transformer's div_term
    torch, dtype, _ = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    position = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    div_term = torch.exp(
        torch.arange(0, d, 2, device=device).to(dtype) * (-math.log(spec.base) / d)
    )
    return _interleave(
        torch, torch.sin(position * div_term), torch.cos(position * div_term), d, dtype
    )


@variant(VARIANTS, "neg-pow", source="seed 001", **_SEED)
def _neg_pow(spec, device):
    # seed 001's PositionalEncoding: a^-x instead of 1/a^x
    torch, dtype, base = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    pos = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    frequency = torch.pow(base, -torch.arange(0, d, 2, dtype=dtype, device=device) / d)
    return _interleave(torch, torch.sin(pos * frequency), torch.cos(pos * frequency), d, dtype)


@variant(VARIANTS, "exp-div", source="seed 002", **_SEED)
def _exp_div(spec, device):
    # seed 002 (torch.zero fixed to torch.zeros): divide by exp(2i/d * ln(base))
    torch, dtype, _ = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    pos = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    denominator = torch.exp(
        torch.arange(0, d, 2, device=device).to(dtype) / d * math.log(spec.base)
    )
    return _interleave(torch, torch.sin(pos / denominator), torch.cos(pos / denominator), d, dtype)


@variant(VARIANTS, "stack", source="seed 004's class", **_SEED)
def _stack(spec, device):
    # seed 004's PositionalEncoding class: integer positions, sin and cos stacked then flattened
    torch, dtype, base = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    even_i = torch.arange(0, d, 2, device=device).to(dtype)
    denominator = torch.pow(base, even_i / d)
    position = torch.arange(start, start + length, device=device).reshape(length, 1)
    even_pe = torch.sin(position / denominator)
    odd_pe = torch.cos(position / denominator)
    stacked = torch.stack([even_pe, odd_pe], dim=2)
    return torch.flatten(stacked, start_dim=1, end_dim=2)[:, :d]


# ---------------------------------------------------------------------------------------------
# Library tables, each in its library's arithmetic: the same operations in the same order,
# dtypes and tensor shapes; tests/test_libraries.py compares each with the library bit for bit.
# Each returns (L, d) float32.


@variant(
    VARIANTS,
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
    VARIANTS,
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
    VARIANTS,
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

    from ..numerics import eigen

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
    VARIANTS,
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
    VARIANTS,
    "hf-musicgen",
    source="transformers 5.23 MusicgenSinusoidalPositionalEmbedding.get_embedding (and MusicGen-Melody's)",
    conventions=("musicgen",),
    parameters=frozenset({"offset"}),
)
def _hf_musicgen(spec, device):
    # fairseq's float32 arithmetic with the cos half first, from the offset
    return _fairseq_table(spec.offset, spec.seq_len, spec.d_model, cos_first=True)


@lru_cache(maxsize=4)
def timesteps(spec):
    """(the rows' positions as integers over a denominator q, q, their float64 values): the
    --timesteps range START:STOP[:STEP] (whole numbers, as Python's range) or file (any t)."""
    import numpy as np

    text = spec.timesteps
    if "," in text:  # a list t1,t2,... as written (a float32 t is written as its exact value)
        try:
            values = np.array([float(t) for t in text.split(",")], dtype=np.float64)
        except ValueError:
            raise BadInput(f"--timesteps {_shown(text)}: not a list of numbers t1,t2,...") from None
        if not np.all(np.isfinite(values)):
            raise BadInput(f"--timesteps {_shown(text)}: timesteps must be finite")
    elif ":" in text:
        try:
            bounds = [int(part) for part in text.split(":")]
            steps = range(*bounds) if 2 <= len(bounds) <= 3 else None
        except ValueError:
            steps = None
        if not steps:
            raise BadInput(
                f"--timesteps {text!r} is not a non-empty range START:STOP[:STEP] of whole "
                "numbers (a file of t values takes fractions)"
            )
        values = np.array(steps, dtype=np.float64)
    else:
        values = positions_file(text, "--timesteps", None)
    numerators, q = binary_fractions(values, f"--timesteps {_shown(text)}")
    return numerators, q, values


def _shown(text: str) -> str:
    """A --timesteps value as messages and summaries show it (a long list cut)."""
    return text if len(text) <= 60 else f"{text[:50]} ... ({text.count(',') + 1} values)"


def _listed(values) -> str:
    """Timesteps as a --timesteps list: each the shortest number that reads back as it."""
    return ",".join(repr(float(t)) if not float(t).is_integer() else str(int(t)) for t in values)


def _positions(spec, start: int, stop: int) -> list[int]:
    """Rows start..stop's positions: --offset onwards, or --timesteps' numerators."""
    if spec.timesteps is None:
        return list(range(spec.offset + start, spec.offset + stop))
    return timesteps(spec)[0][start:stop].tolist()


def _timestep_table(spec, flip: bool, shift: int):
    """diffusers' get_timestep_embedding for timesteps offset .. offset + seq_len - 1, all in
    float32: exponents -ln(max_period) * arange(n) / (n - shift), exp, the timesteps times
    them, times scale; [sin | cos], or [cos | sin] with flip_sin_to_cos; a zero column when d
    is odd."""
    import torch

    n = spec.d_model // 2
    freq = torch.exp(-math.log(spec.base) * torch.arange(n, dtype=torch.float32) / (n - shift))
    if spec.timesteps is None:
        t = torch.arange(spec.offset, spec.offset + spec.seq_len).float()
    else:  # the timesteps tensor a scheduler hands the model, in float32
        t = torch.from_numpy(timesteps(spec)[2]).float()
    angles = spec.timestep_scale * (t[:, None] * freq[None])
    halves = (
        [torch.cos(angles), torch.sin(angles)] if flip else [torch.sin(angles), torch.cos(angles)]
    )
    table = torch.cat(halves, dim=-1)
    if spec.d_model % 2:
        table = torch.cat([table, torch.zeros(len(t), 1)], dim=1)
    return table


@variant(
    VARIANTS,
    "hf-timestep",
    source="transformers 5.23 VibeVoiceDiffusionHeadSinusoidalEmbedding (base: diffusion_max_period)",
    conventions=("timestep",),
    parameters=frozenset({"base", "offset", "timesteps"}),
)
def _hf_timestep(spec, device):
    # diffusers' arithmetic with flip_sin_to_cos and no frequency shift
    return _timestep_table(spec, flip=True, shift=0)


# diffusers' (flip_sin_to_cos, downscale_freq_shift) for each layout it makes
_DIFFUSERS = {
    "timestep": (True, 0),
    "musicgen": (True, 1),
    "tensor2tensor": (False, 1),
    "concat": (False, 0),
}


def _diffusers_refusal(spec):
    flip, shift = _DIFFUSERS[spec.convention]
    if spec.d_model // 2 - shift < 1:
        return (
            f"diffusers divides by d//2 - downscale_freq_shift, 0 for --d-model {spec.d_model} "
            f"with the {spec.convention} layout"
        )
    if spec.convention == "concat" and spec.d_model % 2:
        return "diffusers pads an odd width with a zero column after [sin | cos]; concat has no such column"
    return None


@variant(
    VARIANTS,
    "diffusers",
    source="diffusers 0.42 get_timestep_embedding / Timesteps (--base: max_period; the convention: "
    "flip_sin_to_cos and downscale_freq_shift)",
    conventions=("timestep", "tensor2tensor", "musicgen", "concat"),
    parameters=frozenset({"base", "offset", "timestep_scale", "timesteps"}),
    refuse=_diffusers_refusal,
)
def _diffusers(spec, device):
    # timestep: flip_sin_to_cos, shift 0; musicgen: flip, shift 1; tensor2tensor: shift 1
    # (Timesteps(d, False, 1), DDPM's); concat: shift 0
    return _timestep_table(spec, *_DIFFUSERS[spec.convention])


# diffusers' get_1d_sincos_pos_embed_from_grid (Latte's temporal table, SkyReels-V2's timesteps):
# omega = 1 / 10000**(arange(D/2) / (D/2)) in float64 (float32 on MPS, which has no float64),
# torch.outer with the positions (promoted to omega's dtype), [sin | cos] or, with
# flip_sin_to_cos, [cos | sin]; float32 as the models keep it


def _grid_table(spec, dtype_name: str):
    import torch

    if spec.timesteps is None:
        positions = torch.arange(spec.offset, spec.offset + spec.seq_len).float()
    else:
        positions = torch.from_numpy(timesteps(spec)[2]).float()
    table = diffusers_sincos(torch, spec.d_model, positions, getattr(torch, dtype_name))
    if spec.convention == "timestep":  # flip_sin_to_cos: [cos | sin]
        table = torch.cat([table[:, spec.d_model // 2 :], table[:, : spec.d_model // 2]], dim=1)
    return table.float()


for _name, _dtype, _where in (
    ("diffusers-grid", "float64", ""),
    ("diffusers-grid-mps", "float32", ", on MPS"),
):
    variant(
        VARIANTS,
        _name,
        source=f"diffusers 0.42 get_1d_sincos_pos_embed_from_grid, omega in {_dtype}{_where} "
        "(concat; timestep: flip_sin_to_cos)",
        conventions=("concat", "timestep"),
        parameters=frozenset({"offset", "timesteps"}),
        refuse=even_width("get_1d_sincos_pos_embed_from_grid"),
    )(lambda spec, device, dtype=_dtype: _grid_table(spec, dtype))


@variant(
    VARIANTS,
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
    VARIANTS,
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
    VARIANTS,
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
    VARIANTS,
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


# ---------------------------------------------------------------------------------------------
# What a table's angles say: the layout, base, first position and zero rows, for identification


# column pairs (sin, cos) and frequency exponents e_i (w_i = base^-e_i) of each layout
_LAYOUTS = {
    "interleaved": lambda d: ([(2 * i, 2 * i + 1) for i in range(d // 2)], lambda i: 2 * i / d),
    "concat": lambda d: (
        [(i, (d + 1) // 2 + i) for i in range(d // 2)],
        lambda i: 2 * i / d,
    ),
    "timescale": lambda d: (
        [(i, d // 2 + i) for i in range(d // 2)],
        lambda i: i / max(d // 2 - 1, 1),
    ),
    "cos-timescale": lambda d: (
        [(d // 2 + i, i) for i in range(d // 2)],
        lambda i: i / max(d // 2 - 1, 1),
    ),
    "cos-half": lambda d: ([(d // 2 + i, i) for i in range(d // 2)], lambda i: i / (d // 2)),
}
_LAYOUT_CONVENTIONS = {
    "interleaved": "vaswani",
    "concat": "concat",
    "timescale": "tensor2tensor",
    "cos-timescale": "musicgen",
    "cos-half": "timestep",
}


@dataclass
class Fit:
    """What a table's angles say: its layout, base, first position and zero rows."""

    layout: str
    base: float
    offset: int
    padding: object  # the all-zero rows (numpy indices)
    residual: float  # largest deviation of any angle from a straight line in position (radians)


_FIT_RESIDUAL = 1e-3  # angles of a real table lie on lines to float rounding; seed 000's do not


def fit(values) -> list[Fit]:
    """Every layout whose (sin, cos) column pairs turn at a steady rate per row."""
    import numpy as np

    rows, d = values.shape
    if rows < 3 or d < 2:
        return []
    padding = np.nonzero(~values.any(axis=1))[0]
    live = np.nonzero(values.any(axis=1))[0]
    if len(live) < 3:  # too few rows that are not all zeros to fit a line through
        return []
    rows_live = values[live]
    fits, lines = [], {}  # the angles' lines, by column pairs (layouts share them)
    for layout, columns in _LAYOUTS.items():
        pairs, exponent = columns(d)
        if not pairs:
            continue
        first = np.unwrap(np.arctan2(rows_live[:, pairs[0][0]], rows_live[:, pairs[0][1]]))
        if not math.isclose(np.polyfit(live, first, 1)[0], 1.0, rel_tol=1e-2):
            continue  # every layout has w_0 = 1 (a cheap look at one pair before all of them)
        sin = rows_live[:, [p[0] for p in pairs]]
        cos = rows_live[:, [p[1] for p in pairs]]
        if not np.allclose(np.hypot(sin, cos), 1, atol=2e-2):
            continue
        key = tuple(pairs)
        if key not in lines:
            angle = np.unwrap(np.arctan2(sin, cos), axis=0)
            lines[key] = (angle, *np.polyfit(live, angle, 1))  # radians per row, one per pair
        angle, slope, intercept = lines[key]
        if not math.isclose(slope[0], 1.0, rel_tol=1e-2):
            continue  # every layout has w_0 = 1
        residual = float(np.max(np.abs(angle - intercept - np.outer(live, slope))))
        logs = [-math.log(w) / exponent(i) for i, w in enumerate(slope) if i > 0 and 0 < w < 1]
        base = math.exp(float(np.median(logs))) if logs else 10000.0
        lowest = slope[-1] if slope[-1] > 0 else 1.0
        start = float(np.mod(np.arctan2(sin[0, -1], cos[0, -1]), 2 * math.pi))
        offset = max(0, round(start / lowest - live[0]))
        fits.append(Fit(layout, base, offset, padding, residual))
    return fits


# ---------------------------------------------------------------------------------------------
# The family


def _zero_padding_row(spec, block, start: int, stop: int):
    """Rows start..stop of a table with fairseq's padding row, when it falls among them, zeroed."""
    if spec.padding_idx is not None and start <= spec.padding_idx - spec.offset < stop:
        block[spec.padding_idx - spec.offset - start] = 0
    return block


class Sinusoidal(Family):
    name = "sinusoidal"
    summary = "1-D sin/cos tables (Vaswani et al. and the libraries after it)"
    conventions = {name: c.summary for name, c in CONVENTIONS.items()}
    params = (
        Param(
            "padding_idx",
            None,
            "The position whose row is all zeros (the fairseq convention).",
            int,
            minimum=0,
            fixed="has no padding row",
        ),
        Param(
            "min_timescale",
            1.0,
            "tensor2tensor's min_timescale (--base is its max_timescale).",
            float,
            fixed="has no min_timescale",
        ),
        Param(
            "timestep_scale",
            1.0,
            "Every angle multiplied by this (diffusers' get_timestep_embedding "
            "scale; QwenImage: 1000).",
            float,
            fixed="has no angle scale",
        ),
        Param(
            "timesteps",
            None,
            "The rows' positions, instead of --offset and --seq-len: a range "
            "START:STOP[:STEP] (as Python's; 999:-1:-20 is a 50-step DDIM schedule), a list t1,t2,... "
            "or a .npy file of any t values, fractional ones exact.",
            str,
            fixed="takes consecutive positions only",
        ),
    )
    variants = VARIANTS
    shapes = ("2d", "batch-first", "seq-first")
    paired_columns = True

    def check(self, spec) -> None:
        convention = CONVENTIONS[spec.convention]
        convention.check(spec.d_model)
        if spec.padding_idx is not None and not convention.padding:
            padded = ", ".join(c.name for c in CONVENTIONS.values() if c.padding)
            raise BadInput(
                f"--padding-idx belongs to the {padded} convention, not {spec.convention!r}"
            )
        if not (0 < spec.timestep_scale < math.inf):
            raise BadInput(f"--timestep-scale must be a positive number, got {spec.timestep_scale}")
        if spec.min_timescale != 1.0:
            if not convention.timescales:
                timed = ", ".join(c.name for c in CONVENTIONS.values() if c.timescales)
                raise BadInput(f"--min-timescale belongs to the {timed} convention")
            if not (0 < spec.min_timescale < spec.base):
                raise BadInput(
                    f"--min-timescale must be between 0 and --base, got {spec.min_timescale}"
                )
        if spec.timesteps is not None:
            if spec.offset or spec.padding_idx is not None:
                raise BadInput(
                    "--timesteps gives every row's position: drop --offset and --padding-idx"
                )
            timesteps(spec)

    def rows(self, spec):
        return spec.seq_len if spec.timesteps is None else len(timesteps(spec)[0])

    def frequencies(self, spec):
        exponents = CONVENTIONS[spec.convention].exponents(spec.d_model)
        frequencies = power_law(exponents, spec.base, spec.min_timescale)
        q = 1 if spec.timesteps is None else timesteps(spec)[1]
        if spec.timestep_scale != 1.0 or q != 1:  # t = k / q: whole k at frequencies w / q
            with context():
                frequencies = [w * Decimal(spec.timestep_scale) / q for w in frequencies]
        return frequencies, Decimal(1)

    def exact_rows(self, spec, start, stop, work):
        sin, cos = work.planes(_positions(spec, start, stop))
        out = work.zeros(stop - start, spec.d_model)
        CONVENTIONS[spec.convention].place(out, sin, cos, spec.d_model)
        return _zero_padding_row(spec, out, start, stop)

    def fast_columns(self, spec):
        if spec.timesteps is not None:  # the kernel steps through consecutive positions
            return None
        from ..numerics.fast import Columns

        return Columns(spec.d_model, *CONVENTIONS[spec.convention].columns(spec.d_model))

    def fast_finish(self, spec, block, start, stop):
        return _zero_padding_row(spec, block, start, stop)

    def settings(self, spec):
        lines = [("convention", spec.convention), ("base", f"{spec.base:g}")]
        if spec.min_timescale != 1.0:
            lines.append(("min timescale", f"{spec.min_timescale:g}"))
        if spec.timestep_scale != 1.0:
            lines.append(("angle scale", f"{spec.timestep_scale:g} (every angle multiplied by it)"))
        if spec.timesteps is None:
            lines.append(("positions", f"{spec.offset} .. {spec.last_position}"))
        else:
            values = timesteps(spec)[2]
            lines.append(
                (
                    "positions",
                    f"timesteps {_shown(spec.timesteps)} ({len(values)}: {values[0]:g} .. "
                    f"{values[-1]:g})",
                )
            )
        if spec.padding_idx is not None:
            lines.append(("padding row", f"position {spec.padding_idx} (all zeros)"))
        return lines

    def identity(self, spec) -> str:
        where = (
            f"first position {spec.offset}"
            if spec.timesteps is None
            else f"timesteps {_shown(spec.timesteps)}"
        )
        return f"base {spec.base:g}, {where}"

    def row_label(self, spec):
        if spec.timesteps is None:
            return super().row_label(spec)
        values = timesteps(spec)[2]
        return lambda i: f"{values[i]:g}"

    def facts(self, spec) -> dict:
        frequencies, _ = self.frequencies(spec)
        sin_col, cos_col, _ = CONVENTIONS[spec.convention].columns(spec.d_model)
        return {
            "frequencies": [
                {
                    "index": i,
                    "sin_column": int(sin_col[i]),
                    "cos_column": int(cos_col[i]) if cos_col[i] >= 0 else None,
                    "frequency": float(w),
                    "wavelength": 2 * math.pi / float(w),
                }
                for i, w in enumerate(frequencies)
            ],
            "positions": [spec.offset, spec.last_position]
            if spec.timesteps is None
            else [float(timesteps(spec)[2].min()), float(timesteps(spec)[2].max())],
        }

    def audit(self, spec, compute):
        compute = compute or "float32"
        recipes = [
            (name, spec.replace(variant=name, compute_dtype=compute, dtype=compute))
            for name, found in VARIANTS.items()
            if found.kind == "seed"
        ]
        title = (
            f"seed formulas computed in {compute} vs the exact table (d_model={spec.d_model}, "
            f"positions {spec.offset}..{spec.last_position}, base {spec.base:g})"
        )
        return title, compute, recipes

    def explain(self, va, vb, la, lb):
        """Another base, or another frequency layout, where both tables' angles are clean lines."""
        fits_a = {f.layout: f for f in fit(va) if f.residual < _FIT_RESIDUAL}
        fits_b = {f.layout: f for f in fit(vb) if f.residual < _FIT_RESIDUAL}
        if not fits_a or not fits_b:
            return []
        for layout in fits_a.keys() & fits_b.keys():
            if math.isclose(fits_a[layout].base, fits_b[layout].base, rel_tol=1e-4):
                return []  # same frequencies: the difference is elsewhere
        shared = fits_a.keys() & fits_b.keys()
        if shared:
            layout = sorted(shared)[0]
            return [
                f"another base: with {_LAYOUT_CONVENTIONS[layout]} frequencies {la} fits base "
                f"{fits_a[layout].base:.6g} and {lb} base {fits_b[layout].base:.6g}"
            ]
        return [
            f"another frequency family or layout: {la} fits {', '.join(sorted(fits_a))}, "
            f"{lb} fits {', '.join(sorted(fits_b))}"
        ]

    def prefix(self, spec, rows):
        return spec.replace(seq_len=rows) if spec.timesteps is None else None

    def candidates(self, values, dtype, notes, bench):
        """Each layout the angles fit, with a plausible base, offset and padding row, and the
        seed recipes and libraries that could have written the table."""
        d = values.shape[1]
        for found in fit(values):
            names = [_LAYOUT_CONVENTIONS[found.layout]]
            if found.layout == "timescale":
                names = (
                    ["fairseq"] if len(found.padding) else ["tensor2tensor", "whisper", "fairseq"]
                )
            for name in names:
                try:
                    CONVENTIONS[name].check(d)
                except BadInput:
                    continue
                pad = (
                    int(found.offset + found.padding[0])
                    if CONVENTIONS[name].padding and len(found.padding)
                    else None
                )
                spec = bench.spec(
                    d_model=d,
                    seq_len=bench.length,
                    convention=name,
                    base=found.base,
                    offset=found.offset,
                    padding_idx=pad,
                    dtype="float64",
                )
                spec = self._choose_base(values, spec, dtype, bench)
                reference = bench.reference(spec)
                label = name + (f" (padding_idx={pad})" if pad is not None else "")
                yield bench.candidate(label, spec, reference=reference)
                for label, formula, source in self._formulas(spec, dtype, bench):
                    yield bench.candidate(label, formula, source, reference)
        yield from self._schedules(values, notes, bench)

    def _schedules(self, values, notes, bench):
        """A timestep embedding at a scheduler's timesteps (999, 979, ...): in each of
        diffusers' layouts, the base from the two lowest frequencies' angles (atan2 of each
        sin and cos pair), each row's t read from the lowest frequency up, and t as a range."""
        import numpy as np

        rows, d = values.shape
        if bench.sampled or rows < 2:
            return
        for name in ("timestep", "musicgen", "tensor2tensor", "concat"):
            try:
                CONVENTIONS[name].check(d)
            except BadInput:
                continue
            sin_col, cos_col, _ = CONVENTIONS[name].columns(d)
            exponents = CONVENTIONS[name].exponents(d)
            n = len(exponents)
            if n < 3 or min(cos_col) < 0:
                continue
            angles = np.arctan2(values[:, sin_col], values[:, cos_col])  # (rows, n)
            at = int(np.argmax(np.abs(angles[:, -1])))
            low, lower = angles[at, -1], angles[at, -2]
            fitted = []  # (angles that wrapped, past pi over the lowest frequency, fit no base)
            if (low > 0 and lower > 0) or (low < 0 and lower < 0):
                fitted = plausible_bases(
                    float((lower / low) ** (1 / float(exponents[-1] - exponents[-2])))
                )
            for base in [
                *sorted(fitted, key=lambda b: (digits(b), b)),  # roundest first, then max_period's
                *[b for b in _MAX_PERIODS if b not in fitted],
            ]:
                probe = bench.spec(
                    d_model=d, seq_len=2, convention=name, base=base, dtype="float64"
                )
                if probe is None:
                    continue
                w = np.array([float(x) for x in self.frequencies(probe)[0]])
                t = _read_timesteps(angles, w)
                if t is None:
                    continue  # the angles do not follow t * w: not this layout and base
                whole = np.round(t)
                steps = np.diff(whole)
                near = np.all(
                    np.abs(t - whole) <= 1e-3 + 2.0**-22 * np.abs(t)
                )  # (float32's large angles)
                ranged = near and np.all(steps == steps[0]) and steps[0] != 0
                # the angle is scale * t * w: a table of t = whole / scale times diffusers' scale
                # (QwenImage's 1000) is read as whole; those scales are tried where they divide it
                ranges = []
                for scale in [int(s) for s in _SCALES if not np.any(whole % s)] if ranged else ():
                    step = int(steps[0]) // scale
                    if step != 1 or scale != 1:  # (consecutive positions: the fit above)
                        ranges.append(
                            (
                                f"{int(whole[0]) // scale}:{int(whole[-1]) // scale + step}:{step}",
                                scale,
                            )
                        )
                # else a list (after the ranges, which come first where both are the table)
                texts = (
                    []
                    if ranged and steps[0] == 1
                    else self._readings(values, t, whole if near else None, name, base, bench)
                )
                for text, scale in ranges + texts:
                    spec = bench.spec(
                        d_model=d,
                        convention=name,
                        base=base,
                        timesteps=text,
                        timestep_scale=float(scale),
                        dtype="float64",
                    )
                    if spec is None:
                        continue
                    reference = bench.reference(spec)
                    scaled = f", scale {scale:g}" if scale != 1 else ""
                    yield bench.candidate(
                        f"{name}, timesteps {_shown(text)}{scaled}", spec, reference=reference
                    )
                    yield from bench.libraries(spec, reference)
                if ranged or texts:
                    break

    def _readings(self, values, t, whole, name: str, base: float, bench) -> list[tuple[str, float]]:
        """The rows' timesteps as (--timesteps list, scale), where the table is not a range of
        them: the whole numbers read (`whole`) where the exact table or a library's arithmetic
        makes every row with them and they are not a range; else, for each of diffusers'
        scales s, each row's t the float32 near the estimate over s (within 3 steps) that such
        arithmetic makes the row with (its own float32 angles put the estimate an ulp or two
        off: 980 read for linspace's 980.00006; QwenImage's sigma at scale 1000)."""
        import numpy as np

        rows, d = values.shape
        if whole is not None:
            made = self._made(values, whole[:, None], name, base, bench)
            if made:
                steps = np.diff(whole)
                return [] if np.all(steps == steps[0]) and steps[0] != 0 else made
        return [
            found
            for scale in _SCALES
            for found in self._made(values, float32_near(t / scale), name, base, bench, scale)
        ]

    def _made(
        self, values, tried, name: str, base: float, bench, scale: float = 1.0
    ) -> list[tuple[str, float]]:
        """For the exact table and each library of this layout, the --timesteps list of the t
        among each row's `tried` (rows, k) that makes that row bit for bit at this scale, where
        every row has one; with the scale."""
        import numpy as np

        rows, d = values.shape
        found = []
        for built_by in (
            "exact",
            *(v for v, f in VARIANTS.items() if f.kind == "library" and name in f.conventions),
        ):
            spec = bench.spec(
                d_model=d,
                convention=name,
                base=base,
                timesteps=_listed(tried.ravel()),
                timestep_scale=scale,
                variant=built_by,
                dtype=bench.dtype,
            )
            if spec is None:
                continue
            same = np.all(
                bench.values_of(spec).reshape(rows, tried.shape[1], d) == values[:, None, :], axis=2
            )
            if same.any(axis=1).all():
                text = (_listed(tried[np.arange(rows), np.argmax(same, axis=1)]), scale)
                if text not in found:
                    found.append(text)
        return found

    @staticmethod
    def _choose_base(values, spec, dtype: str, bench):
        """The base the fit suggests, or the roundest number near it that explains the first
        rows as well (within float rounding): a cheap look before the whole table is built."""
        import numpy as np

        from ..core.dtypes import FORMATS

        head = min(len(values), 64)
        scored = [
            (
                float(
                    np.abs(
                        values[:head] - bench.reference(spec.replace(base=b, seq_len=head))
                    ).max()
                ),
                b,
            )
            for b in plausible_bases(spec.base)
        ]
        best = min(error for error, _ in scored)
        allowed = 2 * best + 4 * FORMATS[dtype].epsilon
        base = min((b for error, b in scored if error <= allowed), key=lambda b: (digits(b), b))
        return spec.replace(base=base)

    @staticmethod
    def _formulas(spec, dtype: str, bench):
        """(label, spec, source) for each seed recipe and library that could have written a
        `dtype` table of this convention, size, base and offset."""
        for name, found in VARIANTS.items():
            if found.kind == "seed":
                if spec.convention in found.conventions and dtype in (
                    "float32",
                    "float16",
                    "bfloat16",
                ):
                    yield (
                        f"seed variant {name} in {dtype}",
                        spec.replace(variant=name, compute_dtype=dtype, dtype=dtype),
                        "",
                    )
                continue
            if dtype != "float32" or spec.convention not in found.conventions:
                continue  # every library computes in float32
            candidate = bench.spec(
                d_model=spec.d_model,
                seq_len=spec.seq_len,
                variant=name,
                convention=spec.convention,
                base=spec.base,
                offset=spec.offset,
                padding_idx=spec.padding_idx,
                shape="2d",
            )
            if candidate is not None:  # None: the library cannot make this table
                yield f"library {name}", candidate, found.source


_SCALES = (1.0, 10.0, 100.0, 1000.0)  # diffusers' timestep scales (QwenImage's and AuraFlow's 1000)
_MAX_PERIODS = (10000.0, 2000.0)  # diffusers' max_period: its default, T5Film's
_TURNS = 64  # whole turns of the lowest frequency's angle a timestep table's rows may have taken
_SOME = 64  # rows, spread over a table, that say whether turns are worth reading for all


def _read_timesteps(angles, w):
    """Each row's position (scale * t) where the angles follow it at frequencies w: read from
    the lowest frequency up, or, past pi over the lowest frequency (QwenImage's scale 1000 for
    t past about 30), with up to _TURNS whole turns of it (tried on some rows first); None
    where they do not."""
    import numpy as np

    t = read_positions(angles, w)
    if _follows(t, angles, w):
        return t
    some = np.unique(np.linspace(0, len(angles) - 1, _SOME).astype(int))
    if not _follows(read_positions(angles[some], w, _TURNS), angles[some], w):
        return None
    t = read_positions(angles, w, _TURNS)
    return t if _follows(t, angles, w) else None


def _follows(t, angles, w) -> bool:
    """The angles are t * w, to 1e-2 and the rounding of float32 angles (2^-23 of each)."""
    import numpy as np

    angle = t[:, None] * w
    return bool(
        np.all(np.abs(np.exp(1j * angle) - np.exp(1j * angles)) <= 1e-2 + 2.0**-21 * np.abs(angle))
    )


FAMILY = Sinusoidal()
