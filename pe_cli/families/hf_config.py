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
from .rope.schedules import SCHEDULES

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
    """The config at `source`, read from disk once while the file is unchanged (a command asks
    for it from several places: the model view, each treatment, the engines); a copy each time,
    so that no caller's change reaches another."""
    import copy

    path = locate(source)
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        if key not in _LOADED:
            _LOADED.clear()  # the one config a command reads
            _LOADED[key] = json.loads(path.read_text())
    except OSError as e:
        raise BadInput(f"{source}: cannot read ({e.strerror})") from None
    except ValueError:
        raise BadInput(f"{source}: not a JSON config") from None
    if not isinstance(_LOADED[key], dict):
        raise BadInput(f"{source}: not a JSON object")
    return copy.deepcopy(_LOADED[key])


_LOADED: dict = {}  # (path, mtime, size) -> its parsed JSON


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

    def __init__(self, node: dict, model_type: str, overrides: dict | None = None, path: str = ""):
        self.node, self.model_type, self.path = node, model_type, path
        self.facts = models().get(model_type, {})
        self.overrides = overrides or {}

    def key(self, name: str) -> str:
        return self.facts.get("aliases", {}).get(name, name)

    def get(self, name: str):
        for key in (name, self.key(name)):
            if key in self.overrides:
                return self.overrides[key]
        for key in (self.key(name), name):
            if key in self.node:  # null too: the class then has None (sliding_window: none)
                return self.node[key]
        defaults = self.facts.get("defaults", {})
        return defaults.get(self.key(name), defaults.get(name))

    def given(self, name: str) -> bool:
        """Whether config.json (or an override) gives the key, not the class's default."""
        return any(
            k in self.overrides or self.node.get(k) is not None for k in (name, self.key(name))
        )

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
    facts = settings.facts
    # a legacy key the class's __post_init__ drops, dropped too (Muse Spark's rope_theta)
    dropped = facts.get("dropped+rope_scaling" if settings.node.get("rope_scaling") else "dropped")
    node = {k: v for k, v in settings.node.items() if k not in (dropped or ())}
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
    labels = facts.get("labels") or layer_types(settings)
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


def layer_types(settings: Settings) -> list[str] | None:
    """Each decoder layer's type, as the config class makes them: config.json's layer_types
    (with the last layer's type the class forces on it), else the class's own rule for its
    num_hidden_layers (transformers.json "layers": a pattern repeated, its period set by a
    key such as sliding_window_pattern); None for a model whose layers have no types."""
    schedule = SCHEDULES.get(settings.model_type)
    if schedule is not None and schedule.kinds is not None:
        return schedule.kinds(settings)
    rule = settings.facts.get("layers")
    given = settings.node.get(settings.key("layer_types"))
    count = settings.get("num_hidden_layers")
    if isinstance(given, list):
        kinds = [str(k) for k in given]
        if rule and rule.get("given_last") and kinds:
            kinds[-1] = rule["given_last"]
        return kinds
    if rule is None or "period" not in rule:
        return None
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(
            f"{settings.names('num_hidden_layers')} = {count!r} is not a positive whole number"
        )
    if count < rule.get("least", 1):
        raise BadInput(
            f"config.json gives no layer_types, and model type {settings.model_type} lays out "
            f"fewer than {rule['least']} layers by rules pe-cli does not know"
        )
    for key in rule.get("from", []):
        if settings.node.get(key) is not None:
            raise BadInput(
                f"config.json gives {key} and no layer_types: model type {settings.model_type} "
                f"makes its layer types from {key} by rules pe-cli does not know; save the config "
                "with transformers 5 to write them"
            )
    period, pattern = rule["period"], rule["pattern"]
    given_period = settings.node.get(rule["key"]) if rule.get("key") else None
    if given_period is not None:
        if isinstance(given_period, bool) or not isinstance(given_period, int) or given_period < 1:
            raise BadInput(f"{rule['key']} = {given_period!r} is not a positive whole number")
        where, marked, other = rule["mark"]
        period = given_period
        pattern = [other] * period
        pattern[0 if where == "first" else -1] = marked
    kinds = []
    for i in range(count):
        if rule["last"] is not None and i == count - 1:
            kinds.append(rule["last"])
        elif i < len(rule["head"]):
            kinds.append(rule["head"][i])
        else:
            kinds.append(pattern[(i if rule["phase"] == "start" else count - 1 - i) % period])
    return kinds


def _per_layer_config(settings: Settings) -> dict[int, dict]:
    """Settings by layer index: config.json's per_layer_config, else the one its class makes
    (transformers.json "per_layer": Gemma 4's full_attention layers get head_dim 512, or
    global_head_dim)."""
    given = settings.node.get("per_layer_config")
    if isinstance(given, dict) and given:
        if not all(str(k).isdigit() for k in given):
            raise BadInput("per_layer_config's keys are not layer indices")
        return {int(k): v for k, v in given.items()}
    rule, kinds = settings.facts.get("per_layer"), layer_types(settings)
    if not rule or not kinds:
        return {}
    types = json.loads(json.dumps(rule["types"]))
    for kwarg, (kind, key) in rule["keys"].items():
        if settings.node.get(kwarg) is not None:
            types.setdefault(kind, {})[key] = settings.node[kwarg]
    return {i: types[kind] for i, kind in enumerate(kinds) if kind in types}


