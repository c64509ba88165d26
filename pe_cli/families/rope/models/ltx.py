"""LTX-Video 0.9 (LTXVideoRotaryPosEmbed) and LTX-2 (LTX2AudioVideoRotaryPosEmbed): one law
(pi/2) theta**(j/(n-1)) on every axis over the whole inner dim, frames, rows and columns
alternating per frequency, at 2p - 1 of each patch's place p in [0, 1) of the model's base
size. Head h takes its own slice of the inner dim's columns."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ....numerics.frequencies import PI, context
from ..keys import KEYS
from ..layouts import Law, Preset, Split, split_laws
from ..places import exact, exact_over, progression, written

EMPTY_AXES = "LTX-2's cross-attention (--preset ltx2-cross)"


def _ltx_ratio(spec, axis: int):
    """LTX-Video's scale of patch k on an axis (patch size 1): frames k * (8/fps) / 20 (its VAE's
    temporal compression over the frame rate, over base_num_frames), rows and columns k * 32 /
    2048 (spatial compression over base_height and base_width)."""
    if axis == 0:
        return 8 / written(dict(spec.rope).get("fps", 25.0)) / 20
    return Fraction(32, 2048)


def _ltx_place(spec, axis: int, size: int):
    """LTX-Video's positions 2p - 1 (in [-1, 1)) of p = k * ratio, exactly."""
    twice = 2 * _ltx_ratio(spec, axis)
    return progression(spec, Fraction(-1), twice, size)


def _ltx_floats(spec, axis: int, size: int):  # its float32 grid * scale * patch / base, then 2p - 1
    import torch

    grid = torch.arange(size, dtype=torch.float32)
    if axis == 0:
        grid = grid * (8 / dict(spec.rope).get("fps", 25.0)) * 1 / 20
    else:
        grid = grid * 32 * 1 / 2048
    return (grid * 2 - 1).numpy()


def _ltx_count(spec) -> int:
    """LTX's frequencies per axis: n = d_model // (2 * axes) (682 for LTX-2's video, 1024 for
    its audio and its cross-attention's frames, whose rows and columns take no columns: axes_dim
    0); the d_model % (2 * axes) columns left are padding."""
    return spec.d_model // (2 * sum(1 for dim, _ in split_laws(spec) if dim))


