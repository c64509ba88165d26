"""What `compare A B` says about two tables, in sentences a person can check: the verdict,
where the tables agree and where they do not, how the difference grows with position, and a
rearrangement (another column order, rows shifted, rows of zeros set aside) that explains it.

Every sentence is a measured fact. A rearrangement is said only where it explains the
difference: rearranged, the tables agree within their rounding where, as given, they did not.
It is looked for in the tables' first rows and confirmed over every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from ..core.dtypes import FORMATS
from .metrics import Difference

# A rearrangement explains a difference when it leaves at most this share of the largest
# error, and at most this share of the values' size: rounding, not another table.
EXPLAINED_SHARE = 1 / 16
EXPLAINED_SIZE = 1e-2
SHIFTS = 64  # rows a table may be shifted by
_SEARCH_ROWS = 256  # rows a search scores each rearrangement on, before the confirming pass


def verdict(d: Difference) -> str:
    """One line: identical, equal within rounding, or how far apart, in the units a person
    judges (|A-B|, and ulps at the values' own size)."""
    if d.identical:
        return "bit for bit identical"
    if d.max_ulps <= 1:
        return (
            f"equal within {_g(d.max_ulps)} ulp of {d.dtype} at the values' size "
            f"(max |A-B| {_g(d.max_abs)}): rounding only"
        )
    if not d.counted_in_ulps:
        return f"differ by up to {_g(d.max_abs)}, where the values reach {_g(d.size_of_values)}"
    return (
        f"differ by up to {_g(d.max_abs)}, {_ulps(d.max_ulps)} ulp of {d.dtype} at the values' size"
    )


def where(d: Difference, rows: int, cols: int) -> list[str]:
    """Where the tables are bit for bit equal and where not, and where they stay within the
    threshold."""
    if d.identical:
        return []
    said = []
    if d.differing_rows <= 3 and d.differing_rows < rows:
        listed = _names(d.rows_listed)
        said.append(
            f"they differ only at position{_s(d.rows_listed)} {listed} ({d.differing} "
            f"element{_s(d.differing)}); every other position is bit for bit equal"
        )
    elif d.differing_columns <= 3 and d.differing_columns < cols:
        listed = _names(
            f"{j} (at {n} position{_s(n)}, {_span(a, b)})" for j, a, b, n in d.columns_listed
        )
        said.append(
            f"they differ only in dimension{_s(d.columns_listed)} {listed}; every other "
            "dimension is bit for bit equal"
        )
    else:
        p, j = d.first_differing
        line = (
            f"{d.differing} of {d.size} elements differ, the first at position {p}, dimension {j}"
        )
        if p > d.first_position:
            line += f"; {_span(d.first_position, p - 1, 'position')} bit for bit equal"
        said.append(line)
    said.append(f"the largest difference is at position {d.worst[0]}, dimension {d.worst[1]}")
    threshold = _g(d.threshold)
    if d.first_over is None:
        said.append(f"within {threshold} at every position")
    elif d.first_over == d.first_position:
        said.append(f"beyond {threshold} already at position {d.first_over}")
    else:
        said.append(
            f"within {threshold} up to position {d.first_over - 1}; beyond it first at "
            f"position {d.first_over}"
        )
    return said


def growth(d: Difference, arithmetic: str, computed_by: str | None) -> str | None:
    """How the largest error grows over the position bands: in proportion to position (with
    the rate, and whether it is the size of `arithmetic`'s rounding of the angles p*w, which
    `computed_by` does where one side is known to), not at all, or otherwise; None where the
    bands do not say (the difference is in one band, or too small to matter)."""
    if d.identical or d.max_ulps <= 1:
        return None
    bands = [(b - 1, m) for a, b, m in d.bands if b - 1 > 0]  # (last position, max |error|)
    first = next((k for k, (_, m) in enumerate(bands) if m > 0), len(bands))
    live = bands[first:]
    if len(live) < 3 or min(m for _, m in live) == 0:  # in one band, or not in every band after
        return None
    sizes = [m for _, m in live]
    rates = [m / p for p, m in live]
    if max(sizes) <= 4 * min(sizes):
        if not d.counted_in_ulps:
            return None  # as large as the values everywhere: other tables, not arithmetic
        return (
            f"does not grow with position: between {_g(min(sizes))} and {_g(max(sizes))} "
            "in every band of positions"
        )
    if max(rates) <= 4 * min(rates) and sizes[-1] >= 8 * sizes[0]:
        rate = d.max_rate  # over every position measured: a bound, not a band's end
        said = f"grows in proportion to position, up to {_g(rate)} x p"
        # a float angle p*w rounded to `arithmetic` is off by up to p*w/2 of its epsilon, and
        # the frequencies of these tables are at most 1: a few such roundings at most
        epsilon = FORMATS[arithmetic].epsilon
        if rate <= 8 * epsilon:
            said += f": the size of {arithmetic} rounding of the angles p*w"
            if computed_by is not None:
                said += f", as {computed_by} computes them"
        return said
    if sizes[-1] >= 16 * sizes[0] and all(x <= y * 1.0001 for x, y in zip(sizes, sizes[1:])):
        return f"grows with position: from {_g(sizes[0])} to {_g(sizes[-1])}"
    return None


# ---------------------------------------------------------------------------------------------
# Rearrangements


@dataclass(frozen=True)
class Rearrangement:
    """B's elements as A's after a change of layout: A's columns taken in `order` (None: as
    they are), row p of B set beside row p + `shift` of A, and, with `zero_rows`, the rows
    that are all zeros in one table and not in the other set aside."""

    what: str  # the change, in words, A and B written as {a} and {b}
    order: np.ndarray | None = None
    shift: int = 0
    zero_rows: bool = False

    @property
    def done(self) -> str:
        """The rearrangement as done to the tables, for "so {done}, they agree"."""
        said = [
            w for w, on in (("reordered", self.order is not None), ("shifted", self.shift)) if on
        ]
        return " and ".join(said) + (
            ", without those rows"
            if said and self.zero_rows
            else "without those rows"
            if self.zero_rows
            else ""
        )

    def rows(self, a_rows: int, b_rows: int) -> tuple[int, int]:
        """The rows of B it sets beside rows of A."""
        return max(0, -self.shift), min(b_rows, a_rows - self.shift)

    def pair(self, va: np.ndarray, vb: np.ndarray, start: int = 0):
        """The elements it puts side by side, from A's rows va (from row start + shift) and
        B's rows vb (from row start)."""
        x = va if self.order is None else va[:, self.order]
        if self.zero_rows:
            keep = ~(x.any(axis=1) ^ vb.any(axis=1))
            x, vb = x[keep], vb[keep]
        return x, vb


def rearrangements(va: np.ndarray, vb: np.ndarray) -> list[Rearrangement]:
    """The rearrangements worth trying for tables of this width whose first rows are va, vb:
    pairs of columns side by side or in halves, column blocks of d/4 in another order, rows
    shifted, rows of zeros in one table only set aside."""
    d = va.shape[1]
    found = []
    if d % 2 == 0 and d >= 4:
        pairs = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
        found.append(
            Rearrangement(
                "same values in another column order: {a}'s columns 2i and 2i + 1 are {b}'s "
                "i and i + d/2 ({a} pairs columns side by side, {b} in halves)",
                order=pairs,
            )
        )
        found.append(
            Rearrangement(
                "same values in another column order: {a}'s columns i and i + d/2 are {b}'s "
                "2i and 2i + 1 ({a} pairs columns in halves, {b} side by side)",
                order=np.argsort(pairs),
            )
        )
    if d % 4 == 0 and d >= 8:
        quarter = d // 4
        for blocks in permutations(range(4)):
            if blocks != (0, 1, 2, 3):
                order = np.concatenate([np.arange(k * quarter, (k + 1) * quarter) for k in blocks])
                found.append(
                    Rearrangement(
                        f"same values with column blocks of d/4 = {quarter} in another order: "
                        f"{{b}}'s blocks are {{a}}'s blocks {', '.join(map(str, blocks))}",
                        order=order,
                    )
                )
    zero_a, zero_b = ~va.any(axis=1), ~vb.any(axis=1)
    one_sided = zero_a ^ zero_b
    if one_sided.any():
        rows = np.flatnonzero(one_sided)[:3]
        which = "{a}" if zero_a[rows[0]] else "{b}"
        found.append(
            Rearrangement(
                f"position{_s(rows)} {_names(rows)} {'is' if len(rows) == 1 else 'are'} all "
                f"zeros in {which} only (padding)",
                zero_rows=True,
            )
        )
    for k in range(1, min(len(va) - 2, SHIFTS) + 1):
        for shift in (k, -k):
            first, second = ("{b}", "{a}") if shift > 0 else ("{a}", "{b}")
            moved = (
                f"rows shifted by {k}: row p of {first} is row p + {k} of {second} "
                "(another first position)"
            )
            found.append(Rearrangement(moved, shift=shift))
            if one_sided.any():
                found.append(
                    Rearrangement(
                        moved + ", and rows all zeros in one table only (padding)",
                        shift=shift,
                        zero_rows=True,
                    )
                )
    return found


def largest(rearrangement: Rearrangement, va: np.ndarray, vb: np.ndarray) -> float:
    """The largest |A - B| of the elements a rearrangement sets side by side in va and vb
    (the same rows of each table), inf where it sets none."""
    start, stop = rearrangement.rows(len(va), len(vb))
    if stop - start < 2:
        return np.inf
    x, y = rearrangement.pair(
        va[start + rearrangement.shift : stop + rearrangement.shift], vb[start:stop]
    )
    if len(x) < 2:
        return np.inf
    return float(np.max(np.abs(x - y)))


def explains(after: float, before: float, size: float) -> bool:
    """Whether a largest error `after` rearranging explains one of `before`: what is left is
    rounding beside it and beside the values' size."""
    return after <= before * EXPLAINED_SHARE and after <= size * EXPLAINED_SIZE


def search(va: np.ndarray, vb: np.ndarray) -> list[Rearrangement]:
    """The rearrangements that explain the difference of the first rows va and vb, best
    first (the smallest error left, then the simplest)."""
    head_a, head_b = va[:_SEARCH_ROWS], vb[:_SEARCH_ROWS]
    before = float(np.max(np.abs(head_a - head_b)))
    size = max(float(np.max(np.abs(head_b))), float(np.max(np.abs(head_a))))
    if not before > 0:
        return []
    scored = []
    for k, rearrangement in enumerate(rearrangements(head_a, head_b)):
        after = largest(rearrangement, head_a, head_b)
        if explains(after, before, size):
            scored.append((after, k, rearrangement))
    return [r for _, _, r in sorted(scored, key=lambda s: s[:2])]


def _g(value: float) -> str:
    return f"{value:.3g}"


def _ulps(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


def _s(items) -> str:
    count = items if isinstance(items, int) else len(items)
    return "" if count == 1 else "s"


def _span(first: int, last: int, noun: str = "") -> str:
    """'5..9', or '5' where first is last; with a noun, 'positions 5..9 are' / 'position 5 is'."""
    if not noun:
        return str(first) if first == last else f"{first}..{last}"
    return f"{noun} {first} is" if first == last else f"{noun}s {first}..{last} are"


def _names(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
