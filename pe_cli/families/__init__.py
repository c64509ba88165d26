"""The registry of families: one line each. Everything above this layer finds a family, its
conventions, parts, parameters and variants here, never by name in its own code.

A family is one module (sinusoidal.py, ...), or one package when it grows (rope/), that makes
one `Family` (base.py).
"""

from __future__ import annotations

from . import alibi, boxes, rope, sincos2d, sincos3d, sinusoidal
from .base import Family, Variant
from .rope import pairing as _pairing

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        sinusoidal.FAMILY,
        rope.FAMILY,
        alibi.FAMILY,
        sincos2d.FAMILY,
        sincos3d.FAMILY,
        boxes.FAMILY,
    )
}
DEFAULT_FAMILY = next(iter(FAMILIES))
# the pairings a rotary op may apply, and the dims each turns, for reading a rotation back
ROTARY_PAIRINGS = _pairing.ROTARY
rotary_pairs = _pairing.rotary_pairs
lay_out = _pairing.lay_out


def _names(collection) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for family in FAMILIES.values() for name in collection(family)))


VARIANT_NAMES = ("exact", *_names(lambda family: family.variants))
CONVENTION_NAMES = _names(lambda family: family.conventions)
PART_NAMES = _names(lambda family: family.parts)


def own_names(family: Family) -> dict[str, tuple[str, ...]]:
    """A family's own variants, conventions and parts: where a near miss of a name is looked
    for first, and what an error lists."""
    return {
        "variant": ("exact", *family.variants),
        "convention": tuple(family.conventions),
        "part": tuple(family.parts),
    }


def families_of_variant(name: str) -> list[str]:
    """The families that have a variant of this name (one name may serve several families:
    a library's 1-D, 2-D and 3-D tables)."""
    return [family.name for family in FAMILIES.values() if name in family.variants]


def find_variant(spec) -> Variant | None:
    """The variant a spec names, or None for the exact table."""
    return FAMILIES[spec.family].variants.get(spec.variant)


def family_params():
    """(family name, Param) for every family's parameters, in registry order."""
    return [(family.name, param) for family in FAMILIES.values() for param in family.params]
