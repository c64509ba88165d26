"""vLLM itself, for the conformance tests of --variant vllm: its cos_sin_cache, read from the rope
module vLLM's get_rope builds. vLLM lives in a venv of its own (tools/vllm_venv.sh; its wheels
break the main environment's imports), in $PE_CLI_VLLM_VENV or else build/vllm-venv; this file
is both sides of the call:

- run by that venv's Python (`VENV/bin/python -P tests/vllm_tables.py CASES.json OUT_DIR`), it
  builds each case's rope module and writes its cache to OUT_DIR/NAME.npy;
- imported by the tests, `caches(cases)` runs it once for many cases (vLLM's import takes about
  10 s) and returns the tables, `unavailable()` says why it cannot.

A case is a dict: name, head_size, max_position, base, is_neox_style, dtype (float32, bfloat16,
float16), rope_parameters (vLLM's, without rope_theta), and optionally rotary_dim (rope_dim) and
max_model_len (the served length, which LongRoPE reads from the current vLLM config). The cache
written is [positions, cos | sin], rotary_dim / 2 columns each; for LongRoPE, the rows of its
[short cache; long cache] that its forward reads for positions 0, 1, ...: the long cache where
the module chose long factors, else the short one. bfloat16 comes back as torch's bfloat16
bits in uint16.

tests/markers.py counts this module as the engine "vllm".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("PE_CLI_VLLM_VENV") or ROOT / "build" / "vllm-venv")
PYTHON = VENV / "bin" / "python"


def unavailable() -> str | None:
    """Why vLLM cannot be called here, or None (from the files, without the 10 s import)."""
    if not PYTHON.is_file():
        return f"vLLM's venv is not in {VENV} (tools/vllm_venv.sh creates it)"
    if not any(VENV.glob("lib/python*/site-packages/vllm/model_executor/layers/rotary_embedding")):
        return f"vLLM is not installed in {VENV} (tools/vllm_venv.sh installs it)"
    return None


def caches(cases: list[dict]) -> dict:
    """Each case's cache from vLLM, by name: numpy float32 or float16, or uint16 bfloat16 bits."""
    import numpy as np

    with tempfile.TemporaryDirectory() as folder:
        request = Path(folder) / "cases.json"
        request.write_text(json.dumps(cases))
        # -P: the script's folder (tests/) must not shadow vLLM's imports
        done = subprocess.run(
            [str(PYTHON), "-P", __file__, str(request), folder],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"vLLM's harness failed:\n{done.stderr[-4000:]}")
        return {case["name"]: np.load(Path(folder) / f"{case['name']}.npy") for case in cases}


# ---------------------------------------------------------------------------------------------
# In vLLM's venv


def _cache(case: dict):
    import torch
    from vllm.model_executor.layers import rotary_embedding

    # get_rope keeps its modules by their arguments, not by the config LongRoPE reads: each case
    # builds its own, as a fresh server does
    rotary_embedding._ROPE_DICT.clear()

    parameters = {"rope_theta": case["base"], **case["rope_parameters"]}
    if case.get("rotary_dim") is not None:
        parameters["rope_dim"] = case["rotary_dim"]
    module = rotary_embedding.get_rope(
        case["head_size"],
        case["max_position"],
        is_neox_style=case["is_neox_style"],
        rope_parameters=parameters,
        dtype=getattr(torch, case["dtype"]),
    )
    if hasattr(module, "long_short_cos_sin_cache"):  # Phi3LongRoPEScaledRotaryEmbedding
        # its forward reads row position + original where it chose long factors
        original = module.original_max_position_embeddings
        both = module.long_short_cos_sin_cache
        cache = both[original:] if module.use_long_rope else both[:original]
    else:
        cache = module.cos_sin_cache
    cache = cache.contiguous()
    if cache.dtype == torch.bfloat16:
        return cache.view(torch.uint16).numpy()
    return cache.numpy()


def _main(request: str, folder: str) -> None:
    import types

    import numpy as np
    from vllm.config import VllmConfig, set_current_vllm_config

    for case in json.loads(Path(request).read_text()):
        config = VllmConfig()
        # LongRoPE reads max_model_len from the model's config; no model is loaded here
        config.model_config = types.SimpleNamespace(
            max_model_len=case.get("max_model_len") or case["max_position"]
        )
        with set_current_vllm_config(config):
            np.save(Path(folder) / f"{case['name']}.npy", _cache(case))


if __name__ == "__main__":
    _main(*sys.argv[1:])
