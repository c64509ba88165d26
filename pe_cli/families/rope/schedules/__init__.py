"""What a language model does layer by layer beyond what transformers.json's data says: which
layers apply no rotation (NoPE), which rope parameters a layer reads, and what scales its
queries by position. One model, or one set of copies of it in transformers, is one module;
each registers a Schedule for its model types here. A model type without one follows the
data alone: each layer the table of its layer type, none for a layer type whose layers never
rotate in transformers' own small model of it.

A hook takes the config part's settings (hf_config.Settings: .get(key), .given(key), .node)
and a layer's index and type; none of them reads a file or builds a table.
"""

from __future__ import annotations

from importlib import import_module

from .base import QueryScale, Schedule, flags

__all__ = ["SCHEDULES", "QueryScale", "Schedule", "flags"]


MODULES = (
    "cohere2",
    "deepseek",
    "exaone4",
    "granite_swa",
    "hunyuan",
    "hybrids",
    "pairings",
    "lfm2",
    "llama4",
    "ministral3",
    "mistral_large4",
    "mllama",
    "muse",
    "recurrent_gemma",
    "smollm3",
)


def _registered() -> dict[str, Schedule]:
    """Each module's SCHEDULES by model type (a module is imported here, so that its name in
    MODULES is all the registry needs of it)."""
    found = {}
    for name in MODULES:
        for schedule in import_module(f"{__name__}.{name}").SCHEDULES:
            for model_type in schedule.model_types:
                if model_type in found:
                    raise ValueError(f"model type {model_type} has two schedules")
                found[model_type] = schedule
    return found


SCHEDULES: dict[str, Schedule] = _registered()
