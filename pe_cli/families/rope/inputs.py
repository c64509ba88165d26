"""What a --rope-config or a --preset sets, under the options given beside it (--rope
KEY=VALUE, --d-model, ...): the table's settings, the notes that say what was taken from the
input and what an option went over, and the library whose table the input names."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import BadInput
from ...core.names import choice, shown
from ..base import Library
from ..hf_config import LayerTypes, read
from ..positions import ids_axes
from . import gguf_config, layers
from .keys import KEYS, rope_parameters, typed, unread
from .layouts import LAYOUTS
from .models import PRESETS


@dataclass(frozen=True)
class Input:
    """What a --rope-config or --preset sets: what it is, for a person ("config", "preset
    flux"), the TableSpec fields, the rope parameters, and the config as read (empty for a
    preset)."""

    what: str
    values: dict
    rope: dict
    config: dict
    lengthwise: bool = False  # the table's rows are --seq-len's positions (no grid, no ids)


def rope_items(given) -> list[tuple[str, str]]:
    """--rope's KEY=VALUE items as (key, value) pairs."""
    items = []
    for item in given:
        key, sep, value = item.partition("=")
        if not sep:
            raise BadInput(f"--rope {item!r} is not KEY=VALUE")
        items.append((key.strip(), value.strip()))
    return items


def from_options(values: dict, options: dict, name: str) -> dict:
    """The spec's fields: `values` (the family's parameters given) with --rope KEY=VALUE pairs
    over a --rope-config's or --preset's settings, and each option given over the value the
    config or preset sets (the model's head dim, theta, layout, arithmetic and, for a 1-D
    table, its length)."""
    found = input_of(options, name)
    rope = {}
    if found is not None:
        values.update({k: v for k, v in found.values.items() if options.get(k) is None})
        values["family"] = name
        rope = dict(found.rope)
    given = options.get("rope") or []
    if isinstance(given, dict):  # from Python: build(preset=..., rope={...})
        rope.update(given)
        given = []
    for key, value in rope_items(given):
        rope[key] = value
    return values | ({"rope": rope} if rope else {})


def input_of(options: dict, name: str) -> Input | None:
    """What --rope-config or --preset sets, checked against the options given beside it;
    None without either."""
    config, preset = options.get("rope_config"), options.get("preset")
    if preset and config:
        raise BadInput("--preset and --rope-config each give the model's RoPE: choose one")
    for option in ("layer_type", "config_part", "layer"):
        if options.get(option) is not None and not config:
            raise BadInput(f"--{option.replace('_', '-')} selects within a --rope-config")
    if options.get("layer") is not None and options.get("layer_type"):
        raise BadInput("--layer and --layer-type each choose the table: give one")
    if not config and not preset:
        return None
    flag = "--rope-config" if config else f"--preset {preset}"
    family = options.get("family")
    if family is not None and family != name:
        raise BadInput(f"{flag} gives a {name} table, not {family}: drop --family {family}")
    if preset:
        found = PRESETS[choice("--preset", preset, PRESETS, more="--family rope --help lists them")]
        values = {
            "d_model": found.head_dim,
            "base": found.theta,
            "axes": found.axes,
            "convention": found.convention,
            "freqs_dtype": found.freqs_dtype,  # the model's, for --variant diffusers
        }
        return Input(f"preset {preset}", values, found.rope, {})
    if gguf_config.is_gguf(config):  # llama.cpp's model file: its rope metadata and tensors
        for option in ("layer_type", "config_part", "layer"):
            if options.get(option) is not None:
                raise BadInput(
                    f"--{option.replace('_', '-')} selects within a config.json, not a GGUF"
                )
        read_from = gguf_config.read(config)
    elif options.get("layer") is not None:
        found = layers.layer(config, options.get("config_part"), options["layer"])
        if options.get("part") == "query-scale":
            read_from = layers.scale_table(found, config, options.get("config_part"))
        elif found.table is None:
            raise BadInput(f"layer {found.index} applies no rotary embedding: {found.why}")
        else:
            read_from = found.table
    else:
        read_from = read(config, options.get("config_part"), options.get("layer_type"))
    given = options.get("d_model")
    if given is not None and given != read_from["d_model"]:
        raise BadInput(
            f"--d-model {given}: the config's head dim is {read_from['d_model']}, and a "
            "--rope-config table is the model's; drop --d-model (--rope "
            "partial_rotary_factor=F rotates part of it)"
        )
    values = {"d_model": read_from["d_model"], "base": read_from["base"]}
    style = LAYOUTS.get(read_from["axes"] or "")
    ids = options.get("ids")
    several = options.get("grid") or (ids and ids_axes(str(ids)) > 1)  # tokens' own positions
    if style and options.get("axes") is None and (style.vision or several):
        values["axes"] = style.name  # a text model's 1-D positions need no axes
        if style.merged:
            values["merge"] = read_from["merge"]
        read_from["convention"] = style.convention
    values["convention"] = read_from["convention"]
    values["arithmetic"] = read_from["arithmetic"]
    axes = LAYOUTS.get(options.get("axes") or values.get("axes") or "")
    lengthwise = not (options.get("grid") or options.get("ids") or (axes and axes.split))
    if lengthwise and "length" in read_from:  # the positions the model is made for
        values["seq_len"] = read_from["length"]
    return Input("config", values, read_from["rope"], read_from, lengthwise)


