"""Identification's registry: what reads each family's tables back from their values, one line
each. Only analysis.identify imports it, so that building a table never loads a reader.

A reader is a function (values, dtype, notes, bench) -> scored candidates (see
base.Family.candidates). A family whose reading is small keeps it as its `candidates` method;
one that grew into a package keeps it in modules of its own, registered here in its place.
"""

from __future__ import annotations

from collections.abc import Callable

from . import FAMILIES, rope
from .rope import identify as rope_identify

READERS: dict[str, Callable] = {name: family.candidates for name, family in FAMILIES.items()}
READERS[rope.FAMILY.name] = rope_identify.candidates
