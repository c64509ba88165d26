"""The --rope keys, as data: each key's name, type, documentation and what uses it, named and
typed as in Hugging Face's rope_parameters (transformers' RopeParameters) where it is one of
theirs. A model's own keys are declared in its module (models/) and added here by the registry.

`rope_parameters` checks and normalizes what a user, a config or a preset gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ...core.errors import BadInput
from ...core.names import unknown
from .types import ROPE_TYPES

LARGEST_POOL = 64  # tokens along one axis of a pooling block


@dataclass(frozen=True)
class Key:
    name: str
    kind: type  # str, int, float, bool, or list (of numbers: "16,56,56")
    doc: str
    used_by: tuple[str, ...]  # the rope types that read it, or the layouts that take it
    positive: bool = False  # must be > 0
    scales: bool = False  # scales the frequencies (or says for which context): not the layout's
    # the one line when a layout that does not take it is given it ({layouts}: those that do)
    refusal: str = ""
    parse: Callable | None = None  # (its typed value) -> the value kept, or BadInput


def _even_dims(dims) -> tuple[int, ...]:
    if not all(d.is_integer() and d >= 0 and d % 2 == 0 for d in dims) or not any(dims):
        raise BadInput(
            f"rope parameter axes_dim {','.join(f'{d:g}' for d in dims)}: each axis's "
            "share of the head dim must be an even whole number"
        )
    return tuple(int(d) for d in dims)


def _thetas(thetas) -> tuple[float, ...]:
    if not all(t > 1 for t in thetas):
        raise BadInput("rope parameter axes_theta: each axis's theta must be > 1")
    return thetas


def _blocks(sizes) -> tuple[int, ...]:
    if not all(k.is_integer() and 1 <= k <= LARGEST_POOL for k in sizes):
        raise BadInput(
            f"rope parameter pool {','.join(f'{k:g}' for k in sizes)}: each axis's block "
            f"is a whole number of tokens from 1 to {LARGEST_POOL}"
        )
    return tuple(int(k) for k in sizes)


def _rope_types(key: str) -> tuple[str, ...]:
    """The rope types that read a key, as their ROPE_TYPES entries declare it."""
    return tuple(
        name for name, kind in ROPE_TYPES.items() if key in (*kind.required, *kind.optional)
    )


# every key by name, in the order an error lists them; the registry adds the models' own
KEYS: dict[str, Key] = {
    key.name: key
    for key in (
        Key(
            "rope_type",
            str,
            "The kind of RoPE: " + ", ".join(ROPE_TYPES) + ".",
            ("any",),
            scales=True,
        ),
        Key(
            "partial_rotary_factor",
            float,
            "The part of the head dim that rotates: rotary dim int(head_dim * factor).",
            ("any",),
            positive=True,
        ),
        Key(
            "factor",
            float,
            "The scaling factor: x extends the context x times the original length.",
            _rope_types("factor"),
            positive=True,
            scales=True,
        ),
        Key(
            "max_position_embeddings",
            int,
            "The context length: where dynamic NTK starts scaling; LongRoPE's factor over the "
            "original length where factor is not given.",
            _rope_types("max_position_embeddings"),
            positive=True,
            scales=True,
        ),
        Key(
            "original_max_position_embeddings",
            int,
            "The context length of pretraining.",
            _rope_types("original_max_position_embeddings"),
            positive=True,
            scales=True,
        ),
        Key(
            "alpha",
            float,
            "HunYuan's NTK stretch: the base times alpha**(dim/(dim-2)) (ntk_alpha).",
            _rope_types("alpha"),
            positive=True,
            scales=True,
        ),
        Key(
            "attention_factor",
            float,
            "What cos and sin are multiplied by (default: YaRN's and LongRoPE's own from factor).",
            _rope_types("attention_factor"),
            scales=True,
        ),
        Key(
            "beta_fast",
            float,
            "YaRN's extrapolation bound of its ramp (default 32).",
            _rope_types("beta_fast"),
            scales=True,
        ),
        Key(
            "beta_slow",
            float,
            "YaRN's interpolation bound of its ramp (default 1).",
            _rope_types("beta_slow"),
            scales=True,
        ),
        Key(
            "mscale",
            float,
            "With mscale_all_dim, YaRN's attention factor from factor: the numerator's weight.",
            _rope_types("mscale"),
            scales=True,
        ),
        Key(
            "mscale_all_dim",
            float,
            "With mscale, YaRN's attention factor from factor: the denominator's weight.",
            _rope_types("mscale_all_dim"),
            scales=True,
        ),
        Key(
            "truncate",
            bool,
            "YaRN's ramp bounds floored and ceiled (default true).",
            _rope_types("truncate"),
            scales=True,
        ),
        Key(
            "low_freq_factor",
            float,
            "Llama 3's: wavelengths past original / this are divided by factor.",
            _rope_types("low_freq_factor"),
            positive=True,
            scales=True,
        ),
        Key(
            "high_freq_factor",
            float,
            "Llama 3's: wavelengths below original / this are kept; a smooth blend between.",
            _rope_types("high_freq_factor"),
            positive=True,
            scales=True,
        ),
        Key(
            "short_factor",
            list,
            "LongRoPE's factor per frequency, for positions up to the original length.",
            _rope_types("short_factor"),
            scales=True,
        ),
        Key(
            "long_factor",
            list,
            "LongRoPE's factor per frequency, for positions past the original length.",
            _rope_types("long_factor"),
            scales=True,
        ),
        # a text token has t = h = w, so a table of 1-D positions is the same with or without it
        Key(
            "mrope_section",
            list,
            "M-RoPE's split of the frequencies over (t, h, w) positions (--grid).",
            ("M-RoPE layouts",),
        ),
        Key(
            "mrope_interleaved",
            bool,
            "A config flag transformers 5.23's modules do not read (the model type says the layout).",
            (),
        ),
        Key(
            "llama_4_scaling_beta",
            float,
            "Ministral 3's and Mistral 4's query scale by position, 1 + beta * ln(1 + "
            "floor(p / original_max_position_embeddings)): --part query-scale.",
            ("query-scale",),
        ),
        Key(
            "floor_scale",
            float,
            "Llama 4's NoPE layers' query scale, 1 + attn_scale * ln(1 + floor((p + 1) / "
            "floor_scale)): --part query-scale.",
            ("query-scale",),
            positive=True,
        ),
        Key(
            "attn_scale",
            float,
            "With floor_scale, Llama 4's NoPE layers' query scale: --part query-scale.",
            ("query-scale",),
        ),
        Key(
            "axes_dim",
            list,
            "diffusers' multi-axis RoPE: each position axis's share of the head dim (FLUX: 16,56,56).",
            ("split layouts",),
            parse=_even_dims,
        ),
        Key(
            "axes_theta",
            list,
            "diffusers' multi-axis RoPE: each axis's own theta (default --base).",
            ("split layouts",),
            parse=_thetas,
        ),
        Key(
            "ntk_factor",
            float,
            "diffusers' get_1d_rotary_pos_embed ntk_factor: theta times it (Lumina-Next).",
            ("any",),
            positive=True,
            scales=True,
        ),
        Key(
            "fps",
            float,
            "A video's frame rate: its frames' times (Cosmos: frame k at k * 24 / fps; images: k).",
            ("the layouts that take it",),
            positive=True,
            refusal="rope parameter fps is Cosmos's and LTX-Video's frame rate: it needs "
            "--rope-axes {layouts} (their --preset)",
        ),
        Key(
            "pool",
            list,
            "FramePack's and Helios's history tables: cos and sin averaged over blocks of this "
            "many tokens per axis, an axis padded at its end by repeating its last position.",
            ("split layouts",),
            parse=_blocks,
        ),
        Key(
            "pool_unit",
            bool,
            "AnyFlow-FAR's compressed frames: each axis's complex table pooled on its own, then "
            "each (cos, sin) mean over its length.",
            ("split layouts",),
        ),
    )
}


def refusal(key: Key, layouts) -> str:
    """The line for a key given to a layout that does not take it."""
    names = sorted(layout.name for layout in layouts if key in layout.keys)
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return key.refusal.format(layouts=listed)


def unread(rope: dict, key: str, value) -> str | None:
    """The line refusing a --rope KEY=VALUE whose key the rope parameters' type does not read
    and pe-cli honours nowhere else: a scaling key of other rope types (factor with rope_type
    default, beta_fast with linear), which would build the table as if it were not given.
    None for a key that is read: by the type, by every table (partial_rotary_factor), by a
    layout, a variant or a query scale. A config's keys are read as transformers reads them,
    which leaves such a key aside."""
    from .query_scale import KINDS

    found = KEYS.get(key)
    kind = rope.get("rope_type", "default")
    if found is None or kind not in ROPE_TYPES:
        return None
    if not found.used_by or not all(name in ROPE_TYPES for name in found.used_by):
        return None  # honoured beside the rope type (a layout, a variant, a query scale)
    if any(keys[0] in rope and key in keys for keys in KINDS.values()):
        return None  # original_max_position_embeddings, read by llama_4_scaling_beta's scale
    if key == "max_position_embeddings":
        return None  # the model's context, which show's wavelengths figure marks (show.scaling)
    reads = (*ROPE_TYPES[kind].required, *ROPE_TYPES[kind].optional)
    if key in reads:
        return None
    others = list(found.used_by)
    readers = others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}"
    return (
        f"--rope {key}={value}: rope_type {kind} does not read {key} (it reads "
        f"{', '.join(reads) if reads else 'no scaling key'}; {readers} "
        f"{'does' if len(others) == 1 else 'do'})"
    )


def typed(key: str, value):
    """A key's value as its type: '16,56,56' as (16.0, 56.0, 56.0), 'true' as True, ..."""
    kind = KEYS[key].kind
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                return value.lower() in ("true", "1")
            return bool(value)
        if kind is list:
            items = value.split(",") if isinstance(value, str) else list(value)
            return tuple(float(v) for v in items)
        if kind is int:
            number = float(value)
            if not number.is_integer():
                raise ValueError
            return int(number)
        if kind is float:
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            return number
        return str(value)
    except (TypeError, ValueError):
        raise BadInput(f"rope parameter {key} = {value!r} is not a {kind.__name__}") from None


