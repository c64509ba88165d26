"""What a config.json says that its readers take differently, for the model view: one finding
a line, each said only where it holds. Each is a key ports have misread (HunYuan's alpha read
as factor, a missing rope_theta defaulted to another model's, YaRN's truncate left out), or a
schedule an engine hard-codes: a GGUF beside config.json (where convert_hf_to_gguf writes it by
default) whose NoPE layers, as llama.cpp derives them, are not the config's.
"""

from __future__ import annotations

from ...core.names import compact, shown


def _rope(node: dict) -> dict:
    rope = node.get("rope_parameters")
    return rope if isinstance(rope, dict) else {}


def findings(settings) -> list[dict]:
    """The config part's findings: {"rule": name, "line": what to say}."""
    node, found = settings.node, []
    given, scaling = _rope(node), node.get("rope_scaling")
    nested = bool(given) and all(isinstance(v, dict) or v is None for v in given.values())
    if isinstance(scaling, dict) and given and not nested:
        differ = sorted(
            k
            for k in set(scaling) | set(given)
            if k not in ("type", "rope_type", "rope_theta")
            and k in scaling
            and k in given
            and scaling[k] != given[k]
        )
        kinds = (scaling.get("rope_type", scaling.get("type")), given.get("rope_type"))
        if differ or (kinds[0] and kinds[1] and kinds[0] != kinds[1]):
            said = ", ".join(
                f"{k} {shown(scaling[k])} there, {shown(given[k])} here" for k in differ
            ) or (f"rope_type {kinds[0]} there, {kinds[1]} here")
            found.append(
                {
                    "rule": "rope-scaling-disagrees",
                    "line": f"rope_scaling and rope_parameters disagree ({said}): transformers "
                    "reads rope_parameters",
                }
            )
    tables = [given] if not nested else [v for v in given.values() if isinstance(v, dict)]
    if node.get("rope_theta") is None and not any("rope_theta" in t for t in tables):
        found.append(
            {
                "rule": "no-rope-theta",
                "line": f"config.json gives no rope_theta: model type {settings.model_type}'s "
                f"class default is used ({shown(settings.facts.get('theta', 10000.0))}, or its "
                "default rope parameters')",
            }
        )
    for table in [scaling] + tables if isinstance(scaling, dict) else tables:
        if table.get("alpha") is not None and table.get("factor") is not None:
            found.append(
                {
                    "rule": "alpha-beside-factor",
                    "line": f"alpha {shown(table['alpha'])} beside factor "
                    f"{shown(table['factor'])}: HunYuan's rotary module reads alpha (the base "
                    "times alpha**(d/(d-2))) and not factor",
                }
            )
            break
    for table in [scaling] + tables if isinstance(scaling, dict) else tables:
        kind = table.get("rope_type", table.get("type"))
        if kind == "yarn" and "truncate" not in table:
            found.append(
                {
                    "rule": "yarn-truncate-default",
                    "line": "YaRN without truncate: transformers floors and ceils its correction "
                    "range (truncate true); a model trained with it unrounded (gpt-oss) says "
                    "truncate false",
                }
            )
            break
    for key, default in settings.facts.get("defaults", {}).items():
        value = node.get(key)  # a flag that changes positions, given as a number or a string
        if isinstance(default, bool) and value is not None and not isinstance(value, bool):
            found.append(
                {
                    "rule": "flag-not-a-bool",
                    "line": f"{key} {shown(value)} is no true or false: transformers 5.23 "
                    f"refuses the file; read as {str(bool(value)).lower()}, as transformers 4 "
                    "read it",
                }
            )
    return found


def _said(layers, count: int, other: int) -> str:
    """Layer indices as the finding says them; their model's layer count where two differ."""
    said = compact(layers) if layers else "none"
    return said + (f" of {count}" if count != other else "")


def gguf_findings(source: str, layers) -> list[dict]:
    """The GGUF files in a config's folder whose NoPE layers, as llama.cpp derives them
    (gguf_config.nope_layers), differ from the config's (`layers`: its model's, in order);
    and those that cannot be read, which are not checked."""
    from pathlib import Path

    from ...core.errors import BadInput, Unavailable
    from ..hf_config import locate
    from .gguf_config import nope_layers

    try:
        folder = locate(source).parent
    except BadInput:
        return []
    found = []
    ours = tuple(layer.index for layer in layers if layer.table is None)
    for path in sorted(p for p in Path(folder).iterdir() if p.suffix.lower() == ".gguf"):
        try:
            theirs = nope_layers(str(path))
        except (BadInput, Unavailable) as e:
            why = str(e).removeprefix(f"{path}: ").removeprefix(f"{path} is a GGUF file: ")
            found.append(
                {
                    "rule": "gguf-unread",
                    "line": f"{path.name}: not checked against the config's NoPE layers ({why})",
                }
            )
            continue
        if theirs is None or theirs.layers == ours and theirs.count == len(layers):
            continue
        are = "layer is" if len(theirs.layers) == 1 else "layers are"
        mine = (
            f"the config's are {_said(ours, len(layers), theirs.count)}"
            if ours
            else "the config has none"
        )
        found.append(
            {
                "rule": "gguf-nope-layers",
                "line": f"{path.name}: llama.cpp's NoPE {are} "
                f"{_said(theirs.layers, theirs.count, len(layers))} ({theirs.why}); {mine}",
            }
        )
    return found
