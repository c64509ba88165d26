"""LongRoPE's factors read from a table in any library's arithmetic (transformers' float32 one,
an inference engine's, a half dtype's, or pe-cli's exact one): each column's frequency read to
its error bound (a half table's then to the bounds every row's rounding allows), the factor of
each column the shortest decimal within what the reading allows, and then, library by library
(the exact table last), the table built with those factors and each column that differs given
its next factor, until every column is the table's (each column of a LongRoPE table depends on
its own factor only) or a column runs out of factors. Next: decimals and float32 values near
the reading; for a column whose bounds are wide and whose angle stays within a half turn,
bisection (its values above the table's say its factor is too large); a half table's column
that never turns tells only a least factor, and any above it makes it."""

from __future__ import annotations

import math

from ....core.dtypes import FORMATS
from ....core.errors import BadInput
from ...reading import joined, plausible_bases, round_numbers
from ..family import FAMILY
from ..pairing import pair_columns
from ..types import longrope_attention
from .common import BASES, FACTORS, ORIGINAL_LENGTHS
from .reread import reread

_ENGINE_SLACK = 1e-5  # a library's unscaled frequencies' own float32 error, relative, at most
_TRIES = 64  # float32 factors tried per column at most
_DIGITS = 9  # significant digits that tell every float32 apart
_LOOSE = 4  # times a half table's reading's error bound that its factors are looked for
# within (its rounding is not independent of the angle: the bound is not a strict one)
_AROUND = 4  # float32 values each side of a column's shortest decimal tried first
_WIDE = 2.0**-13  # bounds this wide, relative, hold decimals only (_choices)


def library_factors(
    view, plane, convention: str, part: str, attention: float, fitted: float, length: int, notes
) -> list:
    """(rotary dim, base, LongRoPE parameters) for each library whose LongRoPE table of
    `length` positions, with factors read from the plane (one column per frequency of the
    table, positions 0 ..), is the table bit for bit, else for the exact table where it is; a
    note where some factors are known only to a range. The base: a common one, or one round
    near the `fitted` one, whose factors are the shortest decimals."""
    rows, n = plane.shape
    if rows < 3 or not n:
        return []
    rounding = max(FORMATS[view.dtype].epsilon / 2, 1e-6)  # of row 0, the factor
    pairs = [
        (original, factor)
        for original in ORIGINAL_LENGTHS
        for factor in FACTORS
        if math.isclose(longrope_attention(factor, original), attention, rel_tol=2 * rounding)
    ]
    if not pairs:
        return []
    readings = {}  # by pair: each reads the plane over its own attention factor, exactly
    found = []
    libraries = [
        name
        for name, variant in FAMILY.variants.items()
        if variant.kind == "library" and convention in variant.conventions
    ]
    for name in [*libraries, "exact"]:
        if name == "exact" and found:  # a library's table: not the exact one too
            break
        for original, factor in pairs:
            if (original, factor) not in readings:
                scale = longrope_attention(factor, original)
                readings[original, factor] = _reading(plane, scale, part, view.dtype, fitted)
            if readings[original, factor] is None:
                continue
            base, choices, widths = readings[original, factor]
            rope = _search(
                view, plane, name, convention, part, base, (original, factor, length), choices
            )
            if rope is not None:
                found.append((2 * n, base, rope))
                _ranges(widths, rows, view.dtype, notes)
                break
    return list({repr(f): f for f in found}.values())  # libraries that agree: one reading


def _ranges(widths, rows: int, dtype: str, notes: list) -> None:
    """The note on a half table's factors, which it tells only to a range: each column's
    relative half-width (inf: never turning, any factor above a least one)."""
    import numpy as np

    if dtype == "float32":
        return
    told = np.isfinite(widths)
    narrow = told & (widths <= _WIDE)
    said = [
        f"{_which(np.flatnonzero(group))} to within {_percent(np.max(widths[group]))}"
        for group in (narrow, told & ~narrow)
        if np.any(group)
    ]
    if not np.all(told):
        said.append(
            f"{_which(np.flatnonzero(~told))} not at all (they never turn over its {rows} rows: "
            "any large enough factor makes them)"
        )
    notes.append(
        f"a {dtype} table tells its LongRoPE factors only to a range: frequencies "
        f"{joined(said)}; the factors given are the shortest decimals that make the table bit "
        "for bit"
    )