def _ltx_law(spec, axis: int, dim: int, theta: float) -> list[Decimal]:
    """(pi/2) * theta**(j/(n-1)), n = _ltx_count, on every axis; the first axis's block also
    holds the padding columns (frequency 0: cos 1, sin 0)."""
    n = _ltx_count(spec)
    if not dim:
        return []
    with context():
        log_theta = Decimal(theta).ln()
        law = [PI / 2 * (log_theta * j / (n - 1)).exp() for j in range(n)]
    return [Decimal(0)] * (dim // 2 - n) + law


def _ltx_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # LTXVideoRotaryPosEmbed: theta ** linspace(log_theta(1), log_theta(theta), n) in float32,
    # times pi, over 2; zeros for the padding
    n = _ltx_count(spec)
    if not dim:
        return torch.zeros(0)
    freqs = theta ** torch.linspace(
        math.log(1.0, theta), math.log(theta, theta), n, dtype=torch.float32
    )
    freqs = freqs * math.pi / 2.0
    return torch.cat([torch.zeros(dim // 2 - n), freqs])


def _ltx2_place(spec, axis: int, size: int):
    """LTX-2's positions 2p - 1, exactly, of p = each patch's midpoint in pixels over its base:
    frames over the causal VAE's [max(8k - 7, 0), 8k + 1), in seconds at --rope fps (24), over
    20; rows and columns over [32k, 32k + 32), over 2048."""
    import numpy as np

    if axis:  # (32k + 16) / 2048, doubled, less 1
        return progression(spec, Fraction(16, 1024) - 1, Fraction(32, 1024), size)
    fps = written(dict(spec.rope).get("fps", 24.0))
    k = np.arange(size, dtype=np.int64)
    twice = np.maximum(8 * k - 7, 0) + 8 * k + 1  # the frame's first and last pixel, added
    if max(fps.numerator, fps.denominator) < 2**24:  # twice / (20 fps) - 1, held in int64
        return exact_over(spec, twice * fps.denominator - 20 * fps.numerator, 20 * fps.numerator)
    return exact(spec, [Fraction(int(t)) / fps / 20 - 1 for t in twice])


def _ltx2_floats(
    spec, axis: int, size: int
):  # its float32 pixel bounds, seconds, midpoints, 2p - 1
    import torch

    k = torch.arange(size, dtype=torch.float32)
    if axis == 0:
        fps = dict(spec.rope).get("fps", 24.0)
        start, end, base = (
            (k * 8 + 1 - 8).clamp(min=0) / fps,
            ((k + 1) * 8 + 1 - 8).clamp(min=0) / fps,
            20,
        )
    else:
        start, end, base = k * 32, (k + 1) * 32, 2048
    return ((start + end) / 2.0 / base * 2 - 1).numpy()


def _ltx2_audio_place(spec, axis: int, size: int):
    """LTX-2's audio: 2p - 1, exactly, of each latent frame's midpoint in seconds over 20: its
    mel frames [max(4k - 3, 0), 4k + 1) at 160 / 16000 s each (hop length over sampling rate)."""
    import numpy as np

    k = np.arange(size, dtype=np.int64)
    twice = np.maximum(4 * k - 3, 0) + 4 * k + 1  # the first and last mel frame, added
    return exact_over(spec, twice - 2000, 2000)  # twice * 160 / 16000 / 20 - 1


def _ltx2_audio_floats(
    spec, axis: int, size: int
):  # its float32 mel frames, seconds, midpoints, 2p - 1
    import torch

    k = torch.arange(size, dtype=torch.float32)
    start = (k * 4 + 1 - 4).clip(min=0) * 160 / 16000
    end = ((k + 1) * 4 + 1 - 4).clip(min=0) * 160 / 16000
    return ((start + end) / 2.0 / 20 * 2 - 1).numpy()


def _ltx2_torch_law(torch, spec, axis: int, dim: int, theta: float):
    # LTX2AudioVideoRotaryPosEmbed: theta ** linspace(0, 1, n) and pi/2 in float64 (its default
    # double_precision; --freqs-dtype float32 without it), then float32; zeros for the padding
    n = _ltx_count(spec)
    if not dim:
        return torch.zeros(0)
    dtype = getattr(torch, spec.freqs_dtype or "float64")
    freqs = (theta ** torch.linspace(0.0, 1.0, n, dtype=dtype) * math.pi / 2.0).float()
    return torch.cat([torch.zeros(dim // 2 - n), freqs])


def _ltx_columns(laws, convention):
    """The padding columns first, then per frequency each axis's angle, twice: [t0 t0 h0 h0 w0
    w0 t1 ...] (one axis: [t0 t0 t1 t1 ...]); once each with --convention single (LTX-2's
    rope_type "split": [t0 h0 w0 t1 ...], which its module cuts into heads)."""
    turning = [axis for axis, (dim, _) in enumerate(laws) if dim]  # axes with columns
    n = sum(dim for dim, _ in laws) // (2 * len(turning))
    pad = laws[0][0] // 2 - n
    # axis a's frequencies start past the earlier axes' (the first axis's, past its padding)
    firsts = [
        sum(dim for dim, _ in laws[:axis]) // 2 + (pad if axis == 0 else 0)
        for axis in range(len(laws))
    ]
    times = range(1 if convention == "single" else 2)
    padding = [(0, z) for z in range(pad) for _ in times]
    return padding + [(axis, firsts[axis] + j) for j in range(n) for axis in turning for _ in times]


LTX_VIDEO_LAW = Law(torch=_ltx_torch_law, exact=_ltx_law, empty_axes=EMPTY_AXES)
LTX2_LAW = Law(
    torch=_ltx2_torch_law, exact=_ltx_law, dtypes=("float64", "float32"), empty_axes=EMPTY_AXES
)

LTX_VIDEO_LAYOUT = Split(
    name="ltx-video",
    summary="LTX-Video: (pi/2) theta^(j/(n-1)) over the whole inner dim, frames, rows and columns "
    "alternating per frequency, at 2p - 1 of p = k * 8/fps / 20 (frames), k * 32/2048 (rows, columns)",
    axes=("t", "h", "w"),
    columns=_ltx_columns,
    convention="interleaved",
    place=_ltx_place,
    floats=_ltx_floats,
    law=LTX_VIDEO_LAW,
    keys=(KEYS["fps"],),
)
LTX2_LAYOUT = Split(
    name="ltx2",
    summary="LTX-2's video: LTX-Video's columns and law (float64, then float32), at 2p - 1 of each patch's "
    "midpoint: frames over the causal VAE's [max(8k - 7, 0), 8k + 1) at fps (24) over 20, rows and columns "
    "(32k + 16) / 2048",
    axes=("t", "h", "w"),
    columns=_ltx_columns,
    convention="interleaved",
    place=_ltx2_place,
    floats=_ltx2_floats,
    law=LTX2_LAW,
    once=True,
    keys=(KEYS["fps"],),
)
LTX2_AUDIO_LAYOUT = Split(
    name="ltx2-audio",
    summary="LTX-2's audio: its law over one axis, at 2p - 1 of each latent frame's midpoint in seconds "
    "over 20 (mel frames [max(4k - 3, 0), 4k + 1), 160 / 16000 s each)",
    axes=("t",),
    columns=_ltx_columns,
    convention="interleaved",
    place=_ltx2_audio_place,
    floats=_ltx2_audio_floats,
    law=LTX2_LAW,
    once=True,
)

LTX_VIDEO = Preset(
    name="ltx-video",
    summary=(
        "LTX-Video 0.9: LTXVideoRotaryPosEmbed over the 2048-wide inner dim (head h takes "
        "columns 64h .. 64h + 63); a frame rate other than 25 with --rope fps=F"
    ),
    head_dim=2048,
    theta=10000.0,
    layout=LTX_VIDEO_LAYOUT,
    axes_dim=(684, 682, 682),
    convention="interleaved",
    freqs_dtype="float32",
    tries=({}, {"fps": 24}, {"fps": 30}, {"fps": 60}),
)
LTX2 = Preset(
    name="ltx2",
    summary=(
        "LTX-2's video: LTX2AudioVideoRotaryPosEmbed over the 4096-wide inner dim (head h "
        "takes columns 128h .. 128h + 127), its double precision; a frame rate other than 24 "
        "with --rope fps=F"
    ),
    head_dim=4096,
    theta=10000.0,
    layout=LTX2_LAYOUT,
    axes_dim=(1368, 1364, 1364),
    convention="interleaved",
    freqs_dtype="float64",
    tries=({}, {"fps": 25}, {"fps": 30}, {"fps": 60}),
)
LTX2_CROSS = Preset(
    name="ltx2-cross",
    summary=(
        "LTX-2's audio-video cross-attention, its video side: LTX2AudioVideoRotaryPosEmbed "
        "over the 2048-wide audio cross-attention dim, each video token at its frame's time "
        "only (rows and columns take no columns: a table of frames x 1 x rows*columns is the "
        "same)"
    ),
    head_dim=2048,
    theta=10000.0,
    layout=LTX2_LAYOUT,
    axes_dim=(2048, 0, 0),
    convention="interleaved",
    freqs_dtype="float64",
    tries=({}, {"fps": 25}, {"fps": 30}, {"fps": 60}),
)
LTX2_AUDIO = Preset(
    name="ltx2-audio",
    summary=(
        "LTX-2's audio: LTX2AudioVideoRotaryPosEmbed over the 2048-wide audio inner dim, one "
        "axis of latent frames"
    ),
    head_dim=2048,
    theta=10000.0,
    layout=LTX2_AUDIO_LAYOUT,
    axes_dim=(2048,),
    convention="interleaved",
    freqs_dtype="float64",
)
