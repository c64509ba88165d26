"""Reading a Hugging Face config.json the way transformers reads it, without transformers.

A config is data: which model type uses which key for the head dim, the number of heads or
the hidden size (its attribute_map), the values its config class assumes when config.json
leaves them out, the base it assumes for rope_theta, the parts of a composite config, and how
the model's rotary module lays out and computes its table. All of that lives in
transformers.json beside this file, one entry per model type, recomputed from the installed
transformers by `python -m tools.transformers_models` and checked against it by the tests.

The rules applied to the data are transformers 5's: legacy `rope_scaling` and `rope_theta`
become `rope_parameters`, per-layer-type parameters are nested under the layer types'
names, the head dim is head_dim or hidden_size // num_attention_heads, and the rotary dim is
int(head_dim * partial_rotary_factor).
"""

from __future__ import annotations

import json
import math
import os
from functools import cache
from pathlib import Path

from ..core.errors import BadInput

# where a composite config keeps its language model, searched in this order
TEXT_PARTS = (
    "text_config",
    "language_config",
    "llm_config",
    "thinker_config",
    "decoder_config",
    "decoder",
    "text_encoder",
)
# keys some config classes convert into rope_parameters by their own rules
LEGACY_KEYS = (
    "rope_scaling",
    "rope_theta",
    "partial_rotary_factor",
    "rotary_pct",
    "rotary_emb_base",
    "rope_local_base_freq",
)
SCALED = ("llama3", "yarn", "longrope")
# the keys, by standard name, that a rotary table depends on
TABLE_KEYS = (
    "hidden_size",
    "num_attention_heads",
    "head_dim",
    "max_position_embeddings",
    "partial_rotary_factor",
    "rope_parameters",
    "rope_theta",
)


@cache
def models() -> dict:
    """The model types' data."""
    return json.loads((Path(__file__).with_name("transformers.json")).read_text())


# ---------------------------------------------------------------------------------------------
# Where a config comes from


def _cached(model_id: str) -> Path | None:
    """config.json of a model id in the local Hugging Face cache (never the network), through
    huggingface_hub when it is installed, else by the cache's documented layout."""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache", "huggingface"
    )
    hub = Path(
        os.environ.get("HF_HUB_CACHE")
        or os.environ.get("HUGGINGFACE_HUB_CACHE")
        or os.path.join(home, "hub")
    )
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        try_to_load_from_cache = None
    if try_to_load_from_cache is not None:
        found = try_to_load_from_cache(model_id, "config.json", cache_dir=hub)
        return Path(found) if isinstance(found, str) else None
    repo = hub / ("models--" + model_id.replace("/", "--"))
    try:
        revision = (repo / "refs" / "main").read_text().strip()
    except OSError:
        return None
    found = repo / "snapshots" / revision / "config.json"
    return found if found.is_file() else None


def locate(source: str) -> Path:
    """The config.json a --rope-config names: a file, a model folder (a cache snapshot is
    one), or a model id found in the local Hugging Face cache."""
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
        if not path.is_file():
            raise BadInput(f"{source}: a folder without config.json")
        return path
    if path.exists():
        return path
    parts = source.split("/")
    if len(parts) == 2 and all(parts) and not source.endswith(".json"):
        found = _cached(source)
        if found is None:
            raise BadInput(
                f"{source}: no such file, and no config.json for model {source!r} in the "
                "local Hugging Face cache (pe-cli never downloads)"
            )
        return found
    raise BadInput(f"{source}: no such file or folder")


def load(source: str) -> dict:
    path = locate(source)
    try:
        config = json.loads(path.read_text())
    except OSError as e:
        raise BadInput(f"{source}: cannot read ({e.strerror})") from None
    except ValueError:
        raise BadInput(f"{source}: not a JSON config") from None
    if not isinstance(config, dict):
        raise BadInput(f"{source}: not a JSON object")
    return config


# ---------------------------------------------------------------------------------------------
# The part of a config that holds the rotary settings


def _has_rope(node: dict, facts: dict) -> bool:
    return (
        any(k in node for k in ("rope_parameters", "rope_scaling", "rope_theta"))
        or "defaults" in facts
    )


