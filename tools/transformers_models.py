"""What the installed transformers says about its models' positional tables, found by walking
its packages rather than from a hand-kept list:

- every rotary-embedding module class, the config it is built from, and how to call it;
- the facts pe-cli keeps as data in pe_cli/families/transformers.json, recomputed from the
  config classes and modules themselves;
- docs/rope.md's table of models, from running each module against pe-cli.

Run from the repository's root: `python -m tools.transformers_models` rewrites the json file,
`--check` exits 1 where it differs from what transformers says now, `--readme` rewrites
docs/rope.md's table. tests/test_transformers.py checks that both are current.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import logging
import pkgutil
import typing
import warnings
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "pe_cli" / "families" / "transformers.json"

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
        facts["defaults"] = {
            k: _default(f)
            for k, f in sorted(fields.items())
            if k in wanted and _plain(_default(f)) and _default(f) is not None
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
        rope = _standard_rope(cls)
        if rope is not None:
            facts["rope_parameters"] = rope
        layers = layer_rule(cls)
        if layers is not None:
            facts["layers"] = layers
        per_layer = per_layer_rule(cls)
        if per_layer is not None:
            facts["per_layer"] = per_layer
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


# ---------------------------------------------------------------------------------------------
# Rotary modules


@dataclasses.dataclass
class Rotary:
    """One rotary-embedding class of transformers and how a model builds and calls it."""

    model: str  # the models/ folder
    name: str  # the class name
    cls: type
    config_class: type | None  # the class its config is (None when not found)
    forward: tuple  # its forward's parameter names

    @property
    def takes_positions(self) -> bool:
        return self.forward[:2] == ("x", "position_ids")


def _modeling_modules(model: str):
    try:
        package = importlib.import_module(f"transformers.models.{model}")
    except Exception:
        return
    for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
        if info.name.startswith("modeling_"):
            try:
                yield importlib.import_module(f"transformers.models.{model}.{info.name}")
            except Exception:
                continue


def _built_from(module, name: str):
    """The config class of the first model in `module` that builds class `name`: the type of
    the config its __init__ takes (a class's own annotation can name a composite config)."""
    import re

    try:
        lines = inspect.getsource(module).splitlines()
    except OSError:
        return None
    for number, line in enumerate(lines):
        if f"{name}(" in line and not line.lstrip().startswith(("class ", "def ")):
            for previous in reversed(lines[:number]):
                found = re.match(r"\s*def __init__\(self, config: (\w+)", previous)
                if found:
                    cls = getattr(module, found.group(1), None)
                    return cls if inspect.isclass(cls) else None
                if previous.startswith("class "):
                    break
    return None


def _module_classes(word: str):
    """(model folder, modeling module, class name, class) of every nn.Module class defined in
    transformers' modeling files whose name holds `word`."""
    import torch
    import transformers.models

    _quiet()
    for info in pkgutil.iter_modules(transformers.models.__path__):
        for module in _modeling_modules(info.name):
            for name, cls in vars(module).items():
                if (
                    inspect.isclass(cls)
                    and cls.__module__ == module.__name__
                    and word in name
                    and issubclass(cls, torch.nn.Module)
                ):
                    yield info.name, module, name, cls


@cache
def rotary_modules() -> tuple[Rotary, ...]:
    """Every nn.Module class named *Rotary* in transformers' models."""
    found = []
    for model, module, name, cls in _module_classes("Rotary"):
        config_class = _built_from(module, name)
        if config_class is None:
            try:
                config_class = typing.get_type_hints(cls.__init__).get("config")
            except Exception:
                config_class = None
        forward = tuple(inspect.signature(cls.forward).parameters)[1:]
        found.append(
            Rotary(
                model, name, cls, config_class if inspect.isclass(config_class) else None, forward
            )
        )
    return tuple(sorted(found, key=lambda r: (r.model, r.name)))


def top_config(rotary: Rotary):
    """The model's own config class (its config.json's), found by the folder's model types."""
    classes = config_classes()
    for cls in classes.values():
        if cls.__module__.startswith(f"transformers.models.{rotary.model}.") and not getattr(
            cls, "base_config_key", ""
        ):
            return cls
    return rotary.config_class


def build(rotary: Rotary):
    """(the module, the model's default config, the part it is built from, the dotted path to
    that part), or a string saying why it cannot be built from its model's default config."""
    from transformers.configuration_utils import PreTrainedConfig

    top = top_config(rotary) or rotary.config_class
    if top is None:
        return "its config class is not found"
    try:
        config = top()
    except Exception as e:
        return f"its default config fails: {type(e).__name__}"

    def parts(node, path):
        yield node, path
        for key in getattr(node, "sub_configs", None) or {}:
            sub = getattr(node, key, None)
            if isinstance(sub, PreTrainedConfig):
                yield from parts(sub, f"{path}.{key}" if path else key)

    def order(item):
        node, path = item
        if rotary.config_class is not None and isinstance(node, rotary.config_class):
            return 0
        return 1 if path.endswith(("text_config", "language_config")) else 2

    candidates = sorted(parts(config, ""), key=order)
    if rotary.config_class is not None and not any(
        isinstance(n, rotary.config_class) for n, _ in candidates
    ):
        try:  # a part the default composite config leaves out: its own config alone
            alone = rotary.config_class()
            config, candidates = alone, [(alone, "")] + candidates
        except Exception:
            pass
    tried = []
    for node, path in candidates:
        try:
            module = rotary.cls(node)
        except Exception as e:
            tried.append(f"{path or 'config'}: {type(e).__name__}")
            continue
        return module, config, node, path
    return "not built from any part of its default config (" + "; ".join(tried) + ")"


def run(module, positions, layer_type=None):
    """The module's output for 1-D positions (x is only read for its device and dtype)."""
    import torch

    with torch.no_grad():
        return module(
            torch.zeros(1), positions[None, :], **({"layer_type": layer_type} if layer_type else {})
        )


def layer_types(module, node) -> list:
    """The layer types a module has tables for."""
    kinds = getattr(module, "layer_types", None)
    if kinds:  # a layer type whose rope_parameters are null has no table (NoPE)
        return sorted(k for k in set(kinds) if hasattr(module, f"{k}_inv_freq"))
    rope = getattr(node, "rope_parameters", None) or {}
    return [k for k, v in rope.items() if isinstance(v, dict)]


def usable(rotary: Rotary):
    """build(), and a module that runs: M-RoPE modules of a few models fail on their own
    default config, which gives no mrope_section (the module then splits its frequencies by a
    default that does not fit the default head dim); they get one that fits."""
    import torch

    built = build(rotary)
    if isinstance(built, str):
        return built
    module, config, node, path = built
    kinds = layer_types(module, node)
    try:
        run(module, torch.arange(4), kinds[0] if kinds else None)
        return built
    except Exception as e:
        failure = f"the module fails on its default config: {type(e).__name__}: {e}"[:200]
    rope = getattr(node, "rope_parameters", None)
    n = getattr(module, "inv_freq", torch.empty(0)).numel()
    if not isinstance(rope, dict) or "mrope_section" in rope or not n:
        return failure
    rope["mrope_section"] = [n - 2 * (n // 4), n // 4, n // 4]
    module = rotary.cls(node)
    try:
        run(module, torch.arange(4))
    except Exception:
        return failure
    return module, config, node, path


def layout(cos, sin, complex_: bool) -> dict:
    """How a module's table lays out its frequencies, read off the table: one column each,
    or two (half: i and i + n; interleaved: 2i and 2i + 1); complex tables come from polar."""
    import torch

    if complex_:
        return {"columns": "single", "arithmetic": "polar"}
    width = cos.shape[-1]
    n = width // 2
    if (
        width % 2 == 0
        and torch.equal(cos[:, :n], cos[:, n:])
        and torch.equal(sin[:, :n], sin[:, n:])
    ):
        return {}
    if (
        width % 2 == 0
        and torch.equal(cos[:, 0::2], cos[:, 1::2])
        and torch.equal(sin[:, 0::2], sin[:, 1::2])
    ):
        return {"columns": "interleaved"}
    return {"columns": "single"}


def table_facts() -> dict:
    """{model type: layout} for every rotary module that takes (x, position_ids)."""
    import torch

    found: dict = {}
    for rotary in rotary_modules():
        if not rotary.takes_positions or isinstance(built := usable(rotary), str):
            continue
        module, config, node, path = built
        kinds = layer_types(module, node)
        try:
            out = run(module, torch.arange(1, 9), kinds[0] if kinds else None)
        except Exception:  # 1-D positions: an axial module takes (row, column) pairs
            continue
        if torch.is_tensor(out):
            if not out.is_complex():
                continue
            facts = layout(out.real, out.imag, True)
        else:
            facts = layout(
                out[0].reshape(-1, out[0].shape[-1]), out[1].reshape(-1, out[1].shape[-1]), False
            )
        model_type = node.model_type
        if found.get(model_type, facts) != facts:
            raise ValueError(f"{model_type}: two rotary modules lay out their tables differently")
        found[model_type] = facts
    return {k: v for k, v in found.items() if v}


# ---------------------------------------------------------------------------------------------
# Multi-axis modules: which of pe-cli's AXES layouts each follows, found by running it on a
# grid's positions


# ways a module's config may give its head dim, besides head_dim or hidden_size // heads
HEAD_DIM_RULES = (
    ["embed_dim", "num_heads"],
    [
        "memory_attention_hidden_size",
        "memory_attention_downsample_rate",
        "memory_attention_num_attention_heads",
    ],
)


def _head_dims(node):
    """(rule or None, head dim) the config could mean."""
    found = []
    standard = getattr(node, "head_dim", None) or (
        getattr(node, "hidden_size", 0) // max(getattr(node, "num_attention_heads", 0) or 1, 1)
    )
    if standard:
        found.append((None, standard))
    for rule in HEAD_DIM_RULES:
        values = [getattr(node, k, None) for k in rule]
        if all(isinstance(v, int) and v > 0 for v in values):
            d = values[0]
            for v in values[1:]:
                d //= v
            found.append((rule, d))
    return found


def module_input(style, positions, order: str):
    """The position ids a module of this layout takes for (tokens, axes) positions: M-RoPE
    (axes, 1, tokens); vision (tokens, axes) as (row, column), or (x, y) = (column, row), with
    a batch dimension (1, tokens, axes) for the order "batch-" names."""
    import torch

    p = torch.from_numpy(positions)
    if not style.vision:
        return p.T[:, None, :]
    p = p.flip(-1) if order.endswith("xy") else p
    return p[None] if order.startswith("batch-") else p


def _grid(style):
    """A small grid for a layout, given the merge size: non-square, so rows and columns differ."""
    if not style.vision:
        return lambda m: "2x3x4"
    return lambda m: "x".join(["2"] * (len(style.axes) - 2) + [str(2 * m), str(3 * m)])


def axes_spec(style, node, head_dim, grid, sections=None):
    """pe-cli's spec of a module's table on a grid (None when pe-cli refuses it)."""
    from pe_cli.core.errors import PeError
    from pe_cli.spec import TableSpec

    rope = dict(getattr(node, "rope_parameters", None) or {})
    theta = rope.pop("rope_theta", 10000.0)
    rope = {k: v for k, v in rope.items() if v is not None}
    if sections and "mrope_section" not in rope:
        rope["mrope_section"] = sections
    merge = getattr(node, "spatial_merge_size", 1) if style.merged else 1
    try:
        return TableSpec(
            family="rope",
            d_model=head_dim,
            base=theta,
            rope=rope,
            axes=style.name,
            convention=style.convention,
            grid=grid(merge or 1),
            merge=merge or 1,
            variant="hf-rope",
            offset=0 if style.vision else 7,
        )
    except PeError:
        return None


def axes_match(rotary, module, node):
    """(layout, head dim rule, position order) under which pe-cli's hf-rope of a grid equals
    the module's output on that grid's positions, or None."""
    import torch

    from pe_cli import build as pe_build
    from pe_cli.families.rope import LAYOUTS as AXES
    from pe_cli.families.rope.tokens import axes_positions

    sections = getattr(module, "mrope_section", None)
    # (row, column) first: only a module that fits no layout so takes (x, y)
    for order in ("rc", "xy", "batch-rc", "batch-xy"):
        for style in AXES.values():
            if order == "xy" and not style.vision:
                continue
            grid = _grid(style)
            for rule, head_dim in _head_dims(node):
                spec = axes_spec(
                    style, node, head_dim, grid, sections if isinstance(sections, list) else None
                )
                if spec is None:
                    continue
                positions = axes_positions(spec)
                try:
                    with torch.no_grad():
                        out = module(torch.zeros(1), module_input(style, positions, order))
                except Exception:
                    continue
                if out[0].shape[-1] != spec.cols:
                    continue
                cos = out[0].reshape(-1, out[0].shape[-1])[: len(positions)].float()
                mine = torch.as_tensor(pe_build(spec.replace(part="cos")).values)
                if mine.shape == cos.shape and torch.equal(mine, cos):
                    return style.name, rule, order
    return None


def axes_facts() -> dict:
    """{model type: {"axes": layout, ...}} for every multi-axis rotary module."""
    found: dict = {}
    for rotary in rotary_modules():
        if not rotary.takes_positions or isinstance(built := build(rotary), str):
            continue
        module, config, node, path = built
        rope = dict(getattr(node, "rope_parameters", None) or {})
        sections = getattr(module, "mrope_section", None)  # before usable() gives it one that fits
        if not (rope.get("rope_type") == "axial" or hasattr(module, "mrope_section")):
            continue
        if not isinstance(built := usable(rotary), str):
            module, config, node, path = built
        match = axes_match(rotary, module, node)
        if match is None:
            continue
        style, rule, order = match
        facts = {
            "axes": style,
            **({"head_dim": rule} if rule else {}),
            **({"positions": order} if order != "rc" else {}),
        }
        if isinstance(sections, list) and "mrope_section" not in rope:
            facts["sections"] = sections  # the module's own when the config gives none
        if found.get(node.model_type, facts) != facts:
            raise ValueError(f"{node.model_type}: two multi-axis modules differ")
        found[node.model_type] = facts
    return found


def model_data() -> dict:
    """transformers.json's content, from the installed transformers."""
    data = {
        name: facts
        for name, cls in sorted(config_classes().items())
        if (facts := config_facts(cls)) is not None
    }
    for model_type, facts in table_facts().items():
        data[model_type]["table"] = facts
    for model_type, facts in axes_facts().items():
        rule = facts.pop("head_dim", None)
        if rule:
            data[model_type]["head_dim"] = rule
            fields = {f.name: f for f in dataclasses.fields(config_classes()[model_type])}
            data[model_type].setdefault("defaults", {}).update(
                {k: _default(fields[k]) for k in rule if k in fields}
            )
        data[model_type].setdefault("table", {}).update(facts)
    for model_type, seen in rotating_layer_types().items():
        if model_type in data:
            data[model_type].setdefault("layers", {}).update(seen)
    return data


def rotating_layer_types() -> dict:
    """{model type: {"rotating": the layer types of which some layer applies a rotary
    embedding, "unrotated": those of which none does}} in a small model built from the type's
    default config and run (tools/transformers_layers.py), for the types whose layers have
    types; a type whose small model does not run is left out, and a layer type that model
    does not have is in neither list."""
    from tools import transformers_layers

    found = {}
    for model_type in transformers_layers.candidates():
        try:
            schedule = transformers_layers.record(model_type)
        except Exception:
            continue
        kinds = transformers_layers._get(schedule.config, "layer_types")
        if isinstance(kinds, list) and len(kinds) == len(schedule.layers):
            rotating = {kind for kind, applied in zip(kinds, schedule.layers) if applied}
            found[model_type] = {
                "rotating": sorted(rotating),
                "unrotated": sorted(set(kinds) - rotating),
            }
    return found


def main():
    import sys

    if sys.argv[1:] == ["--readme"]:
        text = README.read_text()
        start, end = text.index(MARKERS[0]), text.index(MARKERS[1]) + len(MARKERS[1])
        README.write_text(text[:start] + readme_section() + text[end:])
        print(f"{README}: model table written")
        return
    data = model_data()
    if sys.argv[1:] == ["--check"]:  # in a fresh interpreter, as the file is made
        stored = json.loads(DATA.read_text())
        fresh = json.loads(json.dumps(data))
        differ = sorted(k for k in stored.keys() | fresh.keys() if stored.get(k) != fresh.get(k))
        for name in differ:
            print(
                f"{name}: stored {json.dumps(stored.get(name))[:300]}\n{name}: now {json.dumps(fresh.get(name))[:300]}"
            )
        sys.exit(1 if differ else 0)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{DATA}: {len(data)} model types")


# ---------------------------------------------------------------------------------------------
# Conformance: each rotary module against pe-cli from its model's default config.json


@dataclasses.dataclass
class Result:
    rotary: Rotary
    outcome: str  # "identical", "refused", "differs", or "not run"
    detail: str = ""
    layer_types: tuple = ()
    part: str = ""


def _module_table(module, positions, layer_type):
    """cos and sin of a module's output, (tokens, width): for 1-D positions (a tensor of
    tokens) or a multi-axis module's own position ids."""
    import torch

    if positions.dim() == 1:
        out = run(module, positions, layer_type)
    else:
        with torch.no_grad():
            out = module(torch.zeros(1), positions)
        # M-RoPE ids are (axes, 1, tokens); vision ids (tokens, axes) or (1, tokens, axes)
        tokens = positions.shape[-1] if positions.shape[1] == 1 else positions.shape[-2]
        return tuple(o.reshape(-1, tokens, o.shape[-1])[0].float() for o in out[:2])
    if torch.is_tensor(out):
        if not out.is_complex():
            raise TypeError(f"returns one real tensor of shape {tuple(out.shape)}")
        cos, sin = out.real, out.imag
    else:
        cos, sin = out[0], out[1]
    width = cos.shape[-1]
    cos, sin = cos.reshape(-1, len(positions), width), sin.reshape(-1, len(positions), width)
    # M-RoPE modules return one table per axis (t, h, w); a text token's are all the same
    if not (all(torch.equal(c, cos[0]) for c in cos) and all(torch.equal(s, sin[0]) for s in sin)):
        raise TypeError("returns different tables per position axis for 1-D positions")
    return cos[0], sin[0]


FORMS = ("full", "minimal", "legacy")


def _without_defaults(written: dict, default: dict) -> dict:
    """A config's dict less every key whose value is its class default's, part by part (what
    older save_pretrained wrote, and what people publish): model_type is kept."""
    out = {}
    for key, value in written.items():
        if isinstance(value, dict) and isinstance(default.get(key), dict) and "model_type" in value:
            out[key] = _without_defaults(value, default[key])
        elif key == "model_type" or default.get(key, object()) != value:
            out[key] = value
    return out


def _legacy_form(node: dict) -> dict:
    """A part's flat rope_parameters as the keys older configs have: rope_theta beside a
    rope_scaling whose kind is under "type"."""
    rope = node.get("rope_parameters")
    if not isinstance(rope, dict) or any(isinstance(v, dict) for v in rope.values()):
        return node
    node = {k: v for k, v in node.items() if k != "rope_parameters"}
    rope = dict(rope)
    node["rope_theta"] = rope.pop("rope_theta", None)
    kind = rope.pop("rope_type", "default")
    if kind != "default" or rope:
        node["rope_scaling"] = {"type": kind, **rope}
    return node


def written(config, form: str, path: str = "") -> str:
    """config.json as a model's authors may publish it: "full" as transformers 5 writes it,
    "minimal" with every key its class would fill in left out, "legacy" minimal too, with
    the rotary part's theta moved (so that it is written) and its rope parameters as
    rope_theta and rope_scaling."""
    if form == "full":
        return config.to_json_string()
    data = json.loads(config.to_json_string())
    if form == "legacy":
        node, keys = data, [k for k in path.split(".") if k]
        for key in keys:
            node = node[key]
        rope = node.get("rope_parameters")
        if isinstance(rope, dict) and isinstance(rope.get("rope_theta"), (int, float)):
            rope["rope_theta"] = rope["rope_theta"] * 2
        changed = _legacy_form(node)
        if keys:
            parent = data
            for key in keys[:-1]:
                parent = parent[key]
            parent[keys[-1]] = changed
        else:
            data = changed
    default = json.loads(type(config)().to_json_string())
    return json.dumps(_without_defaults(data, default), indent=2)


def _reloaded(rotary: Rotary, path: Path, part: str):
    """The module, config and part transformers builds from a config.json file."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(path))
    node = config
    for key in [k for k in part.split(".") if k]:
        node = getattr(node, key)
    return rotary.cls(node), config, node


def conformance(
    rotary: Rotary, starts=(0, 100_000), rows=256, folder=None, form: str = "full"
) -> Result:
    """Run the module at rows positions from each start, and pe-cli's hf-rope from the model's
    default config.json, for every layer type; for a multi-axis module also on a grid's
    positions (an image or video's t, h, w; an encoder's patches); compare bit for bit. In
    the "minimal" and "legacy" forms (written()) the module is the one transformers builds
    from that file."""
    import tempfile

    import torch

    from pe_cli.core.errors import PeError
    from pe_cli.families.rope import LAYOUTS as AXES
    from pe_cli.families.rope.tokens import axes_positions
    from pe_cli.spec import export_specs

    if not rotary.takes_positions:
        return Result(
            rotary,
            "not run",
            f"its forward takes ({', '.join(rotary.forward)}), not (x, position_ids)",
        )
    built = build(rotary)
    if isinstance(built, str):
        return Result(rotary, "not run", built)
    table = json.loads(DATA.read_text()).get(built[2].model_type, {}).get("table", {})
    style = AXES.get(table.get("axes", ""))
    if style is None or not style.vision:  # 1-D positions run (M-RoPE: text tokens)
        built = usable(rotary)
        if isinstance(built, str):
            return Result(rotary, "not run", built)
    module, config, node, part = built
    folder = Path(folder or tempfile.mkdtemp())
    path = folder / f"{rotary.name}.{form}.json"
    path.write_text(written(config, form, part))
    if form != "full":
        try:
            module, config, node = _reloaded(rotary, path, part)
        except Exception as e:
            return Result(rotary, "not run", f"transformers fails on the {form} form: {e}"[:200])
    options = {
        "rope_config": str(path),
        "family": "rope",
        "variant": ["hf-rope"],
        "seq_len": rows,
        "config_part": part or None,
    }
    kinds = ()
    try:
        if style is None or not style.vision:
            kinds = tuple(
                sorted({name.rsplit(".", 1)[0] for name in export_specs(options)} - {"cos", "sin"})
            )
            if set(kinds) != set(layer_types(module, node)):
                return Result(
                    rotary,
                    "differs",
                    f"layer types {', '.join(kinds) or 'none'}; the module's: "
                    f"{', '.join(layer_types(module, node)) or 'none'}",
                    kinds,
                    part,
                )
            for layer_type in kinds or (None,):
                for start in starts:
                    found = _compare(
                        module,
                        {**options, "offset": start, "layer_type": layer_type},
                        lambda specs, start=start, layer_type=layer_type: (
                            torch.arange(start, start + rows),
                            layer_type,
                        ),
                    )
                    if found:
                        return Result(rotary, found[0], found[1], kinds, part)
        if style is not None:
            merge = (getattr(node, "spatial_merge_size", 1) or 1) if style.merged else 1
            grid = _grid(style)(merge)
            for start in (0,) if style.vision else (7, 100_000):
                found = _compare(
                    module,
                    {**options, "grid": grid, "offset": start},
                    lambda specs: (
                        module_input(
                            style, axes_positions(specs["cos"]), table.get("positions", "rc")
                        ),
                        None,
                    ),
                )
                if found:
                    return Result(rotary, found[0], found[1], kinds, part)
    except PeError as e:
        return Result(rotary, "refused", str(e), kinds, part)
    return Result(rotary, "identical", "", kinds, part)


def _compare(module, options, positions_of):
    """None when pe-cli's cos and sin for these options equal the module's on the positions
    positions_of(specs) gives; else (outcome, detail)."""
    import torch

    from pe_cli import build as pe_build
    from pe_cli.spec import export_specs

    specs = {name.rsplit(".", 1)[-1]: spec for name, spec in export_specs(options).items()}
    positions, layer_type = positions_of(specs)
    try:
        cos, sin = _module_table(module, positions, layer_type)
    except Exception as e:
        return "not run", f"the module fails: {type(e).__name__}: {e}"[:200]
    where = f"{options.get('layer_type') or 'one layer type'}, from {options['offset']}" + (
        f", grid {options['grid']}" if options.get("grid") else ""
    )
    for name, theirs in (("cos", cos), ("sin", sin)):
        mine = torch.as_tensor(pe_build(specs[name]).values)
        if mine.shape != theirs.shape:
            return (
                "differs",
                f"{name} shape {tuple(mine.shape)}, the module's {tuple(theirs.shape)} ({where})",
            )
        if not torch.equal(mine, theirs.float()):
            error = float((mine.double() - theirs.double()).abs().max())
            return "differs", f"{name} max |err| {error:.3g} ({where})"
    return None


# ---------------------------------------------------------------------------------------------
# Sinusoidal modules: every class named *Sinusoid*, its table made the way each kind of
# module makes it


@dataclasses.dataclass
class Sinusoid:
    model: str
    name: str
    cls: type


@cache
def sinusoidal_modules() -> tuple[Sinusoid, ...]:
    """Every nn.Module class named *Sinusoid* in transformers' models."""
    found = [Sinusoid(model, name, cls) for model, _, name, cls in _module_classes("Sinusoid")]
    return tuple(sorted(found, key=lambda s: (s.model, s.name)))


def sinusoidal_table(sinusoid: Sinusoid, rows: int, width: int, padding_idx: int | None = None):
    """(table, what made it) of one module: its get_embedding, its weight, or its forward, at
    positions (or timesteps) 0..rows-1; or a string saying why it cannot be made."""
    import torch

    cls = sinusoid.cls
    parameters = list(inspect.signature(cls.__init__).parameters)[1:]
    getter = getattr(cls, "get_embedding", None)
    with torch.no_grad():
        if getter is not None:
            takes = list(inspect.signature(getter).parameters)
            args = (rows, width) + ((padding_idx,) if len(takes) > 2 else ())
            return getter(*args).float(), "get_embedding"
        if parameters[:2] == ["num_positions", "embedding_dim"]:
            module = cls(rows, width, *((padding_idx,) if "padding_idx" in parameters else ()))
            make = getattr(module, "create_weight", None)
            return (make() if make else module.weight).float(), "its weight"
        if parameters[:2] == ["embed_dim", "max_scale"]:  # Pegasus-X: forward(inputs_embeds)
            return cls(width)(torch.zeros(1, rows, width))[0].float(), "forward"
        if parameters[:2] == ["length", "channels"]:  # Qwen2.5-Omni's audio sinusoids
            return cls(rows, width)(rows).float(), "forward(seqlen)"
        if parameters == ["config"]:
            if "timesteps" in inspect.signature(cls.forward).parameters:
                config = type(
                    "Config", (), {"frequency_embedding_size": width, "diffusion_max_period": 10000}
                )
                return cls(config)(torch.arange(rows)).float(), "forward(timesteps)"
    return f"its constructor takes ({', '.join(parameters)})"


# ---------------------------------------------------------------------------------------------
# The table of models in docs/rope.md (`--readme` rewrites it there), from the conformance
# results

README = Path(__file__).resolve().parents[1] / "docs" / "rope.md"
MARKERS = (
    "<!-- models: made by tools/transformers_models.py from the conformance tests -->",
    "<!-- models: end -->",
)


@cache
def results(form: str = "full") -> tuple[Result, ...]:
    """Every rotary module's conformance from config.json in one form, once per test
    session."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return tuple(conformance(rotary, folder=folder, form=form) for rotary in rotary_modules())


def _examples(models: list[str]) -> str:
    models = sorted(set(models))
    shown = ", ".join(models[:6])
    return shown + (f" and {len(models) - 6} more" if len(models) > 6 else "")


def model_table() -> str:
    """Markdown: each way transformers makes a positional table, the models that do, and
    what pe-cli does with their config.json; then the sinusoidal modules."""
    from pe_cli.families.rope import LAYOUTS as AXES

    data = json.loads(DATA.read_text())
    rows: dict = {}
    for result in results():
        rotary = result.rotary
        built = build(rotary)
        node_type = built[2].model_type if not isinstance(built, str) else ""
        table = data.get(node_type, {}).get("table", {})
        rope = (
            getattr(built[2], "rope_parameters", None) or {} if not isinstance(built, str) else {}
        )
        kinds = sorted(
            {(v or {}).get("rope_type", "default") for v in rope.values()}
            if result.layer_types
            else {rope.get("rope_type", "default")}
        )
        if result.outcome == "identical":
            style = AXES.get(table.get("axes", ""))
            if style is not None and style.vision:
                how = f"vision RoPE, {style.summary}"
                grid = "x".join(a.upper() + ("S" if a != "t" else "") for a in style.axes).replace(
                    "TX", "Tx"
                )
                does = f"bit for bit: `--config-part vision_config --grid {grid} --variant hf-rope`"
            else:
                layout = {
                    "interleaved": "interleaved pairs (2i, 2i+1)",
                    "single": "one column per frequency",
                }.get(table.get("columns"), "half pairs (i, i + n)")
                if table.get("arithmetic") == "polar":
                    layout += ", complex torch.polar"
                how = f"1-D RoPE, {layout}"
                if result.layer_types:
                    how += ", rope_parameters per layer type"
                does = "bit for bit: `--rope-config config.json --variant hf-rope`" + (
                    " `--layer-type NAME` (export writes each)" if result.layer_types else ""
                )
                if style is not None:
                    how = f"M-RoPE: {style.summary}"
                    does += "; image and video tokens with `--grid TxHxW`"
        elif result.outcome == "not run":
            if "forward takes" in result.detail:
                how = f"not compared: its forward takes ({', '.join(rotary.forward)}), no position ids"
            else:
                how = (
                    "not compared: transformers cannot build the module from its own default config"
                )
            does = "-"
        else:
            how = f"{result.outcome}: {result.detail}"
            does = result.outcome
        row = rows.setdefault((how, does), {"models": [], "types": set()})
        row["models"].append(rotary.model)
        if result.outcome == "identical":
            row["types"].update(kinds)
    lines = [
        "| How transformers makes the table | Models | rope_type | pe-cli |",
        "|---|---|---|---|",
    ]
    for (how, does), row in sorted(
        rows.items(), key=lambda item: (item[0][1] == "-", -len(item[1]["models"]), item[0][0])
    ):
        count = len(set(row["models"]))
        lines.append(
            f"| {how.replace('|', '/')} | {count}: {_examples(row['models'])} | "
            f"{', '.join(sorted(row['types'])) or '-'} | {does} |"
        )
    lines += [
        "",
        "| Sinusoidal module | Models | Named by `compare FILE` | Rebuilt by |",
        "|---|---|---|---|",
    ]
    named: dict = {}
    for sinusoid, best in sinusoid_results():
        key = (
            best["name"],
            best["spec"]["convention"],
            best["spec"]["variant"],
            best["differing"] == 0,
        )
        named.setdefault(key, []).append(sinusoid.model)
    for (name, convention, variant, identical), models in sorted(
        named.items(), key=lambda i: -len(i[1])
    ):
        verdict = "bit for bit" if identical else "not bit for bit"
        lines.append(
            f"| {name} | {len(set(models))}: {_examples(models)} | {verdict} | "
            f"`generate --convention {convention} --variant {variant}` |"
        )
    return "\n".join(lines)


@cache
def sinusoid_results() -> tuple:
    """(module, compare's best candidate as JSON) for each sinusoidal module's 96 x 64 table."""
    import tempfile

    import numpy as np

    from pe_cli.analysis.compare import run as compare

    found = []
    with tempfile.TemporaryDirectory() as folder:
        for sinusoid in sinusoidal_modules():
            made = sinusoidal_table(sinusoid, rows=96, width=64, padding_idx=1)
            if isinstance(made, str):
                found.append(
                    (
                        sinusoid,
                        {"name": made, "spec": {"convention": "-", "variant": "-"}, "differing": 1},
                    )
                )
                continue
            path = Path(folder) / f"{sinusoid.name}.npy"
            np.save(path, made[0].numpy())
            found.append((sinusoid, compare(str(path), None, {}).result.to_json()["candidates"][0]))
    return tuple(found)


def readme_section() -> str:
    return f"{MARKERS[0]}\n{model_table()}\n{MARKERS[1]}"


if __name__ == "__main__":
    main()
