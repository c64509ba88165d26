"""Seed notebooks' formulas, each computed the way its notebook computes it: the notebook's
torch operations op for op, in --compute-dtype, with its slip fixed, so that on CPU in float32
the result is bit-identical to the notebook. The op order matters: p * exp(-k) and p / exp(k)
round differently, and torch computes vectorized and scalar tails of one op with different
sin/cos implementations, so even the tensor shapes follow the notebook. For odd d the
notebooks' `pe[:, 1::2] = cos(...)` cannot assign ceil(d/2) columns into floor(d/2); the fix
kept here drops the last cos column (the last column is a sin, as in the paper).

Each formula is one entry in SEEDS beside its function.
"""

from __future__ import annotations

import math

from ..base import variant

SEEDS: dict = {}
_SEED = dict(kind="seed", conventions=("vaswani",), parameters=frozenset({"base", "offset"}))


def _seed_setting(spec):
    import torch

    from ...core.dtypes import torch_dtype

    # the notebooks write torch.pow(10000, ...) with a Python int; keep integral bases integral
    # (up to int64's: torch refuses a larger int scalar, where a float is what one would write)
    base = int(spec.base) if spec.base.is_integer() and spec.base < 2**63 else spec.base
    return torch, torch_dtype(spec.compute_dtype or "float32"), base


def _interleave(torch, sin, cos, d: int, dtype):
    pe = torch.zeros(sin.shape[0], d, dtype=dtype, device=sin.device)
    pe[:, 0::2] = sin
    pe[:, 1::2] = cos[:, : d // 2]
    return pe


@variant(SEEDS, "pow", source="seed 004; seed 000's intended formula", **_SEED)
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


@variant(SEEDS, "exp-log", source="seeds 000, 003; the Annotated Transformer", **_SEED)
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


@variant(SEEDS, "neg-pow", source="seed 001", **_SEED)
def _neg_pow(spec, device):
    # seed 001's PositionalEncoding: a^-x instead of 1/a^x
    torch, dtype, base = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    pos = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    frequency = torch.pow(base, -torch.arange(0, d, 2, dtype=dtype, device=device) / d)
    return _interleave(torch, torch.sin(pos * frequency), torch.cos(pos * frequency), d, dtype)


@variant(SEEDS, "exp-div", source="seed 002", **_SEED)
def _exp_div(spec, device):
    # seed 002 (torch.zero fixed to torch.zeros): divide by exp(2i/d * ln(base))
    torch, dtype, _ = _seed_setting(spec)
    d, start, length = spec.d_model, spec.offset, spec.seq_len
    pos = torch.arange(start, start + length, dtype=dtype, device=device).unsqueeze(1)
    denominator = torch.exp(
        torch.arange(0, d, 2, device=device).to(dtype) / d * math.log(spec.base)
    )
    return _interleave(torch, torch.sin(pos / denominator), torch.cos(pos / denominator), d, dtype)


@variant(SEEDS, "stack", source="seed 004's class", **_SEED)
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