def _part(config: dict, part: str | None) -> tuple[dict, str, str]:
    """(the settings, their model type, the dotted path to them)."""
    node, path = config, ""
    model_type = config.get("model_type", "")
    if part:
        for key in part.split("."):
            sub = node.get(key)
            if not isinstance(sub, dict):
                raise BadInput(f"the config has no part {part!r} (at {key!r})")
            model_type = sub.get("model_type") or models().get(model_type, {}).get("parts", {}).get(
                key, ""
            )
            node, path = sub, f"{path}.{key}" if path else key
        return node, model_type, path
    parts = models().get(model_type, {}).get("parts", {})
    text = next((k for k in TEXT_PARTS if k in parts), None)
    if text and text not in node and _has_rope(node, {}):
        # a flat composite config (as the Hub keeps older ones): its text settings at the top
        return node, parts[text], ""
    while not _has_rope(node, models().get(model_type, {})):
        key = next((k for k in TEXT_PARTS if isinstance(node.get(k), dict)), None)
        if key is None:
            others = [k for k, v in node.items() if isinstance(v, dict) and "model_type" in v]
            raise BadInput(
                "the config has no rotary settings"
                + (
                    f"; its parts: {', '.join(others)} (choose one with --config-part)"
                    if others
                    else ""
                )
            )
        model_type = node[key].get("model_type") or models().get(model_type, {}).get(
            "parts", {}
        ).get(key, "")
        node, path = node[key], f"{path}.{key}" if path else key
    return node, model_type, path


class Settings:
    """One config part's values, by their standard names, as the model's config class sees
    them: config.json's value under the name or its alias, else the class's default."""

    def __init__(self, node: dict, model_type: str, overrides: dict | None = None):
        self.node, self.model_type = node, model_type
        self.facts = models().get(model_type, {})
        self.overrides = overrides or {}

    def key(self, name: str) -> str:
        return self.facts.get("aliases", {}).get(name, name)

    def get(self, name: str):
        for key in (name, self.key(name)):
            if key in self.overrides:
                return self.overrides[key]
        for key in (self.key(name), name):
            if self.node.get(key) is not None:
                return self.node[key]
        defaults = self.facts.get("defaults", {})
        return defaults.get(self.key(name), defaults.get(name))

    def names(self, name: str) -> str:
        key = self.key(name)
        return name if key == name else f"{name} (here {key})"


# ---------------------------------------------------------------------------------------------
# rope_parameters, as transformers standardizes them


def _legacy(settings: Settings, rules: dict) -> dict:
    """rope_parameters from legacy keys, for a config class that converts them by its own
    code: the class's default parameters, rope_scaling and then each legacy key placed where
    the class puts it (found by building the class with each key, alone and beside
    rope_scaling)."""
    node, facts = settings.node, settings.facts
    rope = json.loads(json.dumps(facts.get("rope_parameters") or {}))
    nested = bool(rope) and all(isinstance(v, dict) or v is None for v in rope.values())
    scaling = node.get("rope_scaling")

    def unknown(key):
        return BadInput(
            f"model type {settings.model_type} converts {key} into rope_parameters by "
            "rules pe-cli does not know; save the config with transformers 5 "
            "(AutoConfig.from_pretrained(...).save_pretrained(...)) to write them"
        )

    if scaling:
        if "rope_scaling" not in rules or not isinstance(scaling, dict):
            raise unknown("rope_scaling")
        scaling = dict(scaling)
        kind = scaling.pop("type", None)
        if kind is not None and "rope_type" not in scaling and not rules.get("type_ignored"):
            scaling["rope_type"] = kind
        if rules["rope_scaling"] == [""] and nested:  # the class puts rope_scaling in their place
            rope, nested = {}, False
        for layer_type in rules["rope_scaling"]:
            target = rope.setdefault(layer_type, {}) if layer_type else rope
            target.update(scaling)
            target["rope_type"] = rules.get("types", {}).get(
                target.get("rope_type"), target.get("rope_type")
            )
    for key in LEGACY_KEYS:
        if node.get(key) is None or key == "rope_scaling":
            continue
        placed = rules.get(f"{key}+rope_scaling" if scaling else key)
        if placed is None:
            raise unknown(key)
        for layer_type, name in placed:
            (rope.setdefault(layer_type, {}) if layer_type else rope)[name] = node[key]
    return rope


