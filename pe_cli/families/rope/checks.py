"""What the rope family refuses to build, each with its one line: rope parameters a layout or
a variant does not take, grids and ids that do not fit the layout, and angles past the dtype."""

from __future__ import annotations

from ...core.dtypes import FORMATS
from ...core.errors import BadInput
from ...core.names import choice
from ..positions import ids_positions
from . import exact
from .keys import KEYS, refusal
from .layouts import LAYOUTS, axes_plan, grid_shape, layout_of, split_laws
from .split import pool_blocks, split_tokens
from .tokens import axes_positions, line_ids, positions_end
from .types import ROPE_TYPES, rotary_dim


def check(spec) -> None:
    """Refuse what the family cannot build (BadInput, with the reason)."""
    rope = dict(spec.rope)
    dim = rotary_dim(spec.d_model, rope)
    if dim < 1:
        raise BadInput(
            f"the rotary dim int(d_model * partial_rotary_factor) = {dim} must be at least 1"
        )
    kind = rope.get("rope_type", "default")
    if ROPE_TYPES[kind].check is not None:
        ROPE_TYPES[kind].check(rope, spec.d_model, dim, lambda: positions_end(spec))
    choice("rope arithmetic", spec.arithmetic, ("cos-sin", "polar"))
    if spec.part == "query-scale":
        from .query_scale import kind_of

        kind_of(rope)
        if spec.variant not in ("exact", "hf-rope") or spec.axes:
            raise BadInput(
                "--part query-scale is a 1-D table of positions, exact or in transformers' "
                "arithmetic (--variant hf-rope)"
            )
    if spec.part == "cos-sin" and (spec.convention != "single" or spec.axes):
        raise BadInput(
            "--part cos-sin is vLLM's cos_sin_cache, [cos | sin] with one column per frequency "
            "of a 1-D table: it needs --convention single"
            + (f", not {spec.convention}" if spec.convention != "single" else ", and no --axes")
        )
    if spec.part == "rotation" and spec.convention != "interleaved":
        raise BadInput(
            "--part rotation is the 2x2 rotation of columns 2i and 2i + 1 (HiDream, Kandinsky 5): "
            f"it needs --convention interleaved, not {spec.convention}"
        )
    style = layout_of(spec)
    if spec.freqs_dtype is not None and spec.variant != "diffusers" and not (style and style.split):
        raise BadInput("--freqs-dtype is the dtype of --variant diffusers' arithmetic")
    if style is None or not style.split:
        _check_axes(spec, kind)
    _check_split(spec, style, kind)
    largest = _largest_angle(spec) if spec.part == "angle" else 0.0
    if largest > FORMATS[spec.dtype].max_value:
        raise BadInput(
            f"--part angle: its angles reach {largest:.6g}, past {spec.dtype}'s "
            f"largest value {FORMATS[spec.dtype].max_value:g}: choose a wider --dtype"
        )


