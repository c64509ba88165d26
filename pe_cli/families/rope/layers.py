"""A language model's positional scheme, layer by layer, from its config.json: which table each
decoder layer rotates its queries and keys by (its type's rope parameters, its own head dim,
the pairing its attention applies), which layers apply none (NoPE, or no attention to rotate),
and what scales a layer's queries by position. Each distinct treatment is said once, with the
layers that use it.

Where the layers' types come from and which of them rotate is transformers.json's data
(hf_config.layer_types; "rotating" and "unrotated": what transformers' own small model of the
type did); what a model does beyond that is its schedule's (schedules/).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ...core.errors import BadInput
from ...core.names import compact
from ..hf_config import Settings, config_of, layer_types, settings_table, tables
from .lint import findings
from .schedules import SCHEDULES, QueryScale


@dataclass(frozen=True)
class Layer:
    index: int
    kind: str | None  # its layer type (None: the model's layers have none)
    table: dict | None  # hf_config.read()'s settings; None where it applies no rotation
    why: str | None  # why it applies none
    scale: QueryScale | None  # what its queries are multiplied by, by position
    applied: str | None  # the pairing its attention rotates in, where not the table's columns'
    label: str | None = None  # the rope parameters it reads (its type's, or DeepSeek-V4's main)
    softmax: tuple | None = None  # its softmax scale where the rope parameters change it, and why
    passed: tuple | None = None  # (dims, key): query and key dims beside the rotated ones

    @property
    def key(self) -> str | None:
        """What makes two layers' rotations the same: their tables and the pairing applied."""
        if self.table is None:
            return None
        return json.dumps(
            [self.table, self.applied, self.softmax, self.passed], sort_keys=True, default=str
        )


@dataclass(frozen=True)
class Treatment:
    name: str
    layers: tuple[int, ...]
    first: Layer


@dataclass
class Scheme:
    model_type: str
    part: str
    layers: tuple[Layer, ...]
    treatments: dict[str, Treatment] = field(default_factory=dict)
    scales: dict[str, Treatment] = field(default_factory=dict)
    engines: list[str] = field(default_factory=list)  # what engines cannot express of it
    findings: list[dict] = field(default_factory=list)  # what its config.json says unclearly

    def treatment_of(self, layer: Layer) -> str | None:
        return next((n for n, t in self.treatments.items() if layer.index in t.layers), None)

    def scale_of(self, layer: Layer) -> str | None:
        return next((n for n, t in self.scales.items() if layer.index in t.layers), None)


def _rotation(settings: Settings, index: int, kind: str | None) -> str | None:
    """Why layer `index` applies no rotation, from its schedule or the data; None where it
    rotates."""
    schedule = SCHEDULES.get(settings.model_type)
    if schedule is not None and schedule.rotates is not None:
        return schedule.rotates(settings, index, kind)
    if kind is None:
        return None
    seen = settings.facts.get("layers", {})
    if "rotating" not in seen:
        raise BadInput(
            f"model type {settings.model_type}: pe-cli has not seen which of its layer types "
            "rotate (transformers' own small model of it does not run), so it gives no "
            "layer's table; --layer-type chooses one type's"
        )
    if kind in seen["unrotated"]:
        return f"NoPE: transformers' {settings.model_type} rotates no {kind} layer"
    if kind not in seen["rotating"]:
        raise BadInput(
            f"layer type {kind} is not among those transformers' default {settings.model_type} "
            "model has, so pe-cli has not seen whether its layers rotate"
        )
    return None


