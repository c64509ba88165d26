"""litgpt and torchtitan themselves, for the conformance tests of --variant litgpt and --variant
torchtitan: litgpt's build_rope_cache and torchtitan's ComplexRoPE and CosSinRoPE caches. Both
live in a venv of their own (tools/frameworks_venv.sh: litgpt pins huggingface_hub 1.3 and brings
typer-slim), in $PE_CLI_FRAMEWORKS_VENV or else build/frameworks-venv; this file is both sides
of the call:

- run by that venv's Python (`VENV/bin/python -P tests/framework_tables.py CASES.json OUT_DIR`),
  it builds each case's cache and writes its cos and sin planes to OUT_DIR/NAME.npy, (2, rows,
  dim / 2) float32;
- imported by the tests, `tables(cases)` runs it once for many cases and returns them,
  `unavailable()` says why it cannot.

A case is a dict: name, framework (litgpt, torchtitan-complex, torchtitan-cossin), head_dim,
rows, base, and rope (transformers' rope parameters, turned here into the framework's config as
its own converters do: litgpt's extra_config, torchtitan's RoPE.Config).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("PE_CLI_FRAMEWORKS_VENV") or ROOT / "build" / "frameworks-venv")
PYTHON = VENV / "bin" / "python"


def unavailable() -> str | None:
    """Why litgpt and torchtitan cannot be called here, or None."""
    if not PYTHON.is_file():
        return f"the frameworks' venv is not in {VENV} (tools/frameworks_venv.sh creates it)"
    site = list(VENV.glob("lib/python*/site-packages"))
    if not site or not (site[0] / "litgpt").is_dir() or not (site[0] / "torchtitan").is_dir():
        return f"litgpt and torchtitan are not installed in {VENV} (tools/frameworks_venv.sh)"
    return None


def tables(cases: list[dict]) -> dict:
    """Each case's (2, rows, dim / 2) float32 cos and sin, by name."""
    from .harness import run_harness

    return run_harness(PYTHON, __file__, cases, "the frameworks'")


def _litgpt(case: dict):
    from litgpt.model import build_rope_cache

    rope, head = case["rope"], case["head_dim"]
    n = int(head * rope.get("partial_rotary_factor", 1.0))
    kind = rope.get("rope_type", "default")
    extra = None
    if kind == "linear":
        extra = {"factor": rope["factor"]}
    elif kind == "llama3":
        extra = {
            "factor": rope["factor"],
            "low_freq_factor": rope["low_freq_factor"],
            "high_freq_factor": rope["high_freq_factor"],
            "original_max_seq_len": rope["original_max_position_embeddings"],
        }
    elif kind == "yarn":
        extra = {
            "factor": rope["factor"],
            "beta_fast": rope.get("beta_fast") or 32.0,
            "beta_slow": rope.get("beta_slow") or 1.0,
            "original_max_seq_len": rope["original_max_position_embeddings"],
        }
        extra.update({k: rope[k] for k in ("mscale", "mscale_all_dim", "truncate") if k in rope})
    cos, sin = build_rope_cache(case["rows"], n, base=case["base"], extra_config=extra)
    return cos[:, : n // 2], sin[:, : n // 2]


def _torchtitan(case: dict):
    from torchtitan.models.common.rope import ComplexRoPE, CosSinRoPE

    rope, dim = case["rope"], case["head_dim"]
    config = dict(dim=dim, max_seq_len=case["rows"], theta=case["base"])
    kind = rope.get("rope_type", "default")
    if kind == "llama3":
        config.update(
            scaling="llama",
            scaling_factor=rope["factor"],
            low_freq_factor=rope["low_freq_factor"],
            high_freq_factor=rope["high_freq_factor"],
            original_max_position_embeddings=rope["original_max_position_embeddings"],
        )
    elif kind == "yarn":
        config.update(
            scaling="yarn",
            rope_factor=rope["factor"],
            beta_fast=rope.get("beta_fast") or 32.0,
            beta_slow=rope.get("beta_slow") or 1.0,
            original_seq_len=rope["original_max_position_embeddings"],
            truncate=rope.get("truncate", True),
        )
    if case["framework"] == "torchtitan-complex":
        cache = ComplexRoPE(ComplexRoPE.Config(**config)).cache
        return cache.real, cache.imag
    cache = CosSinRoPE(CosSinRoPE.Config(**config)).cache  # [cos | cos | sin | sin]
    return cache[:, : dim // 2], cache[:, dim : dim + dim // 2]


def main(request: str, folder: str) -> None:
    import numpy as np
    import torch

    for case in json.loads(Path(request).read_text()):
        build = _litgpt if case["framework"] == "litgpt" else _torchtitan
        cos, sin = build(case)
        planes = torch.stack((cos.float(), sin.float())).contiguous().numpy()
        np.save(Path(folder) / f"{case['name']}.npy", planes)


if __name__ == "__main__":
    main(*sys.argv[1:])