def _standard(settings: Settings) -> dict:
    """rope_parameters, flat or nested by layer type, with rope_theta, rope_type and the
    pretraining length filled in."""
    node, facts = settings.node, settings.facts
    rope = node.get(settings.key("rope_parameters"))
    legacy = [k for k in LEGACY_KEYS if node.get(k) is not None]
    theta = node.get("rope_theta", facts.get("theta", 10000.0))
    partial = node.get("partial_rotary_factor")
    if facts.get("legacy") is not None and legacy and not rope:
        rope = _legacy(settings, facts["legacy"])  # the keys are placed: nothing else is filled in
        theta, partial = None, None
    elif node.get("rope_scaling"):
        rope = node["rope_scaling"]
    if not rope:
        if legacy or "rope_parameters" not in facts:
            rope = {}
        else:
            return json.loads(json.dumps(facts["rope_parameters"]))
    if not isinstance(rope, dict):
        raise BadInput("rope_parameters is not a JSON object")
    rope = json.loads(json.dumps(rope))
    labels = facts.get("labels") or settings.get("layer_types")
    if isinstance(labels, list) and labels:  # transformers nests only under the layer types it has
        rope = {k: v for k, v in rope.items() if k in labels} or rope
    nested = bool(rope) and all(isinstance(v, dict) or v is None for v in rope.values())
    for layer_type, parameters in rope.items() if nested else [(None, rope)]:
        if parameters is None:
            continue
        parameters.setdefault("rope_type", parameters.pop("type", "default"))
        if "rope_theta" not in parameters:
            if theta is None:
                raise BadInput(
                    f"model type {settings.model_type} reads these legacy keys into rope "
                    f"parameters{f' for {layer_type}' if layer_type else ''} without rope_theta "
                    "(its rotary module would fail)"
                )
            if isinstance(theta, dict):
                raise BadInput(
                    f"rope_parameters{f'[{layer_type!r}]' if layer_type else ''} has no rope_theta, "
                    f"and model type {settings.model_type} has one per layer type"
                )
            parameters["rope_theta"] = theta
        if partial is not None:
            parameters.setdefault("partial_rotary_factor", partial)
        if facts.get("rope_type") and parameters["rope_type"] == "default":
            parameters["rope_type"] = facts["rope_type"]
        if parameters["rope_type"] in SCALED:
            if node.get("original_max_position_embeddings") is not None and not nested:
                parameters["original_max_position_embeddings"] = node[
                    "original_max_position_embeddings"
                ]
            else:
                parameters.setdefault(
                    "original_max_position_embeddings", settings.get("max_position_embeddings")
                )
    return rope


def _layer_overrides(settings: Settings, layer_type: str) -> dict:
    """Values a config gives per layer (per_layer_config, by layer index) for the layers of
    one type; they must agree."""
    per_layer = settings.node.get("per_layer_config")
    kinds = settings.get("layer_types")
    if not per_layer or not isinstance(kinds, list):
        return {}
    relevant = set(TABLE_KEYS) | {settings.key(k) for k in TABLE_KEYS}
    found = None
    for index, kind in enumerate(kinds):
        if kind != layer_type:
            continue
        overrides = next(
            (v for k, v in per_layer.items() if str(k).isdigit() and int(k) == index), {}
        )
        if not isinstance(overrides, dict):
            raise BadInput(f"per_layer_config entry {index} is not a JSON object")
        overrides = {k: v for k, v in overrides.items() if k in relevant}
        if found is not None and overrides != found:
            raise BadInput(f"per_layer_config gives the {layer_type} layers different settings")
        found = overrides
    return found or {}


