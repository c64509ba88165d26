"""The sincos3d family: video transformers' 3-D sin-cos tables (family.py), read back by
identify.py."""

from .family import FAMILY

__all__ = ["FAMILY"]