def _percent(width: float) -> str:
    """A relative half-width as a percentage rounded up, to 2 significant digits below 10%:
    ±0.0012%, ±34%, ±110%."""
    value = 100 * width
    if value >= 10:
        return f"±{math.ceil(value)}%"
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return f"±{math.ceil(value / step) * step:.2g}%"


def _which(columns: list) -> str:
    """Frequency indices as runs: 22 .. 29, 31."""
    runs = []
    for i in columns:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a} .. {b}" for a, b in runs)


def _reading(plane, scale: float, part: str, dtype: str, fitted: float):
    """(base, each column's factors to try: a list, or a range to bisect, and which columns
    never turn) of a plane of cos or sin values, times the attention factor `scale`; None
    where a column never turns in a float32 or sin plane, or no frequency keeps it still.
    Every base explains the frequencies with some factors: the base (common, or round near the
    `fitted` one) whose factors are the shortest decimals is taken."""
    import numpy as np

    unit = plane / scale
    w, error = reread(unit, part, dtype)
    still = ~(w > 0)
    if np.all(still) or (np.any(still) and (part != "cos" or dtype == "float32")):
        return None
    most = np.zeros_like(w)  # a column that never turns: the frequency it cannot exceed
    if dtype != "float32":  # a half table's reading, refined over every row
        error = error * _LOOSE
        # scaled as computed, or cos and sin rounded to the dtype and then times the attention
        # factor rounded to it (mlx-lm's input scale), rounded again: the one every row allows
        low, high = max(
            (_bounded(plane, scale, part, dtype, w), _bounded(plane, scale, part, dtype, w, True)),
            key=lambda bounds: np.sum(bounds[0] <= bounds[1]),
        )
        most = np.where(still, high, 0.0)
        if np.any(still & ~(most > 0)):  # a column no frequency keeps still: another scale
            return None
        kept = (low <= high) & (high > 0) & ~still & (np.abs((low + high) / 2 - w) <= error)
        w = np.where(kept, (low + high) / 2, w)
        error = np.where(kept, np.minimum(error, (high - low) / 2), error)
    n, rows = len(w), len(unit)
    # a column whose angle stays within the first half turn (cos) or quarter turn (sin) has
    # each value monotonic in its factor: looked for by bisection where its bounds are wide
    turn = (np.pi if part == "cos" else np.pi / 2) * 0.9
    monotonic = still | ((w + error) * (rows - 1) < turn)

    widths = np.where(still, np.inf, error / np.where(still, 1.0, w) + _ENGINE_SLACK)

    def choices(base):
        plain = base ** (-2 * np.arange(n) / (2 * n))
        moving = np.where(still, 1.0, w)
        estimate, spread = plain / moving, plain / moving * widths
        least = plain / np.where(still, most, 1.0)
        return [
            (low, 2 * low)
            if never
            else (max(f - s, f / 2), f + s)
            if bisect and s > _WIDE * f
            else _choices(f, s)
            for f, s, low, never, bisect in zip(estimate, spread, least, still, monotonic)
        ]

    def length(choice):  # the digits of a column's first factor
        return len(repr(_decimal(_first(choice))))

    tried = {base: choices(base) for base in dict.fromkeys([*BASES, *plausible_bases(fitted)])}
    base = min(tried, key=lambda b: sum(length(c) for c in tried[b]))
    return base, tried[base], widths


def _first(choice) -> float:
    """A column's first factor: the first listed, or the shortest decimal in a range's middle
    third."""
    if isinstance(choice, list):
        return choice[0]
    low, high = choice
    third = (high - low) / 3
    return _shortest(low + third, high - third)


