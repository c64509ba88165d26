"""A long dump read once. The table a rotation's angles make is named from the dump's first
SAMPLE_ROWS rows, read ahead of the pass: identification reads a table of that many rows, each
pair's line through their angles. The library rebuild, which needs the table's name, then rides
on the reading's own pass (rotation.read_rotation's tap), block by block, and the files are read
once past those first rows, which are read twice.

What the first rows say is used only where the whole dump's reading says the same: the same
pairing and rotary dims, the pairs that turn, the offset, the direction and the scale the
library's planes are turned and scaled by. Where it says otherwise, the table is named again
from the whole dump and rebuilt in a pass of its own: a claim is always the whole dump's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .rotation import Activations, Reading
from .rotation_rebuild import Rebuilding, factor_of, rebuild


class Ahead:
    """The report of a dump's first rows, and the rebuild its named table feeds on the pass."""

    def __init__(self, first, act: Activations):
        self.first = first
        self.rebuilding = None
        if first.reading.fit is not None and first.table_spec is not None:
            # the planes at the whole dump's positions, as the first rows' reading applies them
            whole = replace(first, reading=replace(first.reading, act=act))
            self.rebuilding = Rebuilding(whole)

    @property
    def tap(self):
        return None if self.rebuilding is None else self.rebuilding.add

    def identification(self, reading: Reading, offset: int):
        """The first rows' identification where it names their table and the whole dump's
        reading is theirs, else None (the caller names the whole dump's angles)."""
        if self.first.named is None or not self._same(reading, offset):
            return None
        return self.first.identification

    def rebuilt(self, found):
        """The rebuild fed on the pass where its planes are those the whole reading applies,
        else a pass of its own (rotation_rebuild.rebuild)."""
        first = self.first
        if (
            self.rebuilding is not None
            and self._same(found.reading, found.offset)
            and found.table_spec is not None
            and found.table_spec == first.table_spec
            and _turned(found.reading, found.table_spec) == _turned(first.reading, first.table_spec)
        ):
            return self.rebuilding.result()
        return rebuild(found)

    def _same(self, reading: Reading, offset: int) -> bool:
        mine = self.first.reading
        if mine.fit is None or reading.fit is None or mine.line is None or reading.line is None:
            return False
        p, q = mine.fit.pairing, reading.fit.pairing
        return (
            (p.name, p.width, p.written) == (q.name, q.width, q.written)
            and np.array_equal(mine.turning, reading.turning)
            and self.first.offset == offset
        )


def _turned(reading: Reading, spec) -> tuple[bool, float | None]:
    """How rotation_rebuild turns and scales a library's planes for this reading: backwards or
    not, and the scale they are multiplied by (None: none)."""
    backwards = bool(np.all(reading.line.rates < 0))
    rest = reading.fit.scale / factor_of(spec)
    return backwards, rest if abs(rest - 1) > 8 * reading.act.unit else None


def first_rows(act: Activations, rows: int) -> Activations | None:
    """The dump's first `rows` rows, read from its files as the whole is, where the dump is
    longer and its rows lie along one position axis; else None (read whole, as before)."""
    if act.shape[0] <= rows or act.read_native is None or act.axes_differ:
        return None
    return replace(
        act,
        shape=(rows, *act.shape[1:]),
        positions=act.positions[:rows],
        ids=None if act.ids is None else act.ids[:, :rows],
    )
