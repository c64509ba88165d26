"""LongRoPE's factors read from a table in any library's arithmetic (an inference engine's, or
a half dtype's), where longrope.py's exact reading in transformers' float32 arithmetic finds
none: each column's frequency read to its error bound (then by least squares over every row),
the factor of each column the shortest decimal within what the reading allows, and then,
library by library, the table built with those factors and each column that differs given its
next factor (decimals and float32 values near the reading), until every column is the table's
(each column of a LongRoPE table depends on its own factor only) or a column runs out of
factors."""

from __future__ import annotations

import math

from ....core.dtypes import FORMATS
from ....core.errors import BadInput
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
_SIGMAS = 6  # standard errors of a least-squares frequency its factors are looked for within
_AROUND = 4  # float32 values each side of a column's shortest decimal tried first
_WIDE = 2.0**-13  # bounds this wide, relative, hold decimals only (_choices)


def library_factors(bench, plane, convention: str, part: str, attention: float) -> list:
    """(rotary dim, base, LongRoPE parameters) for each library whose LongRoPE table, with
    factors read from the plane (one column per frequency of the table, positions 0 ..), is
    the table bit for bit."""
    rows, n = plane.shape
    if rows < 3 or not n:
        return []
    rounding = max(FORMATS[bench.dtype].epsilon / 2, 1e-6)  # of row 0, the factor
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
    for name, variant in FAMILY.variants.items():
        if variant.kind != "library" or convention not in variant.conventions:
            continue
        for original, factor in pairs:
            if (original, factor) not in readings:
                scale = longrope_attention(factor, original)
                readings[original, factor] = _reading(plane / scale, part, bench.dtype)
            if readings[original, factor] is None:
                continue
            base, choices = readings[original, factor]
            spec = _search(
                bench, plane, name, convention, part, base, 2 * n, (original, factor), choices
            )
            if spec is not None:
                found.append((2 * n, base, dict(spec.rope)))
                break
    return list({repr(f): f for f in found}.values())  # libraries that agree: one reading


def _reading(unit, part: str, dtype: str):
    """(base, each column's factors to try) of a plane of cos or sin values over the
    attention factor; None where some column never turns (a half table's lowest columns can
    stay at cos 1), which tells no factor. Every base explains the frequencies with some
    factors: the common base whose factors are the shortest decimals is taken."""
    import numpy as np

    w, error = reread(unit, part, dtype)
    if not np.all(w > 0):
        return None
    if dtype != "float32":  # a half table's reading, refined over every row
        error = error * _LOOSE
        fitted, sigma = _fitted(unit, part, w)
        kept = np.abs(fitted - w) <= error  # a fit that left the reading's bounds is not taken
        w = np.where(kept, fitted, w)
        error = np.where(kept, np.minimum(error, _SIGMAS * sigma), error)
    n = len(w)

    def choices(base):
        estimate = base ** (-2 * np.arange(n) / (2 * n)) / w
        spread = estimate * (error / w + _ENGINE_SLACK)
        return [_choices(f, s) for f, s in zip(estimate, spread)]

    tried = {base: choices(base) for base in BASES}
    base = min(tried, key=lambda b: sum(len(repr(_decimal(c[0]))) for c in tried[b]))
    return base, tried[base]


def _fitted(unit, part: str, w):
    """Frequencies refined by least squares over every row (Gauss-Newton from a reading good
    to a fraction of a turn), and each one's standard error: a column whose angle stays small
    tells its frequency from one row only to that row's rounding, from thousands of rows far
    better."""
    import numpy as np

    p = np.arange(len(unit), dtype=np.float64)[:, None]
    for _ in range(4):
        angle = p * w
        value, slope = (
            (np.cos(angle), -p * np.sin(angle))
            if part == "cos"
            else (np.sin(angle), p * np.cos(angle))
        )
        weight = np.maximum(np.sum(slope**2, axis=0), 1e-300)
        w = w + np.sum(slope * (unit - value), axis=0) / weight
    residual = unit - (np.cos(p * w) if part == "cos" else np.sin(p * w))
    return w, np.sqrt(np.sum(residual**2, axis=0) / max(1, len(unit) - 1) / weight)


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


def _search(bench, plane, name, convention, part, base, dim, lengths, choices):
    """The spec of library `name` whose factors (each column's next choice where its column
    differs) make the plane, or None. lengths: (original length, factor). The factors are
    tried as long_factor or short_factor, whichever the table's length picks, then as both
    (mlx-lm reads long_factor at every length)."""
    rows, _ = plane.shape
    original, factor = lengths
    key = ("long_factor",) if rows > original else ("short_factor",)
    # a short table's spec needs short_factor: mlx-lm's reads long_factor, the same factors
    for chosen in dict.fromkeys(
        (key, ("long_factor", "short_factor") if rows <= original else key)
    ):
        rope = {
            "rope_type": "longrope",
            "original_max_position_embeddings": original,
            "max_position_embeddings": int(original * factor),
        }
        made = lambda factors, rope=rope, chosen=chosen: bench.spec(  # noqa: E731
            family=FAMILY.name,
            variant=name,
            d_model=dim,
            seq_len=rows,
            base=base,
            rope={**rope, **dict.fromkeys(chosen, factors)},
            convention=convention,
            part=part,
            dtype=bench.dtype,
        )
        found = _columns(bench, plane, convention, made, choices)
        if found is not None:
            return found
    return None


def _columns(bench, plane, convention, made, choices):
    """The spec `made` of factors that gives every column of the plane, each column's next
    choice taken where it differs; None where a column runs out of choices, or where the first
    factors leave every column wrong (another arithmetic)."""
    import numpy as np

    n = plane.shape[1]
    first = pair_columns(n, convention)[0] if convention != "single" else slice(None)
    at = [0] * n  # each column's choice
    for round in range(_TRIES):
        spec = made(tuple(_decimal(choices[i][at[i]]) for i in range(n)))
        if spec is None:
            return None
        try:
            built = bench.values_of(spec)[:, first]
        except BadInput:
            return None
        wrong = np.flatnonzero(np.any(built != plane, axis=0))
        if not len(wrong):
            return spec
        if round == 0 and len(wrong) == n:  # not one column: another arithmetic
            return None
        for i in wrong:
            at[i] += 1
            if at[i] >= len(choices[i]):
                return None
    return None


def _decimal(value: float) -> float:
    """The shortest decimal whose float32 is this float32 value."""
    import numpy as np

    for digits in range(1, _DIGITS + 1):
        shortest = float(f"{value:.{digits}g}")
        if np.float32(shortest) == np.float32(value):
            return shortest
    return value