def _layer_overrides(settings: Settings, layer_type: str | None, index: int | None) -> dict:
    """Values given per layer (per_layer_config) for layer `index`, or for the layers of one
    type, which must agree."""
    per_layer, kinds = _per_layer_config(settings), layer_types(settings)
    relevant = set(TABLE_KEYS) | {settings.key(k) for k in TABLE_KEYS}
    indices = (
        [index] if index is not None else [i for i, k in enumerate(kinds or []) if k == layer_type]
    )
    found = None
    for i in indices:
        overrides = per_layer.get(i, {})
        if not isinstance(overrides, dict):
            raise BadInput(f"per_layer_config entry {i} is not a JSON object")
        overrides = {k: v for k, v in overrides.items() if k in relevant}
        if found is not None and overrides != found:
            raise BadInput(f"per_layer_config gives the {layer_type} layers different settings")
        found = overrides
    return found or {}


def config_of(source: str, part: str | None = None) -> Settings:
    """One config part's settings, completed as its config class completes them (a model's
    schedule's `fill`: DeepSeek-V4's legacy keys)."""
    node, model_type, path = _part(load(source), part)
    schedule = SCHEDULES.get(model_type)
    if schedule is not None and schedule.fill is not None:
        node = schedule.fill(node, models().get(model_type, {}))
    return Settings(node, model_type, path=path)


def tables(settings: Settings) -> list[str]:
    """The names of the tables a config gives per layer type (or per label: DeepSeek-V4's
    main and compress), those of its layers' types; [] for one table."""
    rope = _standard(settings)
    if not (rope and all(isinstance(v, dict) or v is None for v in rope.values())):
        return []
    names = [k for k, v in rope.items() if v is not None]
    kinds = None if settings.facts.get("labels") else layer_types(settings)
    return [k for k in names if kinds is None or k in kinds]


def read(
    source: str, part: str | None = None, layer_type: str | None = None, index: int | None = None
) -> dict:
    """The rotary settings of a config: base, d_model (the head dim), the rope parameters, and
    the layout and arithmetic of the model's rotary module (for hf-rope); of the layers of one
    type, or of the layer at `index` (whose type or label `layer_type` then is)."""
    return settings_table(config_of(source, part), layer_type, index)


def settings_table(settings: Settings, layer_type: str | None, index: int | None = None) -> dict:
    """read()'s settings from a config part's."""
    node, model_type, path = settings.node, settings.model_type, settings.path
    rope = _standard(settings)
    nested = bool(rope) and all(isinstance(v, dict) or v is None for v in rope.values())
    if nested:
        names = tables(settings)
        if layer_type is None:
            raise LayerTypes(names)
        if rope.get(layer_type, {}) is None:
            raise BadInput(
                f"layer type {layer_type!r} has no rotary embedding (its rope_parameters "
                "are null: no positional encoding)"
            )
        if layer_type not in names:
            raise BadInput(
                f"no layer type {layer_type!r} in rope_parameters; its layer types: "
                f"{', '.join(names)}"
            )
        rope = rope[layer_type]
    elif layer_type is not None and index is None:
        raise BadInput(
            f"--layer-type {layer_type}: this config's rope_parameters are one set, "
            "not one per layer type"
        )
    if nested or index is not None:
        overrides = _layer_overrides(settings, layer_type, index)
        settings = Settings(node, model_type, overrides, path=path)
    rule = settings.facts.get("head_dim")  # a model that divides other keys (vision encoders)
    head_dim = settings.get("head_dim") or (_divide(settings, rule) if rule else None)
    derived = settings.facts.get("head_dim_from")
    if derived and derived.get("times") and not settings.given("head_dim"):
        hidden, heads = settings.get("hidden_size"), settings.get("num_attention_heads")
        head_dim = derived["times"] * hidden // heads  # Zamba2: twice hidden_size // heads
    elif derived and (derived["over"] or not settings.given("head_dim")):
        head_dim = _sum(settings, derived["keys"])  # multi-head latent attention's rotary part
    if settings.facts.get("partial_from") and "partial_rotary_factor" not in rope:
        rope = {**rope, "partial_rotary_factor": _sum(settings, settings.facts["partial_from"])}
        rope["partial_rotary_factor"] /= head_dim
    if not head_dim:
        hidden, heads = settings.get("hidden_size"), settings.get("num_attention_heads")
        if not hidden or not heads:
            others = [
                k
                for k, v in node.items()
                if isinstance(v, dict) and _has_rope(v, {}) and v.get("model_type")
            ]
            raise BadInput(
                f"the config{f' part {path}' if path else ''} gives no {settings.names('head_dim')}, "
                f"nor {settings.names('hidden_size')} and {settings.names('num_attention_heads')}"
                + (
                    f"; its parts rotate by rope parameters of their own: {', '.join(others)} "
                    "(choose one with --config-part)"
                    if others
                    else ""
                )
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
        if rope.get("alpha"):  # HunYuan's modules read it (schedules/hunyuan.py); others drop it
            raise BadInput(
                f"rope parameter alpha: model type {model_type}'s rotary module does not read "
                "it (transformers drops it; HunYuan's read dynamic with alpha as ntk_alpha)"
            )
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


def _sum(settings: Settings, keys: list[str]) -> int:
    """keys[0] + keys[1] + ..., each a positive whole number."""
    values = [settings.get(k) for k in keys]
    for key, value in zip(keys, values):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadInput(
                f"{settings.names(key)} = {value!r} is not a positive whole number "
                f"(model type {settings.model_type} takes its rotary head dim from it)"
            )
    return sum(values)


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
