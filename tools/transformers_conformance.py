"""Each rotary module of the installed transformers against pe-cli, from its model's default
config.json in three forms, and docs/rope.md's table of models from the results
(`python -m tools.transformers_models --readme` rewrites it). tests/test_transformers.py runs
them."""

from __future__ import annotations

import dataclasses
import inspect
import json
from functools import cache
from pathlib import Path

from .transformers_models import (
    DATA,
    Rotary,
    _grid,
    _module_classes,
    build,
    layer_types,
    module_input,
    rotary_modules,
    run,
    usable,
)

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


FORMS = ("full", "saved", "minimal", "legacy")


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
    "saved" as save_pretrained writes it (use_diff=True: the keys at PreTrainedConfig's own
    defaults left out), "minimal" with every key its class would fill in left out, "legacy"
    minimal too, with the rotary part's theta moved (so that it is written) and its rope
    parameters as rope_theta and rope_scaling."""
    if form == "full":
        return config.to_json_string()
    if form == "saved":
        return config.to_json_string(use_diff=True)
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
    rotary: Rotary, starts=(0, 100_000), rows=256, folder=None, form: str = "full", built=None
) -> Result:
    """Run the module at rows positions from each start, and pe-cli's hf-rope from the model's
    default config.json, for every layer type; for a multi-axis module also on a grid's
    positions (an image or video's t, h, w; an encoder's patches); compare bit for bit. In
    the "saved", "minimal" and "legacy" forms (written()) the module is the one transformers
    builds from that file."""
    import tempfile

    import torch

    from pe_cli.core.errors import PeError
    from pe_cli.families.rope import LAYOUTS as AXES
    from pe_cli.families.rope.tokens import axes_positions
    from pe_cli.options import Options

    if not rotary.takes_positions:
        return Result(
            rotary,
            "not run",
            f"its forward takes ({', '.join(rotary.forward)}), not (x, position_ids)",
        )
    given = built is not None  # (module, config, node, part): a config other than the default
    built = built or build(rotary)
    if isinstance(built, str):
        return Result(rotary, "not run", built)
    table = json.loads(DATA.read_text()).get(built[2].model_type, {}).get("table", {})
    style = AXES.get(table.get("axes", ""))
    if (style is None or not style.vision) and not given:  # 1-D positions run (M-RoPE: text)
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
                sorted(
                    {name.rsplit(".", 1)[0] for name in Options(options).export_specs()}
                    - {"cos", "sin"}
                )
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


def moved(rotary: Rotary):
    """(key, Result) for each key of the config part a rotary module is built from whose move
    (tools.transformers_layers.moves: a flag flipped, a number changed, None, a list reordered)
    changes the module: its buffers (inv_freq, ...) or its own settings (attention_scaling,
    mrope_section, ...). The part is rebuilt by its class with the key moved (what it derives
    from the key derived again), the whole config.json written, and conformance() run on it:
    pe-cli from that file equals the module built from it, or refuses it."""
    from . import transformers_layers as tl

    built = usable(rotary)
    if isinstance(built, str):
        return
    module, config, node, part = built
    base = _fingerprint(module)
    given = {k: v for k, v in node.to_dict().items() if k in tl._fields(type(node))}
    for key, value in [*tl.moves(type(node), node), *_rope_moves(given.get("rope_parameters"))]:
        try:
            other = type(node)(**{**given, key: value})
            changed = rotary.cls(other)
        except Exception:  # transformers refuses the value, or its module cannot take it
            continue
        if _fingerprint(changed) == base:
            continue
        whole = _with_part(config, part, other)
        yield key, conformance(rotary, built=(changed, whole, other, part))


def _rope_moves(rope):
    """rope_parameters with each of its numbers moved (rope_theta times 1.5, ...), each a move
    of the key rope_parameters."""
    if not isinstance(rope, dict):
        return
    for name, value in rope.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            yield "rope_parameters", {**rope, name: value * 1.5 if value else 2.0}
        elif isinstance(value, dict):  # one table per layer type
            for moved in _rope_moves(value):
                yield "rope_parameters", {**rope, name: moved[1]}


def _fingerprint(module) -> dict:
    """What a rotary module holds: its buffers' bytes and its plain settings."""
    state = {n: b.detach().cpu().numpy().tobytes() for n, b in module.named_buffers()}
    for name, value in vars(module).items():
        if not name.startswith("_") and isinstance(value, (bool, int, float, str, tuple, list)):
            state[name] = repr(value)
    return state


def _with_part(config, part: str, node):
    """A copy of the whole config with the part at dotted path `part` replaced by `node`."""
    import copy

    if not part:
        return node
    whole = copy.deepcopy(config)
    parent, keys = whole, part.split(".")
    for key in keys[:-1]:
        parent = getattr(parent, key)
    setattr(parent, keys[-1], node)
    return whole


def _compare(module, options, positions_of):
    """None when pe-cli's cos and sin for these options equal the module's on the positions
    positions_of(specs) gives; else (outcome, detail)."""
    import torch

    from pe_cli import build as pe_build
    from pe_cli.options import Options

    specs = {
        name.rsplit(".", 1)[-1]: spec for name, spec in Options(options).export_specs().items()
    }
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
