"""Libraries' arithmetic that several families' variants share: diffusers' 1-D sin-cos
embedding (its 2-D and 3-D tables are made of it) and positional-encodings' per-axis table.
Each takes torch as an argument: the families import it inside the variants that need it.
"""

from __future__ import annotations


def diffusers_sincos(torch, width: int, positions, dtype=None):
    """diffusers' get_1d_sincos_pos_embed_from_grid: omega = 1 / 10000**(i / (width/2)) in float64
    (or `dtype`), torch.outer with the positions (promoted to omega's dtype), [sin | cos]; the
    2-D and 3-D tables are made of it."""
    omega = torch.arange(width // 2, dtype=dtype or torch.float64)
    omega /= width / 2.0
    omega = 1.0 / 10000**omega
    angles = torch.outer(positions.reshape(-1), omega)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def positional_encodings_axis(torch, size: int, inv_freq):
    """positional-encodings' get_emb for positions 0 .. size-1: an einsum outer product with
    inv_freq, sin and cos stacked and flattened, (size, 2n) float32, as its 1-D, 2-D and 3-D
    encodings compute each axis."""
    sin_inp = torch.einsum("i,j->ij", torch.arange(size, dtype=inv_freq.dtype), inv_freq)
    return torch.flatten(torch.stack((sin_inp.sin(), sin_inp.cos()), dim=-1), -2, -1)
