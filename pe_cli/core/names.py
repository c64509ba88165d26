"""Checking names and numbers a user gives, with the one-line messages pe-cli prints."""

from __future__ import annotations

import math

from .errors import BadInput


def did_you_mean(value, choices) -> str:
    """' (did you mean 'x'?)' for a close choice, else ''."""
    from difflib import get_close_matches

    close = get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def choice(name: str, value, choices) -> str:
    """`value` when it is one of `choices`, else BadInput naming them (and a near miss)."""
    if value not in choices:
        raise BadInput(
            f"unknown {name} {value!r}{did_you_mean(value, choices)}; choose from {', '.join(choices)}"
        )
    return value


def whole(name: str, value, minimum: int) -> int:
    """An integer (not a bool) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise BadInput(f"{name} must be >= {minimum}, got {value}")
    return value


def number(name: str, value) -> float:
    """A finite number (not a bool), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(f"{name} must be a number, got {value!r}")
    return float(value)


def finite(name: str, value) -> float:
    value = number(name, value)
    if not math.isfinite(value):
        raise BadInput(f"{name} must be finite, got {value}")
    return value
