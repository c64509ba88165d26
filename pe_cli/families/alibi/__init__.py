"""The alibi family: ALiBi's slopes and biases (family.py), read back by identify.py."""

from .family import FAMILY

__all__ = ["FAMILY"]
