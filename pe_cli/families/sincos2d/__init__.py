"""The sincos2d family: 2-D sin-cos tables of patch grids (family.py), read back by
identify.py."""

from .family import FAMILY

__all__ = ["FAMILY"]
