"""vLLM's rotary op probed by pe_cli.probe in vLLM's own process: the op is called on unit
vectors as vLLM's attention calls it (positions (tokens,), query (tokens, heads x head_size)),
and pe-cli, imported there from this checkout (PYTHONPATH: its typer, rich, numpy and
safetensors import in vLLM's venv), reads back what it applied. Both sides of the call, as
tests/vllm_tables.py:

- run by that venv's Python (`VENV/bin/python -P tests/vllm_probe.py CASES.json OUT_DIR`), it
  writes each case's op's own cos (positions x pairs, float64) to OUT_DIR/NAME.npy and the
  report's JSON to OUT_DIR/NAME.json;
- imported by the tests, `probes(cases)` runs it once for all cases.

A case: name, head_size, max_position, base, is_neox_style, dtype, rope_parameters (vLLM's,
without rope_theta), seq_len.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def probes(cases: list[dict]) -> dict:
    """Each case's (op's cos, report JSON) from vLLM's process, by name."""
    from .harness import run_harness
    from .vllm_tables import PYTHON

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return run_harness(PYTHON, __file__, cases, "vLLM's probe", env=env, reports=True)


# ---------------------------------------------------------------------------------------------
# In vLLM's venv


def _op(case: dict):
    import torch
    from vllm.model_executor.layers import rotary_embedding

    rotary_embedding._ROPE_DICT.clear()
    module = rotary_embedding.get_rope(
        case["head_size"],
        case["max_position"],
        is_neox_style=case["is_neox_style"],
        rope_parameters={"rope_theta": case["base"], **case["rope_parameters"]},
        dtype=getattr(torch, case["dtype"]),
    )

    def op(x, positions):  # x (1, heads, tokens, head_size), probe's layout
        heads, tokens, size = x.shape[1:]
        query = x[0].permute(1, 0, 2).reshape(tokens, heads * size).contiguous()
        rotated, _ = module(positions, query, query.clone())
        return rotated.reshape(tokens, heads, size).permute(1, 0, 2)[None]

    op.__qualname__ = f"vLLM {type(module).__name__}"
    return op


def _main(request: str, folder: str) -> None:
    import numpy as np
    from vllm.config import VllmConfig, set_current_vllm_config

    import pe_cli

    for case in json.loads(Path(request).read_text()):
        with set_current_vllm_config(VllmConfig()):
            found = pe_cli.probe(
                _op(case), head_dim=case["head_size"], seq_len=case["seq_len"], dtype=case["dtype"]
            )
        np.save(Path(folder) / f"{case['name']}.npy", found.reading.fit.c.real.astype(np.float64))
        said = found.to_json()
        said["pe_cli"] = pe_cli.__file__
        (Path(folder) / f"{case['name']}.json").write_text(json.dumps(said))


if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("PYTHONPATH", ""))
    _main(*sys.argv[1:])