def _layer(settings: Settings, index: int, kinds: list | None, names: list) -> Layer:
    schedule = SCHEDULES.get(settings.model_type)
    kind = kinds[index] if kinds else None
    hook = (lambda name: getattr(schedule, name, None)) if schedule else (lambda name: None)
    label = hook("label")(settings, index, kind) if hook("label") else kind if names else None
    why = _rotation(settings, index, kind)
    table = None
    if why is None and names and label not in names:
        why = f"NoPE: the rope_parameters of {label} are null (no positional encoding)"
    if why is None:
        table = settings_table(settings, label, index)
        if hook("table"):
            table = hook("table")(settings, index, kind, table)
    rope = (table or {}).get("rope") or _flat_rope(settings)
    return Layer(
        index,
        kind,
        table,
        why,
        hook("scale")(settings, index, kind, rope) if hook("scale") else None,
        hook("applied")(settings, index, kind) if hook("applied") and table else None,
        label,
        hook("softmax")(settings, table["rope"]) if hook("softmax") and table else None,
        hook("passed")(settings) if hook("passed") and table else None,
    )


def _flat_rope(settings: Settings) -> dict:
    """A NoPE layer's rope parameters, where the model has one set (a query scale reads them)."""
    try:
        return settings_table(settings, None)["rope"]
    except BadInput:
        return {}


def _count(settings: Settings) -> int:
    count = settings.get("num_hidden_layers")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadInput(
            f"the config gives no {settings.names('num_hidden_layers')} (a positive whole number)"
        )
    return count


def _kinds(settings: Settings, count: int) -> list | None:
    kinds = layer_types(settings)
    if kinds is not None and len(kinds) < count:
        raise BadInput(f"layer_types lists {len(kinds)} layers of the model's {count}")
    return kinds


def layer(source: str, part: str | None, index: int) -> Layer:
    """One decoder layer of a config's model."""
    settings = config_of(source, part)
    count = _count(settings)
    if index >= count:
        raise BadInput(f"--layer {index}: the model has {count} layers (0 .. {count - 1})")
    return _layer(settings, index, _kinds(settings, count), tables(settings))


def scale_table(found: Layer, source: str, part: str | None) -> dict:
    """A layer's query scale as the settings of a --part query-scale table: its table's (a NoPE
    layer's: the model's one set), with the scale's parameters among the rope parameters."""
    if found.scale is None:
        raise BadInput(f"layer {found.index} multiplies its queries by no scale of the position")
    table = found.table
    if table is None:
        table = settings_table(config_of(source, part), None)
    return {**table, "rope": {**table["rope"], **dict(found.scale.values)}}


def scheme(source: str, part: str | None = None) -> Scheme:
    """Every decoder layer of a config's model, and the distinct treatments among them."""
    settings = config_of(source, part)
    count = _count(settings)
    kinds, names = _kinds(settings, count), tables(settings)
    layers = tuple(_layer(settings, i, kinds, names) for i in range(count))
    found = Scheme(settings.model_type, settings.path, layers, findings=findings(settings))
    schedule = SCHEDULES.get(settings.model_type)
    if schedule is not None and schedule.engines is not None:
        found.engines = schedule.engines(settings, layers)
    found.treatments = _named(layers, lambda layer: layer.key)
    found.scales = _named(
        layers, lambda layer: None if layer.scale is None else repr(layer.scale), scale=True
    )
    return found


def _named(layers, key, scale: bool = False) -> dict[str, Treatment]:
    """The distinct treatments among layers, each named by its layers' type where that type's
    layers all share it ("rope" where the layers have no types), else by type and number."""
    groups: dict[str, list[Layer]] = {}
    for layer in layers:
        if key(layer) is not None:
            groups.setdefault(key(layer), []).append(layer)
    named: dict[str, Treatment] = {}
    for members in groups.values():
        kinds = {m.kind for m in members}
        base = (
            "query-scale"
            if scale
            else members[0].label or (kinds.pop() if len(kinds) == 1 else None) or "rope"
        )
        name, n = base, 2
        while name in named:
            name, n = f"{base}-{n}", n + 1
        named[name] = Treatment(name, tuple(m.index for m in members), members[0])
    return named


def _command(source: str, part: str, layer: Layer, extra: str = "") -> str:
    """The generate command that builds a layer's table (or query scale), to which --variant,
    --part, -l and -o may be added."""
    import shlex

    words = ["pe-cli", "generate", "--rope-config", source]
    words += ["--config-part", part] if part else []
    words += ["--layer", str(layer.index)]
    return shlex.join(words) + extra


