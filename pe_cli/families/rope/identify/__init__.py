"""Identification of rope tables: what an unknown table's values say it is, proposed to the
scorer (families.proposals); building a table never imports it.

The reading is a sequence of stages, each run where the ones before leave the table unnamed:
a diffusion model's table read through each preset's layout (presets.py), then with its
trailing zero rows as padding; transformers' M-RoPE and vision layouts (axial.py); a 1-D
table's frequencies fitted (line.py) and explained by a rope type's settings (scalings.py); a
preset's layout at the table's own head dim (widths.py); diffusers' tables in the other
frequency dtype (dtypes.py)."""

from __future__ import annotations

from ....core.dtypes import MATCH_AT_MOST
from ...proposals import Note, answers, near
from ..family import FAMILY
from ..layouts import split_laws
from .axial import axial, paired
from .common import RUNS_NEAR
from .dtypes import other_dtypes
from .grids import rotation_sin
from .line import line
from .presets import padded, split
from .widths import rescaled

__all__ = ["FAMILY", "read"]


def read(view):
    """The stages in turn. What a reading noticed is said unless another one names the table
    bit for bit (a 1-D table's presets' notes beside its 1-D name)."""
    values = view.values
    readings = []  # each stage's answers and notes
    why: list = []  # what a multi-axis reading measured, said where nothing is near

    # presets: always; with trailing zero rows as padding where no preset's table is near
    said: list = []
    presets = yield from answers(split(view, said))
    if not near(presets, RUNS_NEAR):
        presets += yield from answers(padded(view, said))
    readings.append((presets, said))
    # transformers' multi-axis layouts: always
    multi = yield from answers(axial(view, why))
    readings.append((multi, []))
    # a 1-D table: unless its columns follow several axes (its first columns need not turn,
    # nor follow one law), a multi-axis layout is near, or a preset of several laws named it
    if not (why or near(multi, RUNS_NEAR) or any(len(split_laws(s.spec)) > 1 for s in presets)):
        said = []
        readings.append(((yield from answers(line(view, said))), said))
    found = [s for made, _ in readings for s in made]
    # a preset's layout at another head dim: where nothing read comes near, for a table whose
    # columns come in equal pairs (cos or sin of a rotary layout; not a sinusoidal or 2-D
    # sin-cos table, reading it costs seconds): not a long 1-D table, whose law fitted from its
    # first rows can drift 1e-2 by its last (its rows then cost minutes to place as a preset's)
    rotation = rotation_sin(values) is not None
    if not near(found, MATCH_AT_MOST) and (rotation or paired(values)):
        said = []
        more = yield from answers(split(view, said, rescaled(values.shape[1], rotation)))
        if not near(more, RUNS_NEAR):
            said += why
        readings.append((more, said))
        found += more
    # diffusers' tables in the other frequency dtype: where none is bit for bit
    yield from other_dtypes(found)
    named = [said for made, said in readings if any(s.named for s in made)]
    for said in named or [said for _, said in readings]:
        for note in said:
            yield Note(note)
