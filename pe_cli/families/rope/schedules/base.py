"""A model schedule's parts: the Schedule each model module registers, the query scales its
hooks give, and the per-layer lists they read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ....core.errors import BadInput


@dataclass(frozen=True)
class QueryScale:
    """A factor a layer multiplies its queries by, as a function of the position: `kind` names
    the formula (query_scale.py computes each), `values` its parameters, `keys` the config
    keys they come from, for a person."""

    kind: str
    values: tuple[tuple[str, float], ...]
    keys: str


@dataclass(frozen=True)
class Schedule:
    model_types: tuple[str, ...]
    # the config keys the hooks read (each honoured: tests/test_layers.py moves each one)
    keys: tuple[str, ...] = ()
    # config.json completed as the config class completes it: (node, transformers.json facts)
    fill: Callable[[dict, dict], dict] | None = None
    # each layer's type where the class makes them from other keys (Llama 4's no_rope_layers)
    kinds: Callable | None = None
    # why layer `index` applies no rotation, or None where it rotates
    rotates: Callable | None = None
    # the rope parameters a layer reads, where not its type's (DeepSeek-V4: main, compress)
    label: Callable | None = None
    # a layer's own table settings over its type's (Granite SWA's theta per layer):
    # (settings, index, layer type, table) -> table
    table: Callable | None = None
    scale: Callable | None = None  # its QueryScale, or None
    # how the attention pairs the dims it rotates, where not as the table's columns do
    applied: Callable | None = None
    # what the inference engines cannot express of this model's layers, one line each, from
    # their source (llama.cpp in llama-cpp-python 0.3.36, mlx-lm 0.32.2, vLLM 0.33.0):
    # (settings, layers) -> lines
    engines: Callable | None = None
    # the attention's softmax scale where the rope parameters change it (multi-head latent
    # attention under YaRN: qk_head_dim**-0.5 * mscale**2): (settings, rope) -> (scale, why)
    softmax: Callable | None = None
    # parts of a layer that rotate by the same table in another pairing, by name (DeepSeek-V3.2's
    # indexer: half pairs where its attention's are interleaved)
    components: dict | None = None
    # the query and key dims beside the rotated ones that pass unrotated (multi-head latent
    # attention's qk_nope_head_dim): settings -> (count, the key it is read from), or None
    passed: Callable | None = None


def flags(settings, key: str, index: int, default: Callable[[int], int], truthy: bool = False):
    """A per-layer list's entry for a layer: config.json's list, else the class's default
    rule (Llama 4 takes an empty list as none given: truthy)."""
    listed = settings.node.get(key)
    if listed is None or (truthy and not listed):
        return default(index)
    if not isinstance(listed, list) or index >= len(listed):
        raise BadInput(f"{key} has no entry for layer {index}")
    return listed[index]


def every(step: int, count: int) -> set[int]:
    """The layers (i + 1) % step == 0 of count: a schedule some engines hard-code."""
    return {i for i in range(count) if (i + 1) % step == 0}
