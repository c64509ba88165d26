"""Reading a diffusion model's table back (--preset): each axis's positions read from its
columns, then its tokens as text tokens and a grid of the preset's layout; where none is
found, whole positions (or halves to sixteenths) as --ids runs, and blocks of a pooled grid."""

from __future__ import annotations

from dataclasses import replace

from ...proposals import Proposal, answers, changed
from ..family import FAMILY
from ..models import PRESETS
from ..split import divisors
from .common import CLOSE, MOST_RUNS, RUNS_NEAR, is_whole
from .grids import as_grid, may_be_angles, read_axes, read_tail, rotation_sin
from .pooled import POOL_LEADING, POOLS, read_pooled
from .runs import binary_denominators, read_runs


def _scales(positions) -> list[float]:
    """Where a one-axis table's positions read as k * c (a law's frequencies times c, its
    Law.scaled_by key): c to 1 .. 7 significant digits, the values its config would give."""
    import numpy as np

    if positions.shape[1] != 1 or len(positions) < 3:
        return []
    read = np.abs(positions[:, 0])
    c = float(read[1])
    if not (
        c > 0 and abs(c - 1) > CLOSE and np.all(np.abs(read - c * np.arange(len(read))) < CLOSE)
    ):
        return []
    return sorted({float(f"{c:.{digits}g}") for digits in range(1, 8)} - {1.0})


def _proposals(name, preset, part, spec):
    """The preset's exact table, and its library variants in each dtype its own law computes
    frequencies in (LTX-2: its double precision, and float32 without it)."""
    yield Proposal(f"preset {name}, {part}", spec, preset.summary)
    for dtype in preset.layout.law.dtypes if preset.layout.law else ():
        if spec is not None and dtype != spec.freqs_dtype:
            changes = {"freqs_dtype": dtype}
            yield Proposal(f"preset {name}, {part}", spec, itself=False, library_changes=changes)


def padded(view, notes):
    """A table whose last rows are zeros (Lumina2's caption table for a short prompt): what
    its rows before them read as, with those zeros as --padding-rows."""
    zeros = view.trailing_zero_rows()
    if not 0 < zeros < view.length:
        return

    def padding(proposal):
        padded = changed(proposal.spec, padding_rows=zeros)
        return replace(proposal, spec=padded, against=changed(proposal.against, padding_rows=zeros))

    yield from answers(split(view.head(view.length - zeros), notes), padding)


def split(table, notes, presets=None):
    """A preset's table: each axis's positions read back from its columns, then its tokens
    as text tokens and a grid of the preset's layout, scored as usual. Where none is found,
    whole positions (or halves to sixteenths) that make no grid, as --ids runs (a note says
    so where they are too many); where nothing is bit for bit, blocks of a pooled grid.
    `presets`: those tried, by name (default every --preset)."""
    import numpy as np

    values = table.values
    found, scattered, later, pooled, named = [], [], [], [], []
    rotation = rotation_sin(values) is not None
    # (the spec's part, the part its columns are read as, that part's rows of the table's)
    views = (
        [("rotation", "sin", rotation_sin)]
        if rotation
        else [
            (p, p, lambda v: v)
            for p in ("cos", "sin", "angle")[: 3 if may_be_angles(values) else 2]
        ]
    )
    for (name, preset), convention in (
        (p, c)
        for p in (presets or PRESETS).items()
        for c in (p[1].convention, *["single"][: p[1].layout.once])
    ):
        width = preset.head_dim // (2 if convention == "single" else 1) * (2 if rotation else 1)
        if width != values.shape[1]:
            continue
        style = preset.layout
        point = "x".join(["1"] * (len(preset.axes_dim) - style.trailing))  # one token
        work = [(extra, view) for extra in preset.tries for view in views]
        while work:
            extra, (part, reading, view) = work.pop(0)
            spec = table.spec(
                family=FAMILY.name,
                d_model=preset.head_dim,
                base=preset.theta,
                axes=preset.axes,
                rope={**preset.rope, **extra},
                convention=convention,
                part=part,
                grid=point,
                freqs_dtype=preset.freqs_dtype,
            )
            if spec is None:
                continue
            positions = read_axes(view(values), spec, reading)
            if not np.all(np.isfinite(positions)):
                continue

            def read_at(rows, spec=spec, reading=reading, view=view, positions=positions):
                beyond = [r for r in rows if r >= len(positions)]  # past the rows families fit from
                seen = [positions[r] for r in rows if r < len(positions)]
                more = read_axes(view(table.at(beyond)), spec, reading) if beyond else []
                return seen + list(more)

            tokens = as_grid(positions, spec, reading, table.length, read_at)
            tails = read_tail(spec, table.length, read_at) if style.tail and not tokens else ()
            for tail, count in tails:  # Cosmos 3's sound and action tokens after the grid
                tailed = changed(spec, rope={**dict(spec.rope), **tail})
                tokens = tailed and as_grid(
                    positions, tailed, reading, table.length - count, read_at
                )
                if tokens is not None:
                    spec = tailed
                    break
            if tokens is not None:
                grid, text = tokens
                spec = changed(spec, grid=grid, text_tokens=text)
            elif is_whole(positions * np.array(divisors(spec))) and len(positions) > 1:
                later.append(
                    (name, preset, part, spec, view, reading)
                )  # whole positions that make no grid
                continue
            else:  # a wrong theta or layout, fractions, Kandinsky 6's audio at some freqs_scaling, or pooled
                if binary_denominators(positions * np.array(divisors(spec))) and len(positions) > 1:
                    later.append((name, preset, part, spec, view, reading))  # halves, quarters, ...
                if part in ("cos", "sin") and not extra and len(positions) > 1:
                    pooled.append((name, preset, part, spec, view(values[:POOL_LEADING]), reading))
                scale = style.law.scaled_by if style.law else ""
                if scale and scale not in extra:
                    work += [
                        ({**extra, scale: f}, (part, reading, view)) for f in _scales(positions)
                    ]
                continue
            if spec is None:
                continue
            found.append(name)
            named += yield from answers(_proposals(name, preset, part, spec))
    for name, preset, part, spec, view, reading in later if not found else ():
        runs = read_runs(spec, table, view, reading)  # every token's positions, as runs
        if runs is None:
            scattered.append(name)
            continue
        spec = changed(spec, grid=None, ids=runs)
        # else the wrong layout's whole readings
        if spec is not None and table.distance(spec) <= RUNS_NEAR:
            found.append(name)
            named += yield from answers(_proposals(name, preset, part, spec))
    # a renormalised pooled table reads as its blocks' centres: pooling may be its library's table
    for name, preset, part, spec, seen, reading in () if any(s.named for s in named) else pooled:
        for k in POOLS:
            read = read_pooled(spec, table, seen, reading, k)
            if read is None:
                continue
            ids, pool, unit = read
            rope = (*spec.rope, ("pool", pool), *[("pool_unit", True)][:unit])
            spec_k = changed(spec, grid=None, ids=ids, rope=rope)
            if spec_k is not None and table.distance(spec_k) <= RUNS_NEAR:
                found.append(name)
                yield from _proposals(name, preset, part, spec_k)
                break
    if scattered and not found:
        notes.append(
            f"the columns read as {' or '.join(dict.fromkeys(scattered))} RoPE at positions k/Q (Q = 1, "
            f"2, 4, 8 or 16), "
            f"but its tokens make more than {MOST_RUNS} runs of grids and lines (give them with "
            "--ids to compare)"
        )
