"""The rope family (family.py, its interface, says where each part of it lives), with the
registry of its layouts and of the diffusion models it knows (--rope-axes, --preset)."""

from __future__ import annotations

from .family import FAMILY
from .layouts import LAYOUTS
from .models import PRESETS

__all__ = ["FAMILY", "LAYOUTS", "PRESETS"]