def read(source: str, part: str | None = None, layer_type: str | None = None) -> dict:
    """The rotary settings of a config: base, d_model (the head dim), the rope parameters, and
    the layout and arithmetic of the model's rotary module (for hf-rope)."""
    node, model_type, path = _part(load(source), part)
    settings = Settings(node, model_type)
    rope = _standard(settings)
    nested = bool(rope) and all(isinstance(v, dict) or v is None for v in rope.values())
    layer_types = [k for k, v in rope.items() if v is not None] if nested else []
    if nested:
        if layer_type is None:
            raise LayerTypes(layer_types)
        if rope.get(layer_type, {}) is None:
            raise BadInput(
                f"layer type {layer_type!r} has no rotary embedding (its rope_parameters "
                "are null: no positional encoding)"
            )
        if layer_type not in layer_types:
            raise BadInput(
                f"no layer type {layer_type!r} in rope_parameters; its layer types: "
                f"{', '.join(layer_types)}"
            )
        rope = rope[layer_type]
        settings = Settings(node, model_type, _layer_overrides(settings, layer_type))
    elif layer_type is not None:
        raise BadInput(
            f"--layer-type {layer_type}: this config's rope_parameters are one set, "
            "not one per layer type"
        )
    rule = settings.facts.get("head_dim")  # a model that divides other keys (vision encoders)
    head_dim = settings.get("head_dim") or (_divide(settings, rule) if rule else None)
    if not head_dim:
        hidden, heads = settings.get("hidden_size"), settings.get("num_attention_heads")
        if not hidden or not heads:
            raise BadInput(
                f"the config{f' part {path}' if path else ''} gives no {settings.names('head_dim')}, "
                f"nor {settings.names('hidden_size')} and {settings.names('num_attention_heads')}"
            )
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in (hidden, heads)):
            raise BadInput(
                f"{settings.names('hidden_size')} = {hidden!r} and {settings.names('num_attention_heads')} "
                f"= {heads!r} are not positive whole numbers"
            )
        head_dim = hidden // heads
    rope = dict(rope)
    theta = rope.pop("rope_theta")
    if (
        isinstance(theta, bool)
        or not isinstance(theta, (int, float))
        or not math.isfinite(theta)
        or theta <= 1
    ):
        raise BadInput(f"rope_theta = {theta!r} is not a number above 1")
    if isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim < 1:
        raise BadInput(f"the head dim {head_dim!r} is not a positive whole number")
    if rope.get("rope_type") == "dynamic":
        rope.setdefault("max_position_embeddings", settings.get("max_position_embeddings"))
    if rope.get("rope_type") == "longrope" and "factor" not in rope:
        rope.setdefault("max_position_embeddings", settings.get("max_position_embeddings"))
    table = settings.facts.get("table", {})
    if table.get("sections") and "mrope_section" not in rope:  # the module's default
        rope["mrope_section"] = table["sections"]
    return {
        "base": float(theta),
        "d_model": int(head_dim),
        "rope": rope,
        "model_type": model_type,
        "convention": table.get("columns", "half"),
        "arithmetic": table.get("arithmetic", "cos-sin"),
        "axes": table.get("axes"),
        "merge": int(settings.get("spatial_merge_size") or 1),
        **_length(settings),
    }


def _length(settings: Settings) -> dict:
    """The positions the model is made for, max_position_embeddings (under its model type's
    name), from config.json or else its config class's default: {"length": N, "length_from":
    where it came from, for a person}; {} where neither gives a positive whole number."""
    name = "max_position_embeddings"
    value = settings.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return {}
    if any(settings.node.get(key) is not None for key in (settings.key(name), name)):
        where = f"the config's {settings.names(name)}"
    else:
        where = (
            f"{settings.names(name)} of transformers' {settings.model_type} config class "
            "(config.json gives none)"
        )
    return {"length": value, "length_from": where}


def _divide(settings: Settings, keys: list[str]):
    """keys[0] // keys[1] // ...; None when the config lacks one."""
    values = [settings.get(k) for k in keys]
    if any(not isinstance(v, int) or v <= 0 for v in values):
        return None
    result = values[0]
    for value in values[1:]:
        result //= value
    return result


class LayerTypes(BadInput):
    """A config with rope parameters per layer type, read without choosing one."""

    def __init__(self, names: list[str]):
        super().__init__(
            f"this config has rope parameters per layer type ({', '.join(names)}); "
            "choose one with --layer-type (export writes them all)"
        )
        self.names = names