def _largest_angle(spec) -> float:
    """The largest |p * w| of the table (each axis's positions at its own frequencies)."""
    import numpy as np

    frequencies = [float(w) for w in exact.frequencies(spec).values]
    if spec.axes and layout_of(spec).split:
        numerators, start, top = split_tokens(spec).numerators, 0, 0.0
        for axis, (dim, _) in enumerate(split_laws(spec)):
            share = frequencies[start : start + dim // 2]
            start += dim // 2
            if share:  # an axis without columns (LTX-2's cross-attention) turns no angle
                top = max(top, float(np.abs(numerators[:, axis]).max()) * max(share))
        return top
    ids = line_ids(spec)
    positions = (
        axes_positions(spec)
        if spec.axes
        else ids
        if ids is not None
        else np.array([spec.offset, spec.last_position])
    )
    return float(np.abs(positions).max()) * max(frequencies, default=0.0)


def _check_axes(spec, kind: str) -> None:
    style = layout_of(spec)
    if style is None:
        if not ROPE_TYPES[kind].line:
            raise BadInput(
                f"rope_type {kind} is a vision encoder's 2-D RoPE: it needs the model's "
                "layout (--rope-axes, set by --rope-config for the models pe-cli knows) "
                "and a --grid of patches"
            )
        for name, value, default in (("grid", spec.grid, None), ("merge", spec.merge, 1)):
            if value != default:
                raise BadInput(
                    f"--{name} is for multi-axis tables (M-RoPE or vision RoPE): give "
                    "--rope-axes, or a --rope-config of such a model"
                )
        if (
            spec.ids is not None
        ):  # a 1-D table's positions, one entry per run (OmniGen's padded rows)
            if spec.offset:
                raise BadInput("--ids gives every row's position: drop --offset")
            if ids_positions(spec.ids, 1).denominators != (1,):
                raise BadInput(f"--ids {spec.ids}: a 1-D table takes whole positions")
        return
    if spec.ids is not None:
        if spec.grid is not None or spec.offset or spec.merge != 1:
            raise BadInput("--ids gives every token's positions: drop --grid, --offset and --merge")
        numerators, denominators, _ = ids_positions(spec.ids, len(style.axes))
        if any(q != 1 for q in denominators):
            raise BadInput(
                f"--ids {spec.ids}: --rope-axes {style.name} takes whole positions (fractional ones "
                "are for diffusers' split layouts)"
            )
    elif style.vision and spec.grid is None:
        raise BadInput(
            f"--rope-axes {style.name} ({'x'.join(style.axes)}) needs a --grid of patches"
        )
    if spec.merge != 1 and not style.merged:
        raise BadInput(f"--merge: --rope-axes {style.name} does not merge patches")
    if spec.convention != style.convention:
        raise BadInput(
            f"--rope-axes {style.name} pairs its columns {style.convention}, not {spec.convention}"
        )
    if not ROPE_TYPES[kind].vision and style.vision:
        raise BadInput(f"a vision encoder's RoPE takes no rope_type {kind}")
    if spec.arithmetic != "cos-sin":
        raise BadInput("--rope-arithmetic polar is for 1-D tables")
    if spec.grid is not None:
        grid_shape(spec)
    axes_plan(spec)


def _check_split(spec, style, kind: str) -> None:
    rope = dict(spec.rope)
    for key in KEYS.values():  # a model's own keys, which its layouts take
        if key.refusal and key.name in rope and (style is None or key not in style.keys):
            raise BadInput(refusal(key, LAYOUTS.values()))
    if style is not None and style.split and style.check is not None:
        style.check(spec)
    if "pool" in rope:
        if style is None or not style.split:
            raise BadInput(
                "rope parameter pool averages a diffusers multi-axis table over blocks (FramePack's "
                "and Helios's history): it needs a split layout (--rope-axes split, or a --preset)"
            )
        if spec.part not in ("cos", "sin"):
            raise BadInput(
                f"rope parameter pool averages cos and sin tables, not --part {spec.part}"
            )
        if not 1 <= len(split_laws(spec)) <= 3:
            raise BadInput(
                f"rope parameter pool averages over 1 to 3 axes (avg_pool1d to avg_pool3d), "
                f"not {len(split_laws(spec))}"
            )
        pool_blocks(spec)
    if rope.get("pool_unit"):
        if "pool" not in rope:
            raise BadInput(
                "rope parameter pool_unit renormalises pooled blocks: give their sizes with pool"
            )
        if spec.convention != "single" or style.once:
            raise BadInput(
                "rope parameter pool_unit renormalises a complex table's pooled values (AnyFlow-"
                "FAR's avg_pool_complex): it needs a complex layout, --convention single"
            )
    if style is None or not style.split:
        if spec.padding_rows:
            raise BadInput(
                "--padding-rows follows a diffusers multi-axis table's tokens (Lumina2's captions): "
                "it needs a split layout (--rope-axes split, or a --preset)"
            )
        if spec.text_tokens:
            raise BadInput(
                "--text-tokens gives the tokens of a multi-axis table (--rope-axes, or a --preset)"
            )
        for key in ("axes_dim", "axes_theta"):
            if key in rope:
                raise BadInput(
                    f"rope parameter {key} splits the head over position axes: it needs a "
                    "split layout (--rope-axes split, or a --preset)"
                )
        return
    library = style.law.library if style.law else "diffusers"  # whose layout it is
    if spec.variant not in ("exact", library):
        raise BadInput(
            f"--rope-axes {style.name} is {library}'s layout: --variant {library} (or exact)"
        )
    if style.convention is not None and spec.convention not in (
        style.convention,
        *["single"][: style.once],
    ):
        also = " (or once each: --convention single)" if style.once else ""
        raise BadInput(
            f"--rope-axes {style.name} pairs its columns {style.convention}{also}, "
            f"not {spec.convention}"
        )
    if not ROPE_TYPES[kind].diffusers:
        takes = " or ".join(t.name for t in ROPE_TYPES.values() if t.diffusers)
        raise BadInput(f"--rope-axes {style.name} takes rope_type {takes}, not {kind}")
    if style.law and spec.freqs_dtype not in (None, *style.law.dtypes):
        raise BadInput(
            f"--rope-axes {style.name} computes its frequencies in {' or '.join(style.law.dtypes)} (as "
            f"its model does): --freqs-dtype {spec.freqs_dtype} does not apply to it"
        )
    if style.law and (kind == "linear" or "ntk_factor" in rope):
        raise BadInput(
            f"--rope-axes {style.name} computes its frequencies its own way (as its model does): "
            "rope_type linear and ntk_factor do not apply to it"
        )
    if spec.offset:
        raise BadInput("--offset: a split layout's positions come from --grid or --ids")
    if spec.ids is not None and (spec.grid is not None or spec.text_tokens):
        raise BadInput("--ids gives every token's positions: drop --grid and --text-tokens")
    if not all(dim for dim, _ in split_laws(spec)) and not (style.law and style.law.empty_axes):
        who = (layout.law.empty_axes for layout in LAYOUTS.values() if layout.split and layout.law)
        raise BadInput(
            "axes_dim 0, an axis that takes no columns, is for "
            + " or ".join(dict.fromkeys(w for w in who if w))
        )
    covered = sum(dim for dim, _ in split_laws(spec))
    if covered != spec.d_model:
        raise BadInput(
            f"axes_dim {','.join(str(d) for d, _ in split_laws(spec))} covers {covered} "
            f"columns of the head dim {spec.d_model}: they must add up to it"
        )
    split_tokens(spec)
