"""What the installed transformers says about its models' positional tables, found by walking
its packages rather than from a hand-kept list:

- every rotary-embedding module class, the config it is built from, and how to call it;
- the facts pe-cli keeps as data in pe_cli/families/transformers.json, recomputed from the
  config classes (tools/transformers_configs.py) and the modules themselves;
- docs/rope.md's table of models, from running each module against pe-cli
  (tools/transformers_conformance.py).

Run from the repository's root: `python -m tools.transformers_models` rewrites the json file,
`--check` exits 1 where it differs from what transformers says now, `--readme` rewrites
docs/rope.md's table. tests/test_transformers.py checks that both are current.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
import typing
from functools import cache
from pathlib import Path

from .transformers_configs import _default, _quiet, config_classes, config_facts

DATA = Path(__file__).resolve().parents[1] / "pe_cli" / "families" / "transformers.json"

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


def _builders(rotary: Rotary) -> list:
    """Every config class whose model builds the rotary class in its own __init__ (BLT's
    patcher, local encoder, global transformer and local decoder all build
    BltRotaryEmbedding, each from its own config part), beside the first (_built_from)."""
    import re

    module = importlib.import_module(rotary.cls.__module__)
    try:
        lines = inspect.getsource(module).splitlines()
    except OSError:
        return []
    found, signature = [], None
    for line in lines:
        if line.startswith("class "):
            signature = None
        elif opened := re.match(r"\s*def __init__\(self, config: (\w+)", line):
            signature = getattr(module, opened.group(1), None)
        elif f"{rotary.name}(" in line and inspect.isclass(signature) and signature not in found:
            found.append(signature)
    return found


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
        for model_type in [node.model_type, *(c.model_type for c in _builders(rotary))]:
            if found.get(model_type, facts) != facts:
                raise ValueError(
                    f"{model_type}: two rotary modules lay out their tables differently"
                )
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
        from .transformers_conformance import MARKERS, README, readme_section

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
        if differ:
            sys.exit(1)
        print(f"{DATA}: current ({len(stored)} model types)")
        return
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{DATA}: {len(data)} model types")


if __name__ == "__main__":
    main()