def _shortest(low: float, high: float) -> float:
    """The decimal of fewest significant digits within [low, high] nearest its middle."""
    middle = (low + high) / 2
    for digits in range(1, 17):
        step = 10.0 ** (math.floor(math.log10(high)) - digits + 1)
        first, last = math.ceil(low / step), math.floor(high / step)
        if first <= last:
            k = min(max(round(middle / step), first), last)
            return float(f"{k * step:.{digits}g}")
    return middle


def _rounded(value: float, dtype: str) -> float:
    """The value rounded to the dtype."""
    import torch

    return float(torch.tensor(value, dtype=torch.float64).to(getattr(torch, dtype)))


def _bounded(plane, scale: float, part: str, dtype: str, w, twice: bool = False):
    """Each column's frequencies that every row allows: a value v rounded to the dtype says
    that scale x cos (or sin) of the row's angle lay within v's rounding interval, so the
    angle within an interval, and the frequency within it over the row; intersected over the
    rows whose angle is within the first half turn (cos) or quarter turn (sin) by the reading
    w. (low, high); low > high where the rows disagree (another attention factor)."""
    import numpy as np

    from ....core.dtypes import ulp

    values = np.asarray(plane, np.float64)
    size = np.abs(values)
    above, below = ulp(size, dtype) / 2, ulp(size * (1 - 2.0**-20), dtype) / 2
    up, down = (np.where(values >= 0, above, below), np.where(values >= 0, below, above))
    slack = 2e-7 * (1 + size)  # float32's own rounding of the angle, cos and product
    if twice:
        scale = _rounded(scale, dtype)
    top, bottom = (values + up + slack) / scale, (values - down - slack) / scale
    if twice:  # each a value rounded to the dtype: the interval widened by half its spacing
        top, bottom = top + ulp(np.abs(top), dtype) / 2, bottom - ulp(np.abs(bottom), dtype) / 2
    top, bottom = np.clip(top, -1, 1), np.clip(bottom, -1, 1)
    p = np.arange(len(values), dtype=np.float64)[:, None]
    angle = p * w
    if part == "cos":  # angles in [0, pi]: cos falls
        near, far, usable = np.arccos(top), np.arccos(bottom), angle <= np.pi * 0.9
    else:  # angles in [0, pi / 2]: sin rises
        near, far, usable = np.arcsin(bottom), np.arcsin(top), angle <= np.pi / 2 * 0.9
    usable[0] = False
    p[0] = 1
    low = np.max(np.where(usable, near / p, 0.0), axis=0)
    high = np.min(np.where(usable, far / p, np.inf), axis=0)
    return low, high


def _choices(estimate: float, spread: float) -> list:
    """A column's float32 factors to try, within the reading's bounds, _TRIES at most: the
    decimal of fewest significant digits nearest the reading, as its float32 and the _AROUND
    float32 values either side of it (a config's factors are decimals, some written from a
    float32 a few ulps off one); then in turn the next such decimal (more digits once those
    run out), with the float32 either side, and the next float32 nearest the reading."""
    import itertools

    import numpy as np

    low, high = max(estimate - spread, estimate / 2), estimate + spread  # factors above 0
    # bounds wider than _WIDE of it (a half table's low columns): decimals alone, the float32
    # values nearest the reading being no likelier there
    wide = spread > _WIDE * estimate

    def decimals():
        for digits in range(1, _DIGITS + 1):
            step = 10.0 ** (math.floor(math.log10(estimate)) - digits + 1)
            centre = round(estimate / step)
            for k in range(2 * _TRIES):  # centre, centre + 1, centre - 1, ...
                value = (centre + (k + 1) // 2 * (1 if k % 2 else -1)) * step
                if not low <= value <= high:
                    continue
                at = np.float32(float(f"{value:.{digits}g}"))
                yield at
                yield from (
                    np.nextafter(at, np.float32(np.inf)),
                    np.nextafter(at, np.float32(0)),
                )

    def around(at):  # a config's factor can be a float32 a few ulps off a short decimal
        up = down = at
        yield at
        for _ in range(_AROUND):
            up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(0))
            yield from (up, down)

    def nearest():
        if wide:
            return
        up, down = np.float32(estimate), np.nextafter(np.float32(estimate), np.float32(0))
        while up <= high or down >= low:
            yield from (up, down)
            up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(0))

    found: dict = {}
    first = decimals()
    shortest = next(first, None)
    ordered = itertools.chain(
        [] if shortest is None else around(shortest),
        itertools.chain.from_iterable(itertools.zip_longest(first, nearest())),
    )
    for value in ordered:
        if value is not None and low <= value <= high:
            found.setdefault(float(value), None)
            if len(found) == _TRIES:
                break
    return list(found)


