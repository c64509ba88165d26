"""Identification of rope tables: what an unknown table's values say it is. Registered in
families/readers.py in place of the family's candidates; building a table never imports it.

A diffusion model's table is read through its preset's layout (presets.py); a 1-D table's
frequencies are fitted (line.py) and explained by a rope type's settings (scalings.py)."""

from __future__ import annotations

from ....core.dtypes import MATCH_AT_MOST
from ..layouts import split_laws
from .axial import axial_candidates, paired
from .common import RUNS_NEAR
from .dtypes import other_dtypes
from .grids import rotation_sin
from .line import line_candidates
from .presets import padded_candidates, split_candidates
from .widths import rescaled


def candidates(values, dtype, notes, bench):
    """Scored candidates for an unknown table (families.readers): a diffusion model's table
    read through each preset's layout, then one of transformers' M-RoPE and vision layouts,
    then, unless it reads as several axes, a 1-D table fitted from its angles; where none is
    near, a preset's layout at the table's own head dim; where none is bit for bit, diffusers'
    tables in the other frequency dtype. What a reading noticed is said unless another one
    names the table bit for bit (a 1-D table's presets' notes beside its 1-D name)."""
    why: list = []  # what a multi-axis reading measured, said where nothing is near
    readings = list(_read(values, bench, why))  # (its candidates, its notes) each
    found = [c for made, _ in readings for c in made]
    rotation = rotation_sin(values) is not None
    # a layout at another head dim only for a table whose columns come in equal pairs (cos or
    # sin of a rotary layout; not a sinusoidal or 2-D sin-cos table, reading it costs seconds)
    # and that nothing read comes near: not a long 1-D table, whose law fitted from its first
    # rows can drift 1e-2 by its last (its rows then cost minutes to place as a preset's)
    if not any(c.difference.max_abs <= MATCH_AT_MOST for c in found) and (
        rotation or paired(values)
    ):
        said: list = []
        more = rescaled(values.shape[1], rotation)
        rescaled_found = [c for c in split_candidates(values, said, bench, more) if c]
        if not any(c.difference.max_abs <= RUNS_NEAR for c in rescaled_found):
            said += why
        readings.append((rescaled_found, said))
        found += rescaled_found
    found += [c for c in other_dtypes(bench, found) if c is not None]
    named = [said for made, said in readings if any(c.difference.identical for c in made)]
    for said in named or [said for _, said in readings]:
        notes += [note for note in said if note not in notes]
    yield from found


def _read(values, bench, why: list):
    """Each reading's candidates and notes: the presets', transformers' layouts', a 1-D
    table's."""
    said: list = []
    split = [c for c in split_candidates(values, said, bench) if c is not None]
    if not any(c.difference.max_abs <= RUNS_NEAR for c in split):
        split += padded_candidates(values, said, bench)
    yield split, said
    said = []
    axial = [c for c in axial_candidates(values, said, bench, why) if c is not None]
    yield axial, said
    # a multi-axis table: its first columns need not turn, nor follow one law (a one-axis
    # preset's table is also a 1-D one)
    if (
        why  # its columns follow several axes: not a 1-D table's, whatever its first ones do
        or any(c.difference.max_abs <= RUNS_NEAR for c in axial)
        or any(len(split_laws(c.spec)) > 1 for c in split)
    ):
        return
    said = []
    yield [c for c in line_candidates(values, said, bench) if c is not None], said
