"""The sinusoidal family's --timesteps: the rows' positions as a range, a list or a file, read
once (families.positions); and the tables of diffusion models' timestep embeddings (diffusers'
get_timestep_embedding and get_1d_sincos_pos_embed_from_grid, VibeVoice's), each one entry in
TIMESTEP_LIBRARIES beside its function.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

from ...core.params import Param
from ..base import even_width, variant
from ..libraries import diffusers_sincos
from ..positions import binary_places, shown_timesteps, timestep_values

# the options of this input, declared beside the code that reads them
TIMESTEP_SCALE = Param(
    "timestep_scale",
    1.0,
    "Every angle multiplied by this (diffusers' get_timestep_embedding scale; QwenImage: 1000).",
    float,
    fixed="has no angle scale",
)
TIMESTEPS = Param(
    "timesteps",
    None,
    "The rows' positions, instead of --offset and --seq-len: a range "
    "START:STOP[:STEP] (as Python's; 999:-1:-20 is a 50-step DDIM schedule), a list t1,t2,... "
    "or a .npy file of any t values, fractional ones exact.",
    str,
    fixed="takes consecutive positions only",
)


class Timesteps(NamedTuple):
    """The rows' timesteps, each exactly an integer over its own power of two (a float32
    sigma of 0.001 needs 2^-33, one of 0.999 2^-24: no common denominator keeps both below
    2^32)."""

    values: Any  # float64 (rows,): the t as given
    numerators: Any  # int64 (rows,)
    places: Any  # int64 (rows,): t = numerator / 2**place


class RowGroup(NamedTuple):
    """Rows of a block whose timesteps share a denominator: their indices in the block, their
    numerators and that denominator (a power of two)."""

    rows: Any
    positions: list
    denominator: int


@lru_cache(maxsize=4)
def timesteps(spec) -> Timesteps:
    """The rows' timesteps --timesteps gives."""
    values = timestep_values(spec.timesteps)
    numerators, places = binary_places(values, f"--timesteps {shown_timesteps(spec.timesteps)}")
    return Timesteps(values, numerators, places)


def listed(values) -> str:
    """Timesteps as a --timesteps list: each the shortest number that reads back as it."""
    return ",".join(repr(float(t)) if not float(t).is_integer() else str(int(t)) for t in values)


def row_groups(spec, start: int, stop: int) -> list[RowGroup]:
    """Rows start..stop's positions, grouped by denominator: --offset onwards (one group over
    1), or --timesteps' numerators over each one's power of two."""
    import numpy as np

    if spec.timesteps is None:
        return [RowGroup(slice(None), list(range(spec.offset + start, spec.offset + stop)), 1)]
    found = timesteps(spec)
    numerators, places = found.numerators[start:stop], found.places[start:stop]
    groups = []
    for place in np.unique(places).tolist():
        rows = np.flatnonzero(places == place)
        whole = slice(None) if len(rows) == stop - start else rows
        groups.append(RowGroup(whole, numerators[rows].tolist(), 1 << place))
    return groups


TIMESTEP_LIBRARIES: dict = {}


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
        t = torch.from_numpy(timesteps(spec).values).float()
    angles = spec.timestep_scale * (t[:, None] * freq[None])
    halves = (
        [torch.cos(angles), torch.sin(angles)] if flip else [torch.sin(angles), torch.cos(angles)]
    )
    table = torch.cat(halves, dim=-1)
    if spec.d_model % 2:
        table = torch.cat([table, torch.zeros(len(t), 1)], dim=1)
    return table


@variant(
    TIMESTEP_LIBRARIES,
    "hf-timestep",
    source="transformers 5.23 VibeVoiceDiffusionHeadSinusoidalEmbedding (base: diffusion_max_period)",
    conventions=("timestep",),
    parameters=frozenset({"base", "offset", "timesteps"}),
    follows="diffusers",
)
def _hf_timestep(spec, device):
    # diffusers' arithmetic with flip_sin_to_cos and no frequency shift
    return _timestep_table(spec, flip=True, shift=0)


class _DiffusersLayout(NamedTuple):
    """diffusers' Timesteps(num_channels, flip_sin_to_cos, downscale_freq_shift) arguments."""

    flip_sin_to_cos: bool
    downscale_freq_shift: int


# the arguments that make each layout diffusers makes
_DIFFUSERS = {
    "timestep": _DiffusersLayout(True, 0),
    "musicgen": _DiffusersLayout(True, 1),
    "tensor2tensor": _DiffusersLayout(False, 1),
    "concat": _DiffusersLayout(False, 0),
}


def _diffusers_refusal(spec):
    if spec.d_model // 2 - _DIFFUSERS[spec.convention].downscale_freq_shift < 1:
        return (
            f"diffusers divides by d//2 - downscale_freq_shift, 0 for --d-model {spec.d_model} "
            f"with the {spec.convention} layout"
        )
    if spec.convention == "concat" and spec.d_model % 2:
        return "diffusers pads an odd width with a zero column after [sin | cos]; concat has no such column"
    return None


@variant(
    TIMESTEP_LIBRARIES,
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
    arguments = _DIFFUSERS[spec.convention]
    return _timestep_table(spec, arguments.flip_sin_to_cos, arguments.downscale_freq_shift)


# diffusers' get_1d_sincos_pos_embed_from_grid (Latte's temporal table, SkyReels-V2's timesteps):
# omega = 1 / 10000**(arange(D/2) / (D/2)) in float64 (float32 on MPS, which has no float64),
# torch.outer with the positions (promoted to omega's dtype), [sin | cos] or, with
# flip_sin_to_cos, [cos | sin]; float32 as the models keep it


def _grid_table(spec, dtype_name: str):
    import torch

    if spec.timesteps is None:
        positions = torch.arange(spec.offset, spec.offset + spec.seq_len).float()
    else:
        positions = torch.from_numpy(timesteps(spec).values).float()
    table = diffusers_sincos(torch, spec.d_model, positions, getattr(torch, dtype_name))
    if spec.convention == "timestep":  # flip_sin_to_cos: [cos | sin]
        table = torch.cat([table[:, spec.d_model // 2 :], table[:, : spec.d_model // 2]], dim=1)
    return table.float()


for _name, _dtype, _where in (
    ("diffusers-grid", "float64", ""),
    ("diffusers-grid-mps", "float32", ", on MPS"),
):
    variant(
        TIMESTEP_LIBRARIES,
        _name,
        source=f"diffusers 0.42 get_1d_sincos_pos_embed_from_grid, omega in {_dtype}{_where} "
        "(concat; timestep: flip_sin_to_cos)",
        conventions=("concat", "timestep"),
        parameters=frozenset({"offset", "timesteps"}),
        refuse=even_width("get_1d_sincos_pos_embed_from_grid"),
    )(lambda spec, device, dtype=_dtype: _grid_table(spec, dtype))
