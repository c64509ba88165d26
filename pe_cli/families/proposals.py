"""The contract between identification's readers and its scorer (analysis.identify).

A family's reader is a generator over a read-only view of the table (analysis.identify.View):
it yields a `Proposal` for each table the values say it may be and a `Note` for what it
measured, and nothing else. It builds no candidate and touches no list of notes. The scorer
answers each proposal with a `Scored` (or None where it made no candidate of it): a reader
that chooses its next proposal by how the last ones fared reads that answer, never a score of
its own. What is said of the table, and in which order the candidates come, the scorer alone
decides.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass

from ..core.errors import BadInput


@dataclass(frozen=True)
class Proposal:
    """A table the values say the file may be: the scorer builds it, scores it and, for an
    exact spec, tries the family's library variants of it too (their names `library NAME`)."""

    name: str
    spec: object  # the TableSpec proposed; None where the parameters make no table
    source: str = ""  # for a variant: the function and version it reproduces
    detail: str = ""  # said after its name and its library variants' (how the base was made)
    libraries: bool = True  # also its family's library variants (an exact spec's)
    itself: bool = True  # False: only those variants (a frequency dtype it was not read in)
    now: bool = False  # a variant scored at once on a long table's sample (its answer is read)
    # the exact table it is measured against, where not its own spec's (one of another
    # frequency dtype, or arithmetic, than the exact table has)
    against: object = None
    # what its library variants take beyond the spec (a frequency dtype only they have)
    library_changes: dict | None = None


@dataclass(frozen=True)
class Note:
    """What a reading measured, in a sentence for the user: said where its family's candidate
    is the best one, or where no candidate is the table bit for bit."""

    text: str


@dataclass(frozen=True)
class Scored:
    """The scorer's answer to a proposal: its distance from the table (largest |error| on the
    rows scored), and whether it, or one of the variants tried with it, is the table bit for bit
    on those rows."""

    spec: object  # the proposal's TableSpec
    max_abs: float
    named: bool


def changed(spec, **changes):
    """A spec with these changes, or None where they make no table (None stays None)."""
    if spec is None:
        return None
    try:
        return spec.replace(**changes)
    except BadInput:
        return None


def answers(reader: Iterator, change=None) -> Generator:
    """Hand a sub-reader's proposals and notes up (each through `change`, where given), and
    return the answers to its proposals (those the scorer made a candidate of):
    `found = yield from answers(sub(view))`."""
    found, answer = [], None
    while True:
        try:
            item = reader.send(answer)
        except StopIteration:
            return found
        answer = yield item if change is None else change(item)
        if answer is not None:
            found.append(answer)


def near(found: list[Scored], within: float) -> bool:
    """Whether any answer is within `within` of the table."""
    return any(s.max_abs <= within for s in found)
