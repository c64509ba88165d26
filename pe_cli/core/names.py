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


def parse_slice(text: str, flag: str) -> slice:
    """'START:STOP' (either may be empty) or 'N' (that one row) as a slice."""
    try:
        parts = [int(p) if p.strip() else None for p in str(text).split(":")]
    except ValueError:
        raise BadInput(f"{flag} {text!r} is not START:STOP") from None
    if len(parts) == 1:
        return slice(parts[0], None if parts[0] is None else parts[0] + 1 or None)
    if len(parts) != 2:
        raise BadInput(f"{flag} {text!r} is not START:STOP")
    return slice(*parts)
