"""Checking names and numbers a user gives, with the one-line messages pe-cli prints."""

from __future__ import annotations

import math

from .errors import BadInput

LISTED = 8  # names an error lists before "and N more"


def few(count: int, total: int) -> bool:
    """Whether `count` of a table's `total` columns (or rows) are few enough to be the
    exceptions to a table that is otherwise a known one (a broken column, a row overwritten):
    at most LISTED, and a 16th of them (one of a narrower table), never all of them."""
    return 0 < count < total and count <= min(LISTED, max(1, total // 16))


def did_you_mean(value, choices, first=(), synonyms=None) -> str:
    """' (did you mean 'x'?)' for a close choice, else ''. A close name among `first` (the
    current family's) wins over the rest; `synonyms` maps what people type for a thing to
    its name here ('gpu' -> 'cuda'), for words that are close in meaning, not in spelling."""
    from difflib import get_close_matches

    value = str(value)
    if synonyms and synonyms.get(value.lower()) in choices:
        return f" (did you mean {synonyms[value.lower()]!r}?)"
    for names in (first, choices):
        close = get_close_matches(value, [str(c) for c in names], n=1, cutoff=0.6)
        if close:
            return f" (did you mean {close[0]!r}?)"
    return ""


def listing(names) -> str:
    """Names joined by commas; past LISTED of them, the first LISTED and how many more."""
    names = [str(n) for n in names]
    if len(names) <= LISTED + 1:
        return ", ".join(names)
    return f"{', '.join(names[:LISTED])} and {len(names) - LISTED} more"


def unknown(name: str, value, choices, first=(), synonyms=None, more="", aliases=()) -> str:
    """The one line for a name that is not one of `choices`: the near miss when there is one
    (the current family's names, `first`, before the rest; aliases too), else a short list of
    `first` or of the choices; `more` says where the whole list is, for a list that is cut."""
    hint = did_you_mean(value, [*choices, *(aliases or ())], first, synonyms)
    if hint:
        return f"unknown {name} {value!r}{hint}"
    shown = list(first or choices)
    where = f" ({more})" if more and len(shown) > LISTED + 1 else ""
    return f"unknown {name} {value!r}; choose from {listing(shown)}{where}"


def choice(name: str, value, choices, first=(), aliases=None, synonyms=None, more="") -> str:
    """`value` when it is one of `choices` (an alias, 'fp32', as the name it stands for), else
    BadInput with a near miss or a short list (`unknown`)."""
    found = aliases.get(value, value) if aliases and isinstance(value, str) else value
    if not isinstance(found, str) or found not in choices:
        raise BadInput(unknown(name, value, choices, first, synonyms, more, aliases))
    return found


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


def shown(value) -> str:
    """A value as a person reads it and the command line takes it back: 500000 for 500000.0,
    a list comma-joined, a float by its repr (which reads back to the same float)."""
    if isinstance(value, (tuple, list)):
        return ",".join(shown(v) for v in value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    return str(value)


def compact(indices) -> str:
    """Layer indices as a person reads them: 0-2, 4-6; 3, 7, ..., 35, every 4th."""
    indices = sorted(indices)
    if len(indices) >= 4:
        steps = {b - a for a, b in zip(indices, indices[1:])}
        if len(steps) == 1 and (step := steps.pop()) > 1:
            return f"{indices[0]}, {indices[1]}, ..., {indices[-1]}, every {ordinal(step)}"
    runs, start = [], indices[0]
    for a, b in zip(indices, indices[1:] + [None]):
        if b != a + 1:
            runs.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return ", ".join(runs)


def ordinal(n: int) -> str:
    """2nd, 3rd, 4th: the ordinal of a step of at least 2."""
    return {2: "2nd", 3: "3rd"}.get(n, f"{n}th")
