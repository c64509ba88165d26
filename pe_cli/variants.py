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