def _search(view, plane, name, convention, part, base, lengths, choices):
    """The LongRoPE parameters of library `name` whose factors (each column's next choice where
    its column differs) make the plane, or None. lengths: (original length, factor, the
    table's length). The plane's rows are built with the factors as both lists (whichever its
    rows pick); the parameters given hold the list the table's length picks, or both where a
    library needs both there (mlx-lm reads long_factor at every length)."""
    rows, n = plane.shape
    original, factor, length = lengths
    rope = {
        "rope_type": "longrope",
        "original_max_position_embeddings": original,
        "max_position_embeddings": int(original * factor),
    }
    both = ("long_factor", "short_factor")

    def made(factors, lists=both, seq_len=rows):
        return view.spec(
            family=FAMILY.name,
            variant=name,
            d_model=2 * n,
            seq_len=seq_len,
            base=base,
            rope={**rope, **dict.fromkeys(lists, factors)},
            convention=convention,
            part=part,
            dtype=view.dtype,
        )

    found = _columns(view, plane, convention, part, made, choices)
    picked = ("short_factor",) if length <= original else ("long_factor",)
    for lists in (picked, both) if found is not None else ():
        spec = made(dict(found.rope)["long_factor"], lists, length)
        if spec is not None:
            return dict(spec.rope)
    return None


def _columns(view, plane, convention, part, made, choices):
    """The spec `made` of factors that gives every column of the plane, each column's next
    choice taken where it differs: the next listed, or within a range the shortest decimal in
    the middle third of the side its values say (a column's angles too small, its factor too
    large); None where a column runs out of choices, or where the first factors leave every
    column wrong (another arithmetic)."""
    import numpy as np

    n = plane.shape[1]
    first = pair_columns(n, convention)[0] if convention != "single" else slice(None)
    at = [0] * n  # each listed column's choice
    ranges = {i: c for i, c in enumerate(choices) if not isinstance(c, list)}
    factors = [_first(c) for c in choices]
    for round in range(_TRIES):
        spec = made(tuple(_decimal(f) for f in factors))
        if spec is None:
            return None
        try:
            built = view.built(spec)[:, first]
        except BadInput:
            return None
        wrong = np.flatnonzero(np.any(built != plane, axis=0))
        if not len(wrong):
            return spec
        if round == 0 and len(wrong) == n:  # not one column: another arithmetic
            return None
        for i in wrong:
            if i in ranges:
                over = built[:, i] - plane[:, i]
                low, high = ranges[i]
                # cos over the first half turn falls with the angle, sin over the first
                # quarter rises: values above the table's say the factor is too large (cos)
                larger = np.any(over > 0) if part == "cos" else np.any(over < 0)
                if np.any(over > 0) and np.any(over < 0):
                    return None
                ranges[i] = (low, factors[i]) if larger else (factors[i], high)
                if not ranges[i][0] < ranges[i][1]:
                    return None
                factors[i] = _first(ranges[i])
                continue
            at[i] += 1
            if at[i] >= len(choices[i]):
                return None
            factors[i] = choices[i][at[i]]
    return None


def _decimal(value: float) -> float:
    """The shortest decimal whose float32 is this float32 value."""
    import numpy as np

    held = np.float32(value)
    return next(
        (d for d in round_numbers(value, range(1, _DIGITS + 1)) if np.float32(d) == held), value
    )
