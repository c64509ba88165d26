"""What the installed transformers says about its models' positional tables, found by walking
its packages rather than from a hand-kept list:

- every rotary-embedding module class, the config it is built from, and how to call it;
- the facts pe-cli keeps as data in pe_cli/families/transformers.json, recomputed from the
  config classes and modules themselves (`python -m tests.transformers_models` rewrites the
  file; a test checks that it matches).
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
KEYS = ("hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings",
        "original_max_position_embeddings", "partial_rotary_factor", "rope_theta")
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
        wanted = set(KEYS) | {aliases[k] for k in KEYS if k in aliases}
        facts["defaults"] = {k: _default(f) for k, f in sorted(fields.items())
                             if k in wanted and _plain(_default(f)) and _default(f) is not None}
        if aliases:
            facts["aliases"] = dict(sorted(aliases.items()))
        facts["theta"] = cls.default_theta
        if getattr(cls, "_rope_type_labels", None):
            facts["labels"] = list(cls._rope_type_labels)
        if cls.default_rope_type != "default":
            facts["rope_type"] = cls.default_rope_type
        own = cls.convert_rope_params_to_dict is not RotaryEmbeddingConfigMixin.convert_rope_params_to_dict
        if own:
            facts["legacy"] = "own"  # the class converts legacy keys its own way
        rope = _standard_rope(cls)
        if rope is not None:
            facts["rope_parameters"] = rope
    if parts:
        facts["parts"] = dict(sorted(parts.items()))
    return facts


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


@cache
def rotary_modules() -> tuple[Rotary, ...]:
    """Every nn.Module class named *Rotary* in transformers' models."""
    import torch
    import transformers.models

    _quiet()
    found = []
    for info in pkgutil.iter_modules(transformers.models.__path__):
        for module in _modeling_modules(info.name):
            for name, cls in vars(module).items():
                if not (inspect.isclass(cls) and cls.__module__ == module.__name__ and "Rotary" in name
                        and issubclass(cls, torch.nn.Module)):
                    continue
                try:
                    config_class = typing.get_type_hints(cls.__init__).get("config")
                except Exception:
                    config_class = None
                forward = tuple(inspect.signature(cls.forward).parameters)[1:]
                found.append(Rotary(info.name, name, cls, config_class if inspect.isclass(config_class)
                                    else None, forward))
    return tuple(sorted(found, key=lambda r: (r.model, r.name)))


def top_config(rotary: Rotary):
    """The model's own config class (its config.json's), found by the folder's model types."""
    classes = config_classes()
    for cls in classes.values():
        if cls.__module__.startswith(f"transformers.models.{rotary.model}.") and not getattr(
                cls, "base_config_key", ""):
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

    tried = []
    for node, path in sorted(parts(config, ""), key=order):
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
        return module(torch.zeros(1), positions[None, :], **({"layer_type": layer_type} if layer_type else {}))


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
    if width % 2 == 0 and torch.equal(cos[:, :n], cos[:, n:]) and torch.equal(sin[:, :n], sin[:, n:]):
        return {}
    if width % 2 == 0 and torch.equal(cos[:, 0::2], cos[:, 1::2]) and torch.equal(sin[:, 0::2], sin[:, 1::2]):
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
            facts = layout(out[0].reshape(-1, out[0].shape[-1]), out[1].reshape(-1, out[1].shape[-1]), False)
        model_type = node.model_type
        if found.get(model_type, facts) != facts:
            raise ValueError(f"{model_type}: two rotary modules lay out their tables differently")
        found[model_type] = facts
    return {k: v for k, v in found.items() if v}


def main():
    data = {name: facts for name, cls in sorted(config_classes().items())
            if (facts := config_facts(cls)) is not None}
    for model_type, facts in table_facts().items():
        data[model_type]["table"] = facts
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{DATA}: {len(data)} model types")


if __name__ == "__main__":
    main()


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
    import torch

    out = run(module, positions, layer_type)
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


def conformance(rotary: Rotary, starts=(0, 100_000), rows=256, folder=None) -> Result:
    """Run the module at rows positions from each start, and pe-cli's hf-rope from the model's
    default config.json, for every layer type; compare bit for bit."""
    import tempfile

    import torch

    from pe_cli import build as pe_build
    from pe_cli.core.errors import PeError
    from pe_cli.spec import export_specs

    if not rotary.takes_positions:
        return Result(rotary, "not run", f"its forward takes ({', '.join(rotary.forward)}), not (x, position_ids)")
    built = usable(rotary)
    if isinstance(built, str):
        return Result(rotary, "not run", built)
    module, config, node, part = built
    folder = Path(folder or tempfile.mkdtemp())
    path = folder / f"{rotary.name}.json"
    path.write_text(config.to_json_string())
    options = {"rope_config": str(path), "family": "rope", "variant": ["hf-rope"], "seq_len": rows,
               "config_part": part or None}
    try:
        names = sorted({name.rsplit(".", 1)[0] for name in export_specs(options)} - {"cos", "sin"})
    except PeError as e:
        return Result(rotary, "refused", str(e), part=part)
    kinds = tuple(names)
    if set(kinds) != set(layer_types(module, node)):
        return Result(rotary, "differs", f"layer types {', '.join(kinds) or 'none'}; the module's: "
                      f"{', '.join(layer_types(module, node)) or 'none'}", kinds, part)
    for layer_type in kinds or (None,):
        for start in starts:
            try:
                cos, sin = _module_table(module, torch.arange(start, start + rows), layer_type)
            except Exception as e:
                return Result(rotary, "not run", f"the module fails: {type(e).__name__}: {e}"[:200],
                              kinds, part)
            chosen = {**options, "offset": start, "layer_type": layer_type}
            try:
                specs = export_specs(chosen)
                ours = {name.rsplit(".", 1)[-1]: pe_build(spec).values for name, spec in specs.items()}
            except PeError as e:
                return Result(rotary, "refused", str(e), kinds, part)
            for name, theirs in (("cos", cos), ("sin", sin)):
                mine = torch.as_tensor(ours[name])
                if mine.shape != theirs.shape:
                    return Result(rotary, "differs", f"{name} shape {tuple(mine.shape)}, the module's "
                                  f"{tuple(theirs.shape)} ({layer_type or 'one layer type'})", kinds, part)
                if not torch.equal(mine, theirs.float()):
                    error = float((mine.double() - theirs.double()).abs().max())
                    return Result(rotary, "differs", f"{name} max |err| {error:.3g} from position {start} "
                                  f"({layer_type or 'one layer type'})", kinds, part)
    return Result(rotary, "identical", "", kinds, part)


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
    import torch
    import transformers.models

    _quiet()
    found = []
    for info in pkgutil.iter_modules(transformers.models.__path__):
        for module in _modeling_modules(info.name):
            for name, cls in vars(module).items():
                if (inspect.isclass(cls) and cls.__module__ == module.__name__ and "Sinusoid" in name
                        and issubclass(cls, torch.nn.Module)):
                    found.append(Sinusoid(info.name, name, cls))
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
                config = type("Config", (), {"frequency_embedding_size": width, "diffusion_max_period": 10000})
                return cls(config)(torch.arange(rows)).float(), "forward(timesteps)"
    return f"its constructor takes ({', '.join(parameters)})"
