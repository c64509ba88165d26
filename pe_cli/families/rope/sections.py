"""Which M-RoPE layout and sections put each pair of a rotation on the position axis it was
read to follow (analysis/rotation_axes.py reads them from activations at (t, h, w) positions).

Pair k of a layout's table is the frequency k of its power law, taken on one axis: the axis of
the columns of its two dims (a layout whose pair takes two axes, HunYuan-VL's chunks of the
doubled frequencies, turns no pair by one angle and is passed over). A layout and sections match where every pair's axis is one of those
the reading allows it; the sections tried are every split of the frequencies into three."""

from __future__ import annotations

from .layouts import LAYOUTS, Mrope
from .pairing import pair_columns


def layouts_for(spec, follows: list[set[int]], pairing: str, ids: str, tokens: int) -> list:
    """Each (spec with --rope-axes and mrope_section at the tokens of inline --ids `ids`, the
    layout's summary) under which pair k of spec's 1-D table takes an axis in follows[k] (any
    axis where it is empty), in `pairing` (half or interleaved); t, h and w are axes 0, 1, 2."""
    n = len(follows)
    first, second = (range(2 * n)[c] for c in pair_columns(n, pairing))
    found = {}  # (layout, each pair's axis): one table, whichever sections give it
    for layout in LAYOUTS.values():
        if not isinstance(layout, Mrope) or layout.axes != ("t", "h", "w"):
            continue
        if layout.convention not in (None, pairing):
            continue
        for counts in _splits(n):
            sections = list(layout.sections(*counts))
            try:
                columns = layout.columns(n, sections)
            except Exception:  # a layout that refuses these sections (BadInput) or sizes
                continue
            if len(columns) != 2 * n:
                continue
            picked = [columns[c] for c in first]
            if picked != [columns[c] for c in second]:
                continue  # a pair's two columns on two axes: no one angle a pair
            if not all(f == k for (_, f), k in zip(picked, range(n))) or not all(
                not allowed or axis in allowed for (axis, _), allowed in zip(picked, follows)
            ):
                continue
            plan = tuple(axis for axis, _ in picked)
            # Qwen3-VL's sections past a third of the frequencies change nothing: the sections
            # said are those of the axes' own counts where they give the table
            own = [plan.count(a) for a in range(3)]
            if (layout.name, plan) in found and counts != tuple(own):
                continue
            rope = {**dict(spec.rope), "mrope_section": tuple(float(s) for s in sections)}
            laid = type(spec)(  # only what the table needs: a short command
                family=spec.family,
                variant=spec.variant,
                d_model=spec.d_model,
                base=spec.base,
                part="cos",
                rope=rope,
                axes=layout.name,
                ids=ids,
                seq_len=tokens,
            )
            found[(layout.name, plan)] = (laid, layout.summary)
    return list(found.values())


def _splits(n: int):
    """(t, h, w) counts of frequencies, every split of n into three."""
    for t in range(n + 1):
        for h in range(n - t + 1):
            yield t, h, n - t - h
