"""What `show` looks at: a file's table or a built one, streamed once for its facts; the rows
it prints are read on their own."""

from __future__ import annotations

from dataclasses import dataclass

from ..families import FAMILIES
from ..options import Options
from ..spec import TableSpec
from .compare import side
from .metrics import Facts
from .tables import Source, from_spec


@dataclass
class View:
    table: Source  # reads any rows of the table
    facts: dict

    @property
    def label(self) -> str:
        return self.table.label

    @property
    def spec(self) -> TableSpec | None:
        return self.table.spec

    @property
    def lines(self) -> list[tuple[str, str]]:
        """The family's own facts, for a person."""
        return [] if self.spec is None else FAMILIES[self.spec.family].fact_lines(self.facts)


def table_of(source: str | None, options: dict) -> Source:
    """The table in `source` (a file), or the one the options describe when there is none."""
    return side(source, {}) if source is not None else from_spec(Options(options).spec(), "table")


def view(source: str | None, options: dict) -> View:
    """That table, streamed once for its facts."""
    table = table_of(source, options)
    facts = Facts(table.rows, table.cols, table.dtype, table.spec)
    for first, block in table.blocks():
        facts.add(first, block)
    return View(table, facts.report())
