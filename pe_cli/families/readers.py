"""Identification's registry: what reads each family's tables back from their values, one line
each. Only analysis.identify imports it, so that building a table never loads a reader.

A reader is a function (values, dtype, notes, bench) -> scored candidates (see
base.Family.candidates). A family whose reading is small keeps it as its `candidates` method;
one that grew into a package keeps it in modules of its own, registered here in its place.
"""

from __future__ import annotations

from collections.abc import Callable

from . import FAMILIES
from .rope import identify as rope
from .sinusoidal import identify as sinusoidal

# the families that read their tables in modules of their own, in place of `candidates`
GROWN: dict[str, Callable] = {"sinusoidal": sinusoidal.candidates, "rope": rope.candidates}

READERS: dict[str, Callable] = {
    name: GROWN.get(name, family.candidates) for name, family in FAMILIES.items()
}
