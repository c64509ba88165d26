"""Cosmos 3: Cosmos3VLTextRotaryEmbedding, Qwen3-VL's interleaved M-RoPE over the whole head dim
(its rope_axes_dim 24,20,20 is half of axes_dim), in its joint sequence: text token k at
(k, k, k), the video's tokens at (L + 15000 + frame, row, column) after L text tokens (frames
at k * 24/fps with its fps modulation), then its sound and action tokens at (t, 0, 0)."""

from __future__ import annotations

import math

from ....core.errors import BadInput
from ....core.limits import MAX_POSITION
from ..keys import KEYS, Key
from ..layouts import Preset, Split, Tail, grid_shape
from ..mrope import INTERLEAVED_LAW, interleaved_columns
from ..places import counting, text_on, written

SEGMENTS = "its sound and action tokens follow a video, --preset cosmos3 --grid FxHxW"

_COSMOS3_MARGIN = 15000  # Cosmos 3's unified_3d_mrope_temporal_modality_margin: the vision tokens' frames past the text


_COSMOS3_SOUND_FPS = 25.0  # its transformer config's sound_latent_fps


def _cosmos3_segments(spec) -> list[tuple]:
    """Cosmos 3's runs of tokens on the time axis after its text: the video's frames, then its
    sound and action tokens, each (tokens, frame rate or None, first index, temporal
    compression, base compression). With --rope fps (its fps modulation, on more than one
    token) token k sits at (k + first) / (rate / compression) * (24 / base), else at k + first."""
    rope = dict(spec.rope)
    fps, shape = rope.get("fps"), grid_shape(spec)
    found = [(shape[0] if len(shape) == 3 else 1, fps, 0, 4, 4)]
    if rope.get("sound_tokens"):
        found.append(
            (
                rope["sound_tokens"],
                rope.get("sound_fps", _COSMOS3_SOUND_FPS) if fps else None,
                0,
                1,
                1,
            )
        )
    if rope.get("action_tokens"):
        found.append((rope["action_tokens"], fps, 1, 1, 4))
    return [(count, rate if count > 1 else None, *rest) for count, rate, *rest in found]


def _cosmos3_step(segment):
    """A run's step per token, exactly: 24 * compression / (rate * base), or 1."""
    from fractions import Fraction

    _, rate, _, compression, base = segment
    return Fraction(1) if rate is None else Fraction(24 * compression) / (written(rate) * base)


def _cosmos3_place(spec, axis: int, size: int):
    """Cosmos 3's vision tokens: frame k at L + 15000 + k (L text tokens, then its modality
    margin), or with --rope fps a video's at L + 15000 + k * 24 / fps (its fps modulation),
    exactly, over the denominator its sound and action tokens share; rows and columns count
    from 0 (its reset spatial ids)."""
    import numpy as np

    if axis:
        return counting(spec, axis, size)
    segments = _cosmos3_segments(spec)
    denominator = math.lcm(*(_cosmos3_step(segment).denominator for segment in segments))
    start = (spec.text_tokens + _COSMOS3_MARGIN) * denominator
    last = max(
        start + _cosmos3_step(segment) * denominator * (segment[0] - 1 + segment[2])
        for segment in segments
    )
    if last > MAX_POSITION:
        raise BadInput(
            f"--preset cosmos3: its times at these frame rates are fractions too fine for exact positions "
            f"(over their denominator {denominator} they pass 2^32)"
        )
    return np.arange(size, dtype=np.int64) * int(
        _cosmos3_step(segments[0]) * denominator
    ) + start, denominator


def _cosmos3_times(
    spec, segment
):  # its float32 (k + first) / (rate / compression) * (24 / base) + offset
    import torch

    count, rate, first, compression, base = segment
    k = torch.arange(count, dtype=torch.float32)
    offset = spec.text_tokens + _COSMOS3_MARGIN
    if rate is None:
        return (k + (offset + first)).numpy()
    return ((k + first) / (rate / compression) * (24.0 / base) + offset).numpy()


def _cosmos3_floats(spec, axis: int, size: int):
    import numpy as np

    return (
        np.arange(size, dtype=np.float32)
        if axis
        else _cosmos3_times(spec, _cosmos3_segments(spec)[0])
    )


def _cosmos3_tail(spec, denominators):
    """Cosmos 3's sound and action tokens, at (t, 0, 0): (integer positions over each axis's
    denominator, the float32 ones its pipeline computes)."""
    import numpy as np

    if len(denominators) != 3:
        raise BadInput(
            f"--rope-axes cosmos3 places its tokens on 3 axes (t, h, w): its axes_dim has "
            f"{len(denominators)}"
        )
    numerators, floats = [np.zeros((0, 3), np.int64)], [np.zeros((0, 3), np.float32)]
    offset = spec.text_tokens + _COSMOS3_MARGIN
    for segment in _cosmos3_segments(spec)[1:]:
        count, step, first = segment[0], _cosmos3_step(segment), segment[2]
        times = np.array(
            [int((offset + step * (k + first)) * denominators[0]) for k in range(count)], np.int64
        )
        numerators.append(np.stack([times, *[np.zeros(count, np.int64)] * 2], axis=1))
        floats.append(
            np.stack([_cosmos3_times(spec, segment), *[np.zeros(count, np.float32)] * 2], axis=1)
        )
    return np.concatenate(numerators), np.concatenate(floats)


