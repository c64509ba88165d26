"""What `show` and `compare` say of a rope table: its settings in one line each, the facts of
its frequencies and positions, its rows' labels and norm, and the table without its frequency
scaling (the wavelengths figure's)."""

from __future__ import annotations

import math

from ...core.errors import BadInput
from ..base import Norm, Scaling, Served
from . import exact
from .exact import cols, scale, vector
from .keys import KEYS
from .layouts import axes_plan, axis_names, grid_shape, layout_of
from .pairing import pair_columns
from .split import law_frequencies, split_positions
from .tokens import axes_positions, line_ids, positions_end
from .types import ROPE_TYPES, hf_inv_freq, type_facts


def settings(spec, common: list) -> list[tuple[str, str]]:
    """The family's settings after the common ones (family, convention)."""
    if spec.axes and layout_of(spec).split:
        names = axis_names(spec)
        where = "then" if layout_of(spec).text_after else "after"
        text = f", {where} {spec.text_tokens} text tokens" if spec.text_tokens else ""
        if spec.ids:
            positions = f"ids {spec.ids} ({' x '.join(names)})"
        else:
            covered = names[: len(names) - layout_of(spec).trailing][-len(grid_shape(spec)) :]
            positions = f"grid {spec.grid} ({' x '.join(covered)}{text})"
        positions += f", then {spec.padding_rows} rows of zeros" if spec.padding_rows else ""
    elif spec.axes and spec.ids is not None:
        positions = f"ids {spec.ids} ({' x '.join(layout_of(spec).axes)})"
    elif spec.axes and spec.grid is not None:
        style = layout_of(spec)
        merged = f", {spec.merge}x{spec.merge} merge blocks" if spec.merge > 1 else ""
        offset = f", + {spec.offset}" if spec.offset else ""
        positions = f"grid {spec.grid} ({' x '.join(style.axes)}{merged}{offset})"
    elif spec.ids is not None:
        positions = f"ids {spec.ids}"
    elif vector(spec):  # the frequencies alone: no position
        positions = "none (the frequencies, inv_freq)"
    else:
        positions = f"{spec.offset} .. {spec.last_position}"
    return [
        *common,
        *(
            [("part", spec.part)] if spec.part == "angle" else []
        ),  # the one a match's name may not say
        ("base", f"{spec.base:g}"),
        ("positions", positions),
        ("rope", ", ".join(f"{k}={v}" for k, v in spec.rope) or "rope_type=default"),
        *([("axes", f"{spec.axes}: {layout_of(spec).summary}")] if spec.axes else []),
        *(
            [("arithmetic", spec.arithmetic)]
            if spec.variant != "exact" and spec.arithmetic != "cos-sin"
            else []
        ),
        *([("freqs dtype", spec.freqs_dtype or "float32")] if spec.variant == "diffusers" else []),
    ]


def scaling(spec) -> Scaling:
    rope = dict(spec.rope)
    kind = ROPE_TYPES[rope.get("rope_type", "default")]
    plain = {k: v for k, v in rope.items() if not KEYS[k].scales}
    if kind.kept:  # a layout more than a scaling: kept, less its factor
        plain["rope_type"] = kind.name
    original, longest = rope.get(kind.starts), rope.get("max_position_embeddings")
    if kind.starts == "max_position_embeddings":  # where the scaling starts, not its length
        longest = None
    marks = [(original, "original context")] if original else []
    if longest and longest != original:
        marks.append((longest, "scaled context" if original else "context"))
    elif original and rope.get("factor"):
        marks.append((original * rope["factor"], "scaled context (original x factor)"))
    return Scaling(spec.replace(rope=plain) if plain != rope else None, marks)


def row_label(spec):
    """Row index -> its label, or None where the rows are --offset's positions."""
    if vector(spec):
        return lambda i: "-"
    if spec.axes and layout_of(spec).split:  # a token's position on each axis
        positions = split_positions(spec)
        return lambda i: (
            "({})".format(",".join(f"{p:g}" for p in positions[i])) if i < len(positions) else "pad"
        )
    ids = line_ids(spec)
    if ids is not None:
        return lambda i: str(ids[i])
    return None


def row_norm(spec):
    """A rotation part's rows: each frequency's [[cos, -sin], [sin, cos]] times the
    attention factor a, 2 a^2 each: a * sqrt(d/2) over d columns. A cos, sin or angle part
    alone has no such norm."""
    if spec.part != "rotation":
        return None
    attention = exact.frequencies(spec).factor
    value = float(attention) * math.sqrt(cols(spec) / 2)
    return Norm(value, "sqrt(d/2) x attention factor", "d/4 2x2 rotations")