def notes(options: dict, name: str, params, layout=None) -> list[str]:
    """What the command line took from a config or preset on the user's behalf, and where an
    option went over its value (Family.notes); `layout(options, convention)`, the variant's own
    layout where it takes one over the input's pairing (its note)."""
    try:
        found = input_of(options, name)
    except LayerTypes as e:  # export writes every layer type's tables: each one's notes
        lines = []
        for layer in e.names:
            more = notes({**options, "layer_type": layer}, name, params, layout)
            lines += [n for n in more if n not in lines]
        return lines
    if found is None:
        return []
    flags = {p.name: p.flag for p in params} | {
        "d_model": "--d-model",
        "base": "--base",
        "convention": "--convention",
    }
    over, short = [], found.what.split()[0]
    for field, value in found.values.items():
        given = options.get(field)
        if field != "seq_len" and given is not None and shown(given) != shown(value):
            over.append(f"{flags[field]} {shown(given)} ({short}: {shown(value)})")
    rope = dict(rope_parameters(found.rope))
    given = rope_items(options.get("rope") or [])
    built = {**rope, **{k: typed(k, v) for k, v in given if k in KEYS}}
    for key, value in given:
        if unread(built, key, value):  # not over anything in this table: the key is not read
            continue
        if key not in rope:
            over.append(f"--rope {key}={value} ({short}: none)")
        elif typed(key, value) != rope[key]:
            over.append(f"--rope {key}={value} ({short}: {shown(rope[key])})")
    lines = [f"options over the {found.what}'s values: {', '.join(over)}"] if over else []
    config = found.config
    if config and options.get("seq_len") is None and options.get("part") != "inv_freq":
        if "seq_len" in found.values:
            lines.append(
                f"--seq-len {found.values['seq_len']}: {config['length_from']} "
                "(-l gives another length)"
            )
        elif found.lengthwise:  # the config says nothing of the length
            lines.append(
                "--seq-len 1024, pe-cli's default: the config gives no "
                "max_position_embeddings (-l gives another length)"
            )
    own = None if layout is None else layout(options, found.values.get("convention"))
    if own is not None:
        lines.append(
            f"--convention {own[0]}: variant {options['variant']} lays its table out so (the "
            f"{short}'s table: {own[1]})"
        )
    return lines


def library(options: dict) -> Library | None:
    """The library whose table a --rope-config or --preset names."""
    if options.get("rope_config") and gguf_config.is_gguf(options["rope_config"]):
        return Library("llama.cpp", "llama.cpp")  # the engine that reads the GGUF
    if options.get("rope_config"):  # the model's rotary module in transformers
        return Library("transformers", "hf-rope")
    if options.get("preset"):  # the model's positional module in diffusers
        return Library("diffusers", "diffusers")
    return None


def selections(options: dict) -> dict[str, dict]:
    """A model whose layers apply different tables, read without --layer or --layer-type: one
    table set per treatment (export writes each), named as the model view names them; a config
    whose layers pe-cli cannot list, one per layer type."""
    config = options.get("rope_config")
    if not config or options.get("layer_type") or options.get("layer") is not None:
        return {}
    if gguf_config.is_gguf(config):
        return {}
    try:
        found = layers.scheme(config, options.get("config_part"))
    except BadInput:
        found = None
    if found is not None and len(found.treatments) > 1:
        return {name: {"layer": t.layers[0]} for name, t in found.treatments.items()}
    try:
        read(config, options.get("config_part"))
    except LayerTypes as e:
        return {name: {"layer_type": name} for name in e.names}
    return {}


def model(options: dict) -> dict | None:
    """A --rope-config model's scheme, layer by layer (layers.py), as show says it; None
    without a config.json (a GGUF or a --preset is one table)."""
    config = options.get("rope_config")
    if not config or gguf_config.is_gguf(config):
        return None
    from .lint import gguf_findings

    found = layers.scheme(config, options.get("config_part"))
    found.findings += gguf_findings(config, found.layers)  # the GGUFs converted beside it
    return layers.view(found, config, options)
