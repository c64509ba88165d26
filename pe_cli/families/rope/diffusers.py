"""Rotary tables as diffusers 0.42 computes them: get_1d_rotary_pos_embed per position axis,
frequencies 1 / (theta * ntk_factor)**(arange(0, dim, 2) / dim) / linear_factor in its
freqs_dtype (or a model's own law), torch.outer with the positions (promoted to freqs_dtype),
cos and sin (or torch.polar for the complex tables) there, then float32; the axes' blocks
concatenated, and pooled where a model pools them. The variant diffusers."""

from __future__ import annotations

from ..base import variant
from .layouts import axes_plan, layout_of
from .pairing import both_parts, lay_out
from .split import divisors, pool_blocks, row_major, split_tokens
from .tokens import line_positions
from .types import ROPE_TYPES

VARIANTS: dict = {}


def _diffusers_refusal(spec) -> str | None:
    if spec.part == "inv_freq":
        return "--variant diffusers builds cos and sin tables (get_1d_rotary_pos_embed returns no frequencies)"
    style = layout_of(spec)
    if style is not None and not style.split:
        return f"--variant diffusers builds 1-D and diffusers' own multi-axis layouts, not --rope-axes {spec.axes}"
    if style is not None and style.law is not None and style.law.library != "diffusers":
        return f"--rope-axes {spec.axes} is no diffusers model's: --variant {style.law.library} builds it"
    kind = dict(spec.rope).get("rope_type", "default")
    if not ROPE_TYPES[kind].diffusers:
        return f"diffusers' get_1d_rotary_pos_embed has no rope_type {kind} (it takes linear_factor and ntk_factor)"
    if dict(spec.rope).get("partial_rotary_factor", 1.0) != 1.0:
        return "diffusers' get_1d_rotary_pos_embed has no partial_rotary_factor"
    return None


@variant(
    VARIANTS,
    "diffusers",
    source="diffusers 0.42 get_1d_rotary_pos_embed (FluxPosEmbed, WanRotaryPosEmbed, "
    "HunyuanVideoRotaryPosEmbed, get_3d_rotary_pos_embed, ...)",
    conventions=("interleaved", "half", "single"),
    refuse=_diffusers_refusal,
    parameters=frozenset({"base", "offset", "text_tokens", "padding_rows"}),
    ends_float64=lambda spec: (
        spec.convention == "single"
        and spec.freqs_dtype == "float64"
        and spec.part != "angle"
        and not (spec.axes and layout_of(spec).angles32)
    ),
)
@both_parts
def _diffusers_rope(spec, device):
    import numpy as np
    import torch

    rope = dict(spec.rope)
    dtype = getattr(torch, spec.freqs_dtype or "float32")
    if spec.axes:
        laws, columns = axes_plan(spec)
        positions = torch.from_numpy(split_tokens(spec).floats())
    else:
        laws, columns = [(spec.d_model, spec.base)], None
        positions = torch.from_numpy(line_positions(spec))[:, None]
    planes = []
    style = layout_of(spec)
    unit = rope.get("pool_unit", False)
    for axis, (dim, theta) in enumerate(laws):
        if style is not None and style.law is not None:  # the model's own law
            freqs = style.law.torch(torch, spec, axis, dim, theta)
        else:
            freqs = 1.0 / (
                (theta * rope.get("ntk_factor", 1.0))
                ** (torch.arange(0, dim, 2, dtype=dtype) / dim)
            )
            freqs = freqs / rope.get("factor", 1.0)
        if unit:  # AnyFlow-FAR: each axis's own table at its blocks' positions, pooled alone below
            block = pool_blocks(spec)[axis]
            at = torch.from_numpy(
                (block / split_tokens(spec).denominators[axis]).reshape(-1).astype(np.float32)
            )
        else:
            at = positions[:, axis]
        angles = torch.outer(at, freqs)
        if (
            style is not None and style.angle_scale
        ):  # Kandinsky 5: the float32 angles over its scale_factor
            angles = angles / divisors(spec)[axis]
        if (
            style is not None and style.angles32
        ):  # Z-Image: float64 angles rounded, then float32 polar
            angles = angles.float()
        if spec.part == "angle":  # the angles themselves, float32 (ERNIE-Image's rope())
            plane = angles.float()
        elif spec.convention == "single" and not (
            style and style.once
        ):  # use_real=False: complex64, or
            value = torch.polar(
                torch.ones_like(angles), angles
            )  # complex128 from float64 frequencies (kept)
            if unit:
                value = _unit_pooled(torch, value, block.shape[1])
            plane = value.real if spec.part == "cos" else value.imag
        else:  # use_real=True: cos and sin, then float32
            plane = (angles.cos() if spec.part == "cos" else angles.sin()).float()
        # a zero frequency (LTX-Video's padding) is cos 1 and sin +0, also at negative positions
        plane[:, freqs == 0] = 1.0 if spec.part == "cos" else 0.0
        planes.append(plane)
    if columns is None:
        return lay_out(planes[0], spec.convention)
    every = torch.cat(planes, dim=1)[:, torch.tensor([j for _, j in columns])]
    every = every if pool_blocks(spec) is None or unit else _pooled(torch, spec, every)
    return torch.cat(
        [every, every.new_zeros(spec.padding_rows, every.shape[1])]
    )  # Lumina2's cap_freqs_cis


def _unit_pooled(torch, value, k: int):
    """AnyFlow-FAR's avg_pool_complex: a complex (blocks * k, n) table's real and imaginary
    parts averaged over each k rows (avg_pool1d), then each over their length."""

    def pooled(part):
        return torch.nn.functional.avg_pool1d(part.T[None], k, k)[0].T

    real, imag = pooled(value.real), pooled(value.imag)
    length = torch.sqrt(real**2 + imag**2)
    return torch.complex(real / length, imag / length)


def _pooled(torch, spec, table):
    """FramePack's and Helios's pooling of a (tokens, columns) float32 table over its grid:
    each axis padded at its end by replicating, to a multiple of its block, then avg_pool."""
    pool = dict(spec.rope)["pool"]
    shape = [len(v) for v in row_major(split_tokens(spec).numerators)]
    grid = table.T.reshape(1, table.shape[1], *shape)
    pad = [p for size, k in zip(shape[::-1], pool[::-1]) for p in (0, -size % k)]
    grid = torch.nn.functional.pad(grid, pad, mode="replicate") if any(pad) else grid
    average = {
        1: torch.nn.functional.avg_pool1d,
        2: torch.nn.functional.avg_pool2d,
        3: torch.nn.functional.avg_pool3d,
    }[len(shape)]
    return average(grid, pool, stride=pool).flatten(2)[0].T
