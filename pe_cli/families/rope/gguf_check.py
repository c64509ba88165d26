"""`compare GGUF CONFIG`: which rope parameters of a GGUF disagree with the Hugging Face config it
was converted from. Each is held against what convert_hf_to_gguf writes for the config:
rope.freq_base (rope_theta as a float32), rope.dimension_count (the rotary dim), the head
dim, rope_freqs (llama3 scaling reaches a GGUF only as these factors, computed as the
converter computes them), the scaling type, factor and original context length (YaRN,
linear), LongRoPE's long and short factors and attention factor, and the context length.
"""

from __future__ import annotations

import math

from ...core.errors import BadInput
from ..base import Agreement, Described


def _rotary(settings: dict) -> int:
    return int(settings["d_model"] * settings["rope"].get("partial_rotary_factor", 1.0))


def _f32(value) -> float:
    import numpy as np

    return float(np.float32(value))


def _factors(found, expected) -> tuple[bool, str]:
    """Two lists of factors compared as float32: whether they agree, and how they differ."""
    if found is None:
        return False, "none"
    if len(found) != len(expected):
        return False, f"{len(found)} factors where the config gives {len(expected)}"
    differ = [k for k, (a, b) in enumerate(zip(found, expected)) if _f32(a) != _f32(b)]
    if not differ:
        return True, f"{len(found)} factors, the same"
    worst = max(abs(found[k] / expected[k] - 1) for k in differ)
    return False, (
        f"{len(differ)} of {len(found)} factors differ (the first at pair {differ[0]}, "
        f"relative difference up to {worst:.3g})"
    )


def agreements(gguf: dict, config: dict) -> list[Agreement]:
    """The rope parameters of a GGUF (gguf_config.read) against its config's (hf_config.read)."""
    from .llamacpp import llama3_freq_factors

    ours, theirs = dict(gguf["rope"]), dict(config["rope"])
    kind = theirs.get("rope_type", "default")
    rows = [
        Agreement(
            "rope.freq_base (rope_theta)",
            f"{gguf['base']:g}",
            f"{config['base']:g}",
            _f32(gguf["base"]) == _f32(config["base"]),
        ),
        Agreement(
            "head dim",
            str(gguf["d_model"]),
            str(config["d_model"]),
            gguf["d_model"] == config["d_model"],
        ),
        Agreement(
            "rope.dimension_count (rotary dim)",
            str(_rotary(gguf)),
            str(_rotary(config)),
            _rotary(gguf) == _rotary(config),
        ),
    ]
    got = ours.get("rope_type", "default")
    freqs = ours.get("long_factor") if ours.get("long_factor") == ours.get("short_factor") else None
    if got == "llama3":  # rope_freqs read as the llama3 scaling they are (gguf_config.LLAMA3)
        freqs = list(llama3_freq_factors(_rotary(gguf), gguf["base"], ours))
    if kind == "llama3":
        expected = llama3_freq_factors(_rotary(config), config["base"], theirs)
        agree, how = _factors(freqs, expected)
        rows.append(Agreement("rope_freqs", how, "llama3 scaling's factors", agree))
    elif kind == "longrope":
        for key in ("long_factor", "short_factor"):
            agree, how = _factors(ours.get(key), theirs.get(key) or ())
            rows.append(Agreement(f"rope_factors_{key[:-7]}", how, key, agree))
        original = theirs.get("original_max_position_embeddings")
        rows.append(
            Agreement(
                "rope.scaling.original_context_length",
                str(ours.get("original_max_position_embeddings")),
                str(original),
                ours.get("original_max_position_embeddings") == original,
            )
        )
        attention = theirs.get("attention_factor")
        if attention is None:
            scale = theirs.get("factor") or theirs["max_position_embeddings"] / original
            attention = math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1 else 1.0
        rows.append(
            Agreement(
                "rope.scaling.attn_factor",
                f"{ours.get('attention_factor', 1.0):.7g}",
                f"{attention:.7g}",
                _f32(ours.get("attention_factor", 1.0)) == _f32(attention),
            )
        )
    else:
        shown = kind if kind != "default" else "none"
        rows.append(
            Agreement(
                "rope.scaling.type",
                {"default": "none", "longrope": "freq factors"}.get(got, got),
                shown,
                got == kind or (got, kind) == ("default", "default"),
            )
        )
        if kind in ("yarn", "linear") and got == kind:
            rows.append(
                Agreement(
                    "rope.scaling.factor",
                    f"{ours['factor']:g}",
                    f"{theirs['factor']:g}",
                    _f32(ours["factor"]) == _f32(theirs["factor"]),
                )
            )
        if kind == "yarn" and got == kind:
            rows.append(
                Agreement(
                    "rope.scaling.original_context_length",
                    str(ours["original_max_position_embeddings"]),
                    str(theirs["original_max_position_embeddings"]),
                    ours["original_max_position_embeddings"]
                    == theirs["original_max_position_embeddings"],
                )
            )
    if "length" in gguf and "length" in config:
        rows.append(
            Agreement(
                "context_length (max_position_embeddings)",
                str(gguf["length"]),
                str(config["length"]),
                gguf["length"] == config["length"],
            )
        )
    return rows


def compare_files(a: str, b: str) -> Described | None:
    """A GGUF and a config (either order), their rope parameters' agreements; None where the
    two are not a GGUF and a config."""
    from pathlib import Path

    from ..hf_config import read
    from . import gguf_config

    found = [gguf_config.is_gguf(s) for s in (a, b)]
    if sum(found) != 1:
        return None
    gguf, config = (a, b) if found[0] else (b, a)
    path = Path(config)
    if not (path.is_dir() or path.suffix.lower() == ".json"):
        return None
    try:
        settings = read(config)
    except BadInput as e:
        raise BadInput(f"{config}: {e}") from None
    rows = agreements(gguf_config.read(gguf), settings)
    return Described(("GGUF", gguf), ("config", config), rows)