def rope_parameters(items) -> tuple:
    """Check and normalize rope parameters (pairs or a dict) into sorted (key, value) pairs."""
    pairs = dict(items.items() if isinstance(items, dict) else items)
    out = {}
    for key, value in pairs.items():
        if key == "type":  # the old name in configs
            key = "rope_type"
        if key not in KEYS:
            raise BadInput(unknown("rope parameter", key, KEYS))
        if value is None:
            continue
        out[key] = typed(key, value)
    kind = out.get("rope_type", "default")
    if kind not in ROPE_TYPES:
        raise BadInput(unknown("rope_type", kind, ROPE_TYPES))
    missing = [k for k in ROPE_TYPES[kind].required if k not in out]
    if missing:
        raise BadInput(f"rope_type {kind} needs {', '.join(missing)} (pass --rope KEY=VALUE)")
    for key in KEYS.values():
        if key.positive and key.name in out and out[key.name] <= 0:
            raise BadInput(f"rope parameter {key.name} must be > 0, got {out[key.name]}")
    if "partial_rotary_factor" in out and out["partial_rotary_factor"] > 1:
        raise BadInput("rope parameter partial_rotary_factor must be at most 1")
    if ROPE_TYPES[kind].validate is not None:
        ROPE_TYPES[kind].validate(out)
    for key in KEYS.values():
        if key.parse is not None and key.name in out:
            out[key.name] = key.parse(out[key.name])
    return tuple(sorted(out.items()))