def facts(spec):
    frequencies, attention = exact.frequencies(spec)
    split = spec.axes and layout_of(spec).split
    if split:  # per unit of position, as the model has them (the kernel's are per step)
        frequencies = [w for law in law_frequencies(spec) for w in law]

    def out(c):  # a layout column's columns in the table (two of a rotation part's)
        return [2 * c, 2 * c + 1] if spec.part == "rotation" else [c]

    if spec.axes:  # each frequency's columns, by position axis
        names = axis_names(spec)
        where: dict = {}
        for c, (axis, i) in enumerate(axes_plan(spec).columns):
            where.setdefault(i, {}).setdefault(names[axis], []).extend(out(c))
        placed = {
            i: {axis: ", ".join(map(str, cs)) for axis, cs in found.items()}
            for i, found in where.items()
        }
    elif spec.part == "cos-sin":  # cos of frequency i in column i, its sin n columns on
        placed = {i: [i, len(frequencies) + i] for i in range(len(frequencies))}
    else:
        columns = range(2 * len(frequencies))
        first, second = (columns[pair] for pair in pair_columns(len(frequencies), spec.convention))
        placed = {i: sorted({*out(first[i]), *out(second[i])}) for i in range(len(frequencies))}
    positions = (
        split_positions(spec)
        if split
        else axes_positions(spec)
        if spec.axes and (spec.grid is not None or spec.ids is not None)
        else line_ids(spec)
    )
    return {
        "attention_factor": float(attention),
        **({} if spec.axes else type_facts(spec, lambda: positions_end(spec))),
        "frequencies": []
        if vector(spec)
        else [
            {
                "index": i,
                "columns": placed.get(i, []),
                "frequency": float(w),
                # a zero frequency (proportional RoPE's unrotated tail) never turns
                "wavelength": 2 * math.pi / float(w) if w else None,
            }
            for i, w in enumerate(frequencies)
        ],
        "positions": [spec.offset, spec.last_position]
        if positions is None
        else [float(positions.min()), float(positions.max())]
        if split
        else [int(positions.min()), int(positions.max())],
    }


def fact_lines(facts: dict) -> list[tuple[str, str]]:
    """Its rope type's facts, for a person."""
    lines = []
    if "yarn_correction_range" in facts:
        low, high = facts["yarn_correction_range"]
        how = "floor and ceil" if facts["yarn_truncate"] else "not truncated"
        lines.append(("yarn ramp", f"dims {low!r} .. {high!r} ({how})"))
    if "longrope_switch" in facts:
        switch, used = facts["longrope_switch"], facts["longrope_factors"]
        other = "short_factor up to" if used == "long_factor" else "long_factor past"
        lines.append(("longrope", f"this table uses {used}; {other} {switch} positions"))
    return lines


def served(spec) -> Served:
    """A 1-D table's frequencies and positions for `show --precision`; with --variant hf-rope,
    transformers' float32 inv_freq (its rotary forward's angles are fl32(fl32(p) * inv_freq))."""
    if spec.axes:
        names = axis_names(spec)
        raise BadInput(
            f"--precision reads a table over one position axis; this one's run over "
            f"{len(names)} ({', '.join(names)})"
        )
    if line_ids(spec) is not None:
        raise BadInput("--precision reads positions --offset onwards, one a row: drop --ids")
    if vector(spec) or scale(spec):
        raise BadInput(
            f"--precision reads a table of cos and sin over positions; --part {spec.part} is "
            "none: drop it"
        )
    if spec.variant not in ("exact", "hf-rope"):
        raise BadInput(
            "--precision works out the exact table in a dtype, and with --variant hf-rope "
            f"transformers' float32 angles; --variant {spec.variant} is another table: drop it"
        )
    frequencies, attention = exact.frequencies(spec)
    if spec.variant == "exact":  # torch, whose import is most of the time, only when asked
        return Served(list(frequencies), attention, spec.offset, spec.seq_len)
    import torch

    inv_freq, _ = hf_inv_freq(torch, spec, lambda: positions_end(spec))
    return Served(
        list(frequencies), attention, spec.offset, spec.seq_len, "transformers", inv_freq.numpy()
    )
