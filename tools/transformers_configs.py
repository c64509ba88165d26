"""What the installed transformers' config classes say about their models' positions, found by
building each one with a key moved rather than from a hand-kept list: the keys a rotary table
depends on and their defaults, where each legacy key lands, how a class derives its head dim,
its layer types and its per-layer settings where config.json is silent. model_data()
(tools/transformers_models.py) keeps them in pe_cli/families/transformers.json.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import warnings
from functools import cache

# the config keys a rotary table depends on, by their standard names
KEYS = (
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "head_dim",
    "max_position_embeddings",
    "original_max_position_embeddings",
    "partial_rotary_factor",
    "rope_theta",
)
ALIASED = KEYS + ("rope_parameters", "layer_types")


def _quiet():
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)


@cache
def config_classes() -> dict:
    from transformers import CONFIG_MAPPING

    _quiet()
    return {name: CONFIG_MAPPING[name] for name in CONFIG_MAPPING.keys()}


def _default(field):
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def _made(cls, keys: set) -> dict:
    """The values a class's __post_init__ gives the keys among `keys` whose field default is
    None (Mllama's cross_attention_layers), where it gives them one alike at any layer count."""
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    wanted = [k for k in keys if k in fields and _default(fields[k]) is None]
    if not wanted:
        return {}
    try:
        default, other = cls(), cls(num_hidden_layers=3)
    except Exception:
        return {}
    return {
        k: v
        for k in wanted
        if (v := getattr(default, k, None)) is not None and getattr(other, k, None) == v
    }


def _plain(value):
    try:
        json.dumps(value)
        return True
    except TypeError:
        return False


def _standard_rope(cls):
    """The rope parameters a default-built config of this class holds."""
    try:
        config = cls()
    except Exception:
        return None
    rope = getattr(config, "rope_parameters", None)
    return rope if rope and _plain(rope) else None


# a distinct value for each legacy key a config class may convert into rope_parameters
LEGACY_PROBES = {
    "rope_theta": 12345.0,
    "rope_local_base_freq": 23456.0,
    "rotary_emb_base": 34567.0,
    "rotary_pct": 0.375,
    "partial_rotary_factor": 0.625,
}


def _where(rope: dict, test) -> list:
    """[layer type ("" when flat), key] of the rope parameters whose value passes test."""
    nested = rope and all(isinstance(v, dict) or v is None for v in rope.values())
    found = []
    for layer_type, parameters in rope.items() if nested else [("", rope)]:
        for key, value in (parameters or {}).items():
            if test(key, value):
                found.append([layer_type, key])
    return sorted(found)  # some classes build their layer types from a set: its order varies


def legacy_rules(cls) -> dict:
    """How a config class that converts legacy keys by its own code places each one, found by
    building it with that key alone: {key: [[layer type, rope parameter], ...]} ([] when the
    class ignores the key), "rope_scaling": the layer types it updates, "types": the legacy
    rope_type names it renames. A key whose probe fails is left out (pe-cli refuses it)."""
    rules: dict = {}
    scaling = _scaling_probe(cls)
    for key, value in LEGACY_PROBES.items():
        # alone, and beside rope_scaling (which some classes let it reach further): LongRoPE's
        # factors counted for the rotary dim the key gives, or for the head dim where it is
        # ignored
        for name, extra in (
            (key, {}),
            (f"{key}+rope_scaling", {"rope_scaling": _resized(scaling, cls, key, value)}),
            (f"{key}+rope_scaling", {"rope_scaling": dict(scaling or {})}),
        ):
            if name in rules or (name != key and scaling is None):
                continue
            try:
                rope = cls(**{key: value}, **extra).rope_parameters or {}
            except Exception:
                continue
            rules[name] = _where(rope, lambda k, v, value=value: v == value)
    if scaling is not None:
        marker = "factor" if "factor" in scaling else "long_factor"
        rope = cls(rope_scaling=dict(scaling)).rope_parameters or {}
        rules["rope_scaling"] = sorted(
            {lt for lt, k in _where(rope, lambda k, v: k == marker and v == scaling[k])}
        )
        try:
            rope = cls(
                rope_scaling={"type" if k == "rope_type" else k: v for k, v in scaling.items()}
            ).rope_parameters
            if _get(rope or {}, "rope_type") != scaling["rope_type"]:
                rules["type_ignored"] = True  # rope_scaling's old "type" key does not set rope_type
        except Exception:
            pass
    for name in ("mrope",):  # Qwen-VL's configs call M-RoPE's default frequencies "mrope"
        try:
            rope = (
                cls(rope_scaling={"type": name, "mrope_section": [1, 1, 1]}).rope_parameters or {}
            )
        except Exception:
            continue
        renamed = {
            v for _, k in _where(rope, lambda k, v: k == "rope_type") for v in [_get(rope, k)]
        }
        if renamed - {name}:
            rules.setdefault("types", {})[name] = sorted(renamed - {name})[0]
    return rules


@cache
def plain_legacy_rules() -> dict:
    """Where the rope mixin places each legacy key: a plain config class's (Llama's) rules."""
    from transformers import LlamaConfig

    return legacy_rules(LlamaConfig)


def _resized(scaling, cls, key: str, value) -> dict:
    """The rope_scaling probe beside a legacy key: LongRoPE's factors, one per frequency,
    counted for the rotary dim that key gives (Phi-4-mini's partial_rotary_factor 0.75 beside
    its longrope rope_scaling)."""
    scaling = dict(scaling or {})
    if "short_factor" not in scaling or key not in ("partial_rotary_factor", "rotary_pct"):
        return scaling
    default = cls()
    head_dim = getattr(default, "head_dim", None) or (
        default.hidden_size // default.num_attention_heads
    )
    n = int(head_dim * value) // 2
    return scaling | {"short_factor": [1.0] * n, "long_factor": [2.0] * n}


def _scaling_probe(cls):
    """A rope_scaling the class accepts: linear, else LongRoPE with factors of its width."""
    try:
        cls(rope_scaling={"rope_type": "linear", "factor": 3.0})
        return {"rope_type": "linear", "factor": 3.0}
    except Exception:
        pass
    try:
        default = cls()
        rope = default.rope_parameters or {}
        head_dim = (
            getattr(default, "head_dim", None) or default.hidden_size // default.num_attention_heads
        )
        n = int(head_dim * rope.get("partial_rotary_factor", 1.0)) // 2
        probe = {"rope_type": "longrope", "short_factor": [1.0] * n, "long_factor": [2.0] * n}
        cls(rope_scaling=dict(probe))
        return probe
    except Exception:
        return None


def _get(rope: dict, key: str):
    return (
        rope.get(key)
        if key in rope
        else next((v.get(key) for v in rope.values() if isinstance(v, dict) and key in v), None)
    )


def config_facts(cls) -> dict | None:
    """The data pe-cli keeps about one config class (None when it has nothing rotary about it)."""
    from transformers.modeling_rope_utils import RotaryEmbeddingConfigMixin

    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    aliases = {k: v for k, v in (getattr(cls, "attribute_map", None) or {}).items() if k in ALIASED}
    parts = {}
    for key, sub in (getattr(cls, "sub_configs", None) or {}).items():
        model_type = getattr(sub, "model_type", "")
        if model_type:
            parts[key] = model_type
    rotary = "rope_parameters" in fields or "rope_theta" in fields
    if not rotary and not parts:
        return None
    facts: dict = {}
    if rotary:
        wanted = set(KEYS) | {aliases[k] for k in KEYS if k in aliases} | schedule_keys()
        made = _made(cls, schedule_keys())
        facts["defaults"] = {
            k: made.get(k, _default(f))
            for k, f in sorted(fields.items())
            if k in wanted
            and _plain(made.get(k, _default(f)))
            and made.get(k, _default(f)) is not None
        }
        if aliases:
            facts["aliases"] = dict(sorted(aliases.items()))
        facts["theta"] = cls.default_theta
        if getattr(cls, "_rope_type_labels", None):
            facts["labels"] = list(cls._rope_type_labels)
        if cls.default_rope_type != "default":
            facts["rope_type"] = cls.default_rope_type
        own = (
            cls.convert_rope_params_to_dict
            is not RotaryEmbeddingConfigMixin.convert_rope_params_to_dict
        )
        # where each legacy key lands, for a class that converts them its own way
        if own:
            facts["legacy"] = legacy_rules(cls)
        else:  # the legacy keys its __post_init__ drops where the mixin places them (Muse Spark)
            rules, plain = legacy_rules(cls), plain_legacy_rules()
            for beside in ("", "+rope_scaling"):  # alone, and beside rope_scaling
                dropped = sorted(
                    k
                    for k in LEGACY_PROBES
                    if rules.get(k + beside) == [] and plain.get(k + beside)
                )
                if dropped:
                    facts["dropped" + beside] = dropped
        for key, rule in (
            ("rope_parameters", _standard_rope),
            ("layers", layer_rule),
            ("per_layer", per_layer_rule),
        ):
            found = rule(cls)
            if found is not None:
                facts[key] = found
        derived = derived_head_dim(cls)
        if derived is not None:
            facts["head_dim_from"] = derived
            facts["defaults"].update({k: _default(fields[k]) for k in derived["keys"]})
            partial = derived_partial(cls, derived["keys"])
            if partial is not None:
                facts["partial_from"] = partial
    if parts:
        facts["parts"] = dict(sorted(parts.items()))
    return facts


def schedule_keys() -> set:
    """The config keys pe-cli's model schedules read (their class defaults are data too)."""
    from pe_cli.families.rope.schedules import SCHEDULES

    return {key for schedule in SCHEDULES.values() for key in schedule.keys}


def _attribute(config, key):
    """An attribute of a built config, or None (also where it is one per layer only)."""
    try:
        return getattr(config, key, None)
    except Exception:
        return None


def _sizes(cls) -> dict:
    """The class's whole-number keys and their defaults."""
    return {
        f.name: f.default
        for f in dataclasses.fields(cls)
        if isinstance(f.default, int) and not isinstance(f.default, bool) and f.default > 0
    }


def derived_head_dim(cls) -> dict | None:
    """How a class sets head_dim from other keys in its __post_init__ (multi-head latent
    attention: qk_rope_head_dim; Mistral 4: qk_nope_head_dim + qk_rope_head_dim; JetMoE:
    kv_channels), found by moving each whole-number key by 16 and seeing head_dim move with
    it: {"keys": the keys it is the sum of, "over": whether a head_dim given is overwritten};
    None where head_dim is config.json's or hidden_size // num_attention_heads."""
    if not dataclasses.is_dataclass(cls):
        return None
    try:
        base = cls()
    except Exception:
        return None
    head = _attribute(base, "head_dim")
    if not isinstance(head, int):
        return None
    keys = []
    for key, value in _sizes(cls).items():
        if key in ("head_dim", "hidden_size", "num_attention_heads"):
            continue
        try:
            moved = _attribute(cls(**{key: value + 16}), "head_dim")
        except Exception:
            continue
        if moved == head + 16:
            keys.append(key)
    hidden, heads = _attribute(base, "hidden_size"), _attribute(base, "num_attention_heads")
    if not keys and isinstance(hidden, int) and isinstance(heads, int) and heads:
        # twice the standard head dim (Zamba2's attention_head_dim: 2 * hidden // heads)
        times = head * heads // hidden if head * heads % hidden == 0 else None
        if times and times > 1 and _attribute(cls(hidden_size=2 * hidden), "head_dim") == 2 * head:
            return {"keys": [], "times": times, "over": False}
    if not keys or sum(getattr(base, k) for k in keys) != head:
        return None
    try:
        over = _attribute(cls(head_dim=head + 32), "head_dim") == head
    except Exception:
        over = True  # a class that takes no head_dim: config.json's is never read
    return {"keys": sorted(keys), "over": over}


def derived_partial(cls, keys: list) -> list | None:
    """The keys whose sum over head_dim a class makes rope_parameters' partial_rotary_factor
    where it gives none (Mistral 4: qk_rope_head_dim / head_dim); None where it does not."""
    base = cls()
    rope = _attribute(base, "rope_parameters") or {}
    head = _attribute(base, "head_dim")
    for key in keys:
        if rope.get("partial_rotary_factor") != getattr(base, key) / head:
            continue
        moved = cls(**{key: getattr(base, key) + 16})
        if (_attribute(moved, "rope_parameters") or {}).get("partial_rotary_factor") == (
            getattr(moved, key) / _attribute(moved, "head_dim")
        ):
            return [key]
    return None


# legacy keys some classes pop from kwargs to lay out their layer types
PERIOD_KWARGS = ("sliding_window_pattern", "global_attn_every_n_layers", "full_attention_interval")


def _layer_types(cls, layers: int, **given):
    """The layer_types a class makes for that many layers (None where it fails)."""
    try:
        found = _attribute(cls(num_hidden_layers=layers, **given), "layer_types")
    except Exception:
        return None
    return list(found) if isinstance(found, (list, tuple)) and len(found) == layers else None


def _predict(rule: dict, layers: int) -> list:
    head, period, pattern = rule["head"], rule["period"], rule["pattern"]
    out = []
    for i in range(layers):
        if rule["last"] is not None and i == layers - 1:
            out.append(rule["last"])
        elif i < len(head):
            out.append(head[i])
        else:
            out.append(pattern[(i if rule["phase"] == "start" else layers - 1 - i) % period])
    return out


def _fit(lists: dict) -> dict | None:
    """The least rule that makes every {layers: layer_types} given: the first few layers'
    types, then a pattern repeated from the first layer or back from the last, the last
    layer's type where the class fixes it."""
    most = max(lists)
    listed = lists[most]
    for head in range(4):
        for fixed_last in (False, True):
            for period in range(1, 13):
                for phase in ("start", "end"):
                    pattern: list = [None] * period
                    for i in range(head, most - fixed_last):
                        j = (i if phase == "start" else most - 1 - i) % period
                        if pattern[j] not in (None, listed[i]):
                            break
                        pattern[j] = listed[i]
                    else:
                        if None in pattern:
                            continue
                        rule = {
                            "head": listed[:head],
                            "period": period,
                            "phase": phase,
                            "pattern": pattern,
                            "last": listed[-1] if fixed_last else None,
                        }
                        if all(_predict(rule, n) == found for n, found in lists.items()):
                            return rule
    return None


def _marked(pattern: list, period: int) -> list | None:
    """A period's pattern as one layer type at its first or last place and another elsewhere:
    ["first" or "last", the marked type, the other type]; None where it is not that."""
    for where, index in (("first", 0), ("last", period - 1)):
        others = {t for i, t in enumerate(pattern) if i != index}
        if period > 1 and len(others) == 1 and pattern[index] not in others:
            return [where, pattern[index], others.pop()]
    return None


def layer_rule(cls) -> dict | None:
    """How a class lays out layer_types where config.json gives none, found from the lists it
    makes for 1 to 30 layers (_fit), with the key that sets the pattern's period where one
    does (found by moving it), the list keys it reads them from instead (Llama 4's
    no_rope_layers), and the last layer's type it forces on a list given."""
    if not dataclasses.is_dataclass(cls) or "layer_types" not in {
        f.name for f in dataclasses.fields(cls)
    }:
        return None
    lists = {n: found for n in range(1, 31) if (found := _layer_types(cls, n)) is not None}
    if len(lists) < 20:
        return None
    rule, least = _fit(lists), 1
    if rule is None:  # a rule for small models of its own (OLMo-Hybrid's last layer, below 4)
        least = 8
        rule = _fit({n: found for n, found in lists.items() if n >= least})
    if rule is None:
        return None
    rule["key"] = None
    if least > 1:
        rule["least"] = least
    mark = _marked(rule["pattern"], rule["period"])
    if mark is not None:
        rule["mark"] = mark
        keys = [k for k in _sizes(cls) if k != "num_hidden_layers"] + list(PERIOD_KWARGS)
        for key in dict.fromkeys(keys):
            moved = [rule["period"] + 1, rule["period"] + 2]
            fits = []
            for period in moved:
                found = {n: _layer_types(cls, n, **{key: period}) for n in (23, 24, 30)}
                if None in found.values() or found[24] == lists[24]:
                    break
                fitted = _fit(found)
                fits.append(
                    fitted is not None
                    and fitted["period"] == period
                    and _marked(fitted["pattern"], period) == mark
                )
            if len(fits) == 2 and all(fits):
                rule["key"] = key
                break
    lists_read = []
    default = cls(num_hidden_layers=8)
    for field in dataclasses.fields(cls):
        value = _attribute(default, field.name)
        if field.name == "layer_types" or not isinstance(value, list) or not value:
            continue
        # a list read per layer (Llama 4's no_rope_layers) or of layer indices (LFM2's
        # full_attn_idxs): some other list of it makes other layer types
        others = (value[::-1], value[: len(value) // 2], value[:1], [0, 0, 0, 0, 1, 1, 1, 1])
        if any(
            _layer_types(cls, 8, **{field.name: other}) not in (lists[8], None) for other in others
        ):
            lists_read.append(field.name)
    if lists_read:
        rule["from"] = lists_read
    given = [rule["pattern"][0]] * 6
    forced = _layer_types(cls, 6, layer_types=list(given))
    rule["given_last"] = forced[-1] if forced is not None and forced != given else None
    return rule


# keys some classes pop from kwargs to give the layers of one type their own settings
PER_LAYER_KWARGS = ("global_head_dim",)


def _per_layer(config) -> dict | None:
    """{layer type: the settings per_layer_config gives its layers} of a built config (None
    where it has none, or gives one type's layers different settings)."""
    written = json.loads(config.to_json_string(use_diff=False)).get("per_layer_config")
    kinds = _attribute(config, "layer_types")
    if not written or not isinstance(kinds, list):
        return None
    by_index = {int(k): v for k, v in written.items()}  # its keys are padded: "05"
    found: dict = {}
    for index, kind in enumerate(kinds):
        settings = {k: v for k, v in (by_index.get(index) or {}).items() if k in ("head_dim",)}
        if found.setdefault(kind, settings) != settings:
            return None
    return {kind: settings for kind, settings in found.items() if settings}


def per_layer_rule(cls) -> dict | None:
    """The settings a class gives the layers of a type through per_layer_config where
    config.json gives none (Gemma 4: head_dim 512 for full_attention): {"types": {layer
    type: {key: value}}, "keys": {the kwarg that sets one: [layer type, key]}}."""
    if not dataclasses.is_dataclass(cls):
        return None
    try:
        found = _per_layer(cls(num_hidden_layers=12))
    except Exception:
        return None
    if not found:
        return None
    keys = {}
    for kwarg in PER_LAYER_KWARGS:
        try:
            moved = _per_layer(cls(num_hidden_layers=12, **{kwarg: 96}))
        except Exception:
            continue
        for kind, settings in (moved or {}).items():
            for key, value in settings.items():
                if value == 96 and found.get(kind, {}).get(key) != 96:
                    keys[kwarg] = [kind, key]
    return {"types": found, "keys": keys}
