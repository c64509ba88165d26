"""How far a library's table is from the exact one, for a table built from a library's input
(a transformers config.json): what generate's summary and the line after a write say, so
that the default exact table never passes for the model's own. Measured, not estimated, with
the streamed comparison (metrics.Tally) over the whole table, or, past MEASURED_ELEMENTS, over
its last rows, where float32 angle rounding grows largest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import PeError
from ..families import FAMILIES
from ..spec import TableSpec

if TYPE_CHECKING:
    from .metrics import Difference

MEASURED_ELEMENTS = 1 << 24  # all tables' together: Llama 3.1's 131072 x 128 whole, about 1 s


@dataclass
class Distance:
    """A library's tables against the exact ones: each table's difference over rows
    first..stop-1 of its `rows`; or why it was not measured."""

    library: str  # for a person: "transformers"
    variant: str  # the variant that builds the library's table
    differences: dict[str, Difference]  # by table name
    first: int
    stop: int
    rows: int
    spec: TableSpec  # the first table measured (its row labels)
    refusal: str | None = None

    @property
    def max_abs(self) -> float:
        return max((d.max_abs for d in self.differences.values()), default=0.0)


def library_distance(tables: dict[str, TableSpec], options: dict) -> Distance | None:
    """The distance of each exact table from the library's table its options name, or None
    where they name no library (or no exact table is built)."""
    exact = {name: spec for name, spec in tables.items() if spec.variant == "exact"}
    if not exact:
        return None
    first_spec = next(iter(exact.values()))
    family = FAMILIES[first_spec.family]
    library = family.library(options)
    if library is None:
        return None
    # the comparison's machinery, for the tables that need it (not the plain summary's start)
    from .metrics import Tally, gather
    from .tables import from_spec

    rows = first_spec.rows
    share = max(1, MEASURED_ELEMENTS // (len(exact) * max(1, first_spec.cols)))
    first = max(0, rows - share)
    distance = Distance(library.name, library.variant, {}, first, rows, rows, first_spec)
    try:
        for name, spec in exact.items():
            spec = spec.replace(device="cpu", shape="2d")
            theirs = spec.replace(variant=library.variant)
            if first:
                spec, theirs = family.window(spec, first, rows), family.window(theirs, first, rows)
                if spec is None or theirs is None:
                    raise _Unmeasured(
                        f"this table's {rows * first_spec.cols} values are more than the "
                        f"{MEASURED_ELEMENTS} measured here, and its last rows are no table of "
                        f"their own; pe-cli compare exact {library.variant} with the same "
                        "options measures it"
                    )
            mine, other = from_spec(spec, "exact"), from_spec(theirs, library.variant)
            tally = Tally(mine.rows, mine.cols, spec.dtype, spec.offset)
            distance.differences[name] = gather(
                tally,
                ((start, a, b) for (start, a), (_, b) in zip(other.blocks(), mine.blocks())),
            )
    except (PeError, _Unmeasured) as e:
        distance.refusal = str(e)
        distance.differences = {}
    return distance


class _Unmeasured(Exception):
    """Why the library's table is not measured."""