def _treatment(treatment: Treatment, source: str, part: str, model_type: str) -> dict:
    """What one treatment is, for a person and --json: its layers and its table's settings."""
    from ...core.names import shown
    from .keys import rope_parameters
    from .types import rope_frequencies

    first = treatment.first
    table = first.table
    rope = dict(rope_parameters(table["rope"]))
    rates, attention = rope_frequencies(
        table["d_model"], table["base"], rope, table.get("length", 1)
    )
    pairing = table["convention"]
    kind = rope.pop("rope_type", "default")
    said = ", ".join(
        f"{k} {shown(v) if not isinstance(v, tuple) or len(v) < 4 else f'({len(v)} values)'}"
        for k, v in sorted(rope.items())
    )
    return {
        "layers": list(treatment.layers),
        "layers_said": compact(treatment.layers),
        "layer_type": first.kind,
        "rope_parameters_of": first.label if first.label != first.kind else None,
        "base": table["base"],
        "head_dim": table["d_model"],
        "rotary_dims": 2 * sum(1 for w in rates if w),
        "rope": dict(table["rope"]),
        "settings": f"{kind}, theta {shown(table['base'])}" + (f", {said}" if said else ""),
        "table_pairing": pairing,
        "table_said": COLUMNS.get(pairing, pairing),
        "applied_pairing": first.applied or pairing,
        "attention_factor": float(attention),
        "components": _components(model_type),
        "softmax_scale": None if first.softmax is None else first.softmax[0],
        "softmax_scale_from": None if first.softmax is None else first.softmax[1],
        # query and key dims beside the rotated ones, unrotated (MLA's qk_nope_head_dim)
        "unrotated_dims": None if first.passed is None else first.passed[0],
        "unrotated_dims_from": None if first.passed is None else first.passed[1],
        "command": _command(source, part, first),
    }


def _components(model_type: str) -> dict:
    """Parts of a layer that rotate by its table in another pairing: {name: pairing}."""
    schedule = SCHEDULES.get(model_type)
    return dict(schedule.components or {}) if schedule is not None else {}


def view(found: Scheme, source: str, options: dict) -> dict:
    """The model view's figures: each layer's treatment (None: no positional encoding) and
    query scale, each treatment once with its settings and the command that builds it."""
    part = options.get("config_part") or ""
    return {
        "model_type": found.model_type,
        "config_part": found.part or None,
        "layers": [found.treatment_of(layer) for layer in found.layers],
        "treatments": {
            name: _treatment(t, source, part, found.model_type)
            for name, t in found.treatments.items()
        },
        "unrotated": _unrotated(found),
        "query_scales": [found.scale_of(layer) for layer in found.layers],
        "engines": found.engines,
        "findings": found.findings,
        "scales": {
            name: {
                "layers": list(t.layers),
                "layers_said": compact(t.layers),
                "kind": t.first.scale.kind,
                "values": dict(t.first.scale.values),
                "keys": t.first.scale.keys,
                "command": _command(source, part, t.first, " --part query-scale"),
            }
            for name, t in found.scales.items()
        },
    }


# how a table lays out the pairs its attention rotates, for the view to say beside the pairing
# applied where they differ
COLUMNS = {
    "single": "one column per pair",
    "half": "columns in half pairs",
    "interleaved": "columns in interleaved pairs",
}


def _unrotated(found: Scheme) -> list[dict]:
    """The layers that apply no rotation, grouped by the reason (its layer index said as i:
    "NoPE: no_rope_layers[i] = 0" once for every such layer)."""
    import re

    groups: dict[str, list[int]] = {}
    for layer in found.layers:
        if layer.table is None:
            groups.setdefault(re.sub(r"\[\d+\]", "[i]", layer.why), []).append(layer.index)
    return [
        {"layers": indices, "layers_said": compact(indices), "why": why}
        for why, indices in groups.items()
    ]
