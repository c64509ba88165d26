"""A diffusion model's layout at another head dim than its --preset's (LTX-Video's module built
with dim 128, Wan's with attention_head_dim 64): each preset's axes_dim shares scaled to the
table's width, as the models' own modules split a head dim they are given, then read as the
preset's table is (presets.split)."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from ..models import PRESETS
from ..models.pixel import PIXEL


def shares(axes_dim: tuple[int, ...], head_dim: int, head: int) -> tuple[int, ...] | None:
    """A preset's axes_dim at another head dim: every axis but the first its share of `head`
    (the preset's, as a fraction of denominator up to 16), rounded down to an even number of
    columns, and the first the rest (LTX-Video's padding
    columns and Wan's frames take the odd remainder: 128 -> 44, 42, 42); None where an axis
    that turns is left with fewer than two frequencies or the shares do not fill the preset's
    head dim."""
    if sum(axes_dim) != head_dim or not axes_dim:
        return None
    # the share as the model's module takes it (a third: LTX-Video's 682 of 2048, Wan's 42 of
    # 128), not as the preset's own head dim rounds it
    rest = [
        2 * math.floor(head * Fraction(dim, head_dim).limit_denominator(16) / 2)
        for dim in axes_dim[1:]
    ]
    first = head - sum(rest)
    dims = (first, *rest)
    # every axis that turns keeps two frequencies at least (a law over n - 1 steps has one)
    return dims if all(d >= 4 for d, own in zip(dims, axes_dim) if own) else None


def rescaled(width: int, rotation: bool = False) -> dict:
    """Each preset at the head dims a table `width` columns wide may have (its width; twice it
    for a complex table's single columns; half for a rotation table), by a name saying so; one
    per distinct layout, shares, theta and dtype; and pixel-style RoPE over 1, 2 or 3 axes."""
    found, seen = {}, set()
    heads = (width // 2,) if rotation else (width, 2 * width)
    for name, preset in PRESETS.items():
        for head in heads:
            dims = (
                None if head == preset.head_dim else shares(preset.axes_dim, preset.head_dim, head)
            )
            if dims is None:
                continue
            key = (preset.layout.name, dims, preset.theta, preset.axes_theta, preset.freqs_dtype)
            if key in seen:
                continue
            seen.add(key)
            found[f"{name} at head dim {head}"] = replace(
                preset,
                head_dim=head,
                axes_dim=dims,
                summary=f"{preset.summary}; here over head dim {head}, axes_dim "
                f"{','.join(map(str, dims))}",
            )
    head = heads[0]  # pixel-style tables (their column pairs adjacent): 1, 2 or 3 equal axes
    for count in (1, 2, 3):
        if head % count == 0 and head // count % 2 == 0:
            found[f"pixel-style RoPE over {count} axes"] = replace(
                PIXEL, head_dim=head, axes_dim=(head // count,) * count
            )
    return found
