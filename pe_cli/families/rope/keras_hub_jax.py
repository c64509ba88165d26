"""Rotary tables as keras-hub 0.32.0 computes them on Keras 3.15's JAX backend (jax[cpu] 0.10.2):
the variant keras-hub-jax.

The layers are keras-hub's (keras_hub.py says what they compute); on the JAX backend each Keras
op is an XLA op, compiled for the CPU. XLA's CPU backend computes float32 sin, cos and pow by
calling the C library's sinf, cosf and powf, one element at a time: measured bit for bit
against jax's jnp.sin, jnp.cos and jnp.power over a million arguments to |x| 1e7 (x86-64,
glibc); its division, multiplication and selects are IEEE float32 operations, as numpy's are.
So, in float32, with powf, sinf and cosf the C library's (numerics/libm.py):

    default   powf(base, -(arange(0, d, 2) * (1 / d)))  (the torch backend: torch.pow, which
                                                         differs from powf in the last bit)
    linear    the same * (1 / factor)
    dynamic   the same * (1 / powf(factor, d * (1 / max(1, d - 2))))
    llama3    1 / powf(base, arange(0, d, 2) / d), then LlamaRotaryEmbedding's blend

Positions are float32, angles their float32 products with the frequencies (einsum), cos and
sin sinf's and cosf's, cast to the compute dtype. XLA compiles a division by a scalar known
at compile time (the factor, the width) as a multiplication by its float32 reciprocal, one more
rounding, and so does the variant. YaRN takes its correction bounds through XLA's
log, which is not logf (0.9% of arguments differ by an ulp): it is not reproduced.
"""

from __future__ import annotations

from ..base import variant
from .frameworks import plain_rotary
from .keras_hub import refusal as keras_hub_refusal
from .pairing import both_parts, lay_out
from .tokens import line_positions

VARIANTS: dict = {}


def _over(values, constant):
    """values / constant as XLA compiles a division by a scalar known at compile time: times
    the constant's float32 reciprocal (one more rounding than the division)."""
    import numpy as np

    return values * (np.float32(1) / np.float32(constant))


def inv_freq(rope: dict, d: int, base: float):
    """keras-hub's inverse frequencies on the JAX backend (numpy float32, d / 2 of them)."""
    import numpy as np

    from ...numerics import libm

    f32 = np.float32
    kind = rope.get("rope_type", "default")
    index = _over(np.arange(0, d, 2, dtype=f32), d)
    if kind == "llama3":
        frequencies = f32(1.0) / libm.powf(base, index)
        original, factor = f32(rope["original_max_position_embeddings"]), rope["factor"]
        low, high = f32(rope["low_freq_factor"]), f32(rope["high_freq_factor"])
        wavelength = f32(2 * np.pi) / frequencies
        scaled = np.where(wavelength > original / low, _over(frequencies, factor), frequencies)
        smooth = _over(original / wavelength - low, high - low)
        smoothed = (f32(1) - smooth) * _over(scaled, factor) + smooth * scaled
        medium = (wavelength >= original / high) & (wavelength <= original / low)
        return np.where(medium, smoothed, scaled).astype(f32)
    frequencies = libm.powf(base, -index)
    if kind == "linear":
        return _over(frequencies, rope["factor"])
    if kind == "dynamic":
        exponent = _over(np.array([d], dtype=f32), max(1, d - 2))
        return _over(frequencies, libm.powf(rope["factor"], exponent)[0])
    return frequencies


def _refusal(spec) -> str | None:
    kind = dict(spec.rope).get("rope_type", "default")
    if kind == "yarn":
        return (
            "keras-hub's YaRN on the JAX backend takes its correction bounds through XLA's log, "
            "which pe-cli does not reproduce (--variant keras-hub is its torch backend's)"
        )
    return plain_rotary(spec, "keras-hub-jax") or keras_hub_refusal(spec)


@variant(
    VARIANTS,
    "keras-hub-jax",
    source="keras-hub 0.32.0 RotaryEmbedding and LlamaRotaryEmbedding (llama3) on Keras 3.15.1's "
    "JAX backend (jax[cpu] 0.10.2): XLA's CPU pow, sin and cos, the C library's powf, sinf, cosf",
    conventions=("half",),
    refuse=_refusal,
    parameters=frozenset({"base", "offset"}),
    framework="keras-hub (JAX)",
)
@both_parts
def _keras_hub_jax_rope(spec, device):
    import numpy as np
    import torch

    from ...numerics import libm

    frequencies = inv_freq(dict(spec.rope), spec.d_model, spec.base)
    if spec.part == "inv_freq":
        return torch.from_numpy(frequencies[None, :])
    positions = line_positions(spec).astype(np.float32)
    angles = positions[:, None] * frequencies[None, :]
    if spec.part == "angle":
        plane = angles
    else:
        plane = libm.cosf(angles) if spec.part == "cos" else libm.sinf(angles)
    return torch.from_numpy(np.ascontiguousarray(lay_out(plane, spec.convention)))
