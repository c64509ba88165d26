"""Identification's registry: each family's reader, its `identify` module's `read`, one entry
each, in the order of families.FAMILIES. Only analysis.identify imports it, so that building
a table never loads a reader. What a reader is, and what it may do, is families.proposals."""

from __future__ import annotations

from collections.abc import Callable

from .alibi import identify as alibi
from .boxes import identify as boxes
from .rope import identify as rope
from .sincos2d import identify as sincos2d
from .sincos3d import identify as sincos3d
from .sinusoidal import identify as sinusoidal

READERS: dict[str, Callable] = {
    module.FAMILY.name: module.read
    for module in (sinusoidal, rope, alibi, sincos2d, sincos3d, boxes)
}
