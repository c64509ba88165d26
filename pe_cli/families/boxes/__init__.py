"""The boxes family: GLIGEN's box features (family.py), read back by identify.py."""

from .family import FAMILY

__all__ = ["FAMILY"]