def _tail_settings(spec, runs: list[int], step: float | None) -> list[tuple[dict, int]]:
    """Cosmos 3's sound and action tokens a table may end with, from the runs of its last
    tokens at (t, 0, 0), each starting back at the video's first frame's time: two runs are
    sound then action, one either (or one sound token then actions). A sound run's rate is
    read from its step (with --rope fps)."""
    count = sum(runs)
    sound_fps = {}
    if step is not None and "fps" in dict(spec.rope):
        sound_fps = {"sound_fps": float(f"{24 / step:.3g}")}
    if len(runs) == 2:
        return [({"sound_tokens": runs[0], "action_tokens": runs[1], **sound_fps}, count)]
    if len(runs) != 1:
        return []
    # one run: sound, actions, or one sound token then actions (which a step of 1 also reads as):
    # sound first where its rate is its config's
    whole, others = {"sound_tokens": count, **sound_fps}, [{"action_tokens": count}]
    if count > 1:
        others.append({"sound_tokens": 1, "action_tokens": count - 1})
    usual = sound_fps.get("sound_fps", _COSMOS3_SOUND_FPS) == _COSMOS3_SOUND_FPS
    return [(rope, count) for rope in ([whole, *others] if usual else [*others, whole])]


def _check(spec):
    rope = dict(spec.rope)
    segments = [key for key in ("sound_tokens", "action_tokens", "sound_fps") if key in rope]
    if segments and (spec.ids is not None or spec.grid is None or len(grid_shape(spec)) != 3):
        raise BadInput(f"rope parameter {segments[0]} is Cosmos 3's: {SEGMENTS}")
    if "sound_fps" in rope and not ("sound_tokens" in rope and "fps" in rope):
        raise BadInput(
            "rope parameter sound_fps is the rate of Cosmos 3's fps-modulated sound tokens: it needs "
            "sound_tokens and fps"
        )
    if any(rope.get(key, 1) < 1 for key in ("sound_tokens", "action_tokens")):
        raise BadInput(
            "rope parameters sound_tokens and action_tokens count tokens: each at least 1"
        )


# Cosmos 3's joint sequence: sound and action tokens after the video, at (t, 0, 0) from its
# first frame's time; with --rope fps, sound token k at k * 24 / sound_fps (its config's
# sound_latent_fps, 25) and action token k at (k + 1) * 6 / fps
SOUND_TOKENS = Key(
    "sound_tokens",
    int,
    "Cosmos 3's sound tokens after the video, at (t, 0, 0).",
    ("cosmos3",),
    refusal=f"rope parameter sound_tokens is Cosmos 3's: {SEGMENTS}",
)
ACTION_TOKENS = Key(
    "action_tokens",
    int,
    "Cosmos 3's action tokens after the video (and its sound), at (t, 0, 0).",
    ("cosmos3",),
    refusal=f"rope parameter action_tokens is Cosmos 3's: {SEGMENTS}",
)
SOUND_FPS = Key(
    "sound_fps",
    float,
    "The rate of Cosmos 3's fps-modulated sound tokens (its config's sound_latent_fps, 25).",
    ("cosmos3",),
    positive=True,
    refusal=f"rope parameter sound_fps is Cosmos 3's: {SEGMENTS}",
)

COSMOS3_LAYOUT = Split(
    name="cosmos3",
    summary="Cosmos 3: Qwen3-VL's interleaved M-RoPE over the whole head dim (axes_dim is twice its "
    "sections), text token k at (k, k, k), vision tokens at (L + 15000 + frame, row, column) (frames at "
    "k * 24/fps with --rope fps), then sound and action tokens at (L + 15000 + time, 0, 0)",
    axes=("t", "h", "w"),
    columns=interleaved_columns,
    convention="half",
    place=_cosmos3_place,
    floats=_cosmos3_floats,
    text=text_on(0, 1, 2),
    law=INTERLEAVED_LAW,
    tail=Tail(tokens=_cosmos3_tail, settings=_tail_settings),
    keys=(KEYS["fps"], SOUND_TOKENS, ACTION_TOKENS, SOUND_FPS),
    check=_check,
)

COSMOS3 = Preset(
    name="cosmos3",
    summary=(
        "Cosmos 3: Cosmos3VLTextRotaryEmbedding, Qwen3-VL's interleaved M-RoPE at theta 5e6 "
        "(rope_axes_dim 24,20,20); text token k at (k, k, k), vision tokens at (L + 15000 + "
        "frame, row, column); a video's fps modulation with --rope fps=F; sound and action "
        "tokens after the video with --rope sound_tokens=S, action_tokens=A"
    ),
    head_dim=128,
    theta=5000000.0,
    layout=COSMOS3_LAYOUT,
    axes_dim=(48, 40, 40),
    convention="half",
    freqs_dtype="float32",
    tries=({}, {"fps": 24}, {"fps": 30}, {"fps": 16}, {"fps": 25}, {"fps": 60}),
)
