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

An M-RoPE case (rope_parameters with mrope_section) also has positions, its tokens' [t, h, w]
lists, and optionally mrope_positions_factor (get_rope's, default 4). Written is each token's
[cos | sin] as the module's forward rotates by them: the forward (forward_native, as on the
CPU) rotates a query whose rotated pairs are (1, 0), so that each pair comes out as (cos,
sin) exactly, and the harness checks that these are the cos and sin the forward hands its
rotation.

tests/markers.py counts this module as the engine "vllm".
"""

from __future__ import annotations

import json
import os
import sys
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
    from .harness import run_harness

    return run_harness(PYTHON, __file__, cases, "vLLM's")


# ---------------------------------------------------------------------------------------------
# In vLLM's venv


def _module(case: dict):
    import torch
    from vllm.model_executor.layers import rotary_embedding

    # get_rope keeps its modules by their arguments, not by the config LongRoPE reads: each case
    # builds its own, as a fresh server does
    rotary_embedding._ROPE_DICT.clear()

    parameters = {"rope_theta": case["base"], **case["rope_parameters"]}
    if case.get("rotary_dim") is not None:
        parameters["rope_dim"] = case["rotary_dim"]
    return rotary_embedding.get_rope(
        case["head_size"],
        case["max_position"],
        is_neox_style=case["is_neox_style"],
        rope_parameters=parameters,
        dtype=getattr(torch, case["dtype"]),
        mrope_positions_factor=case.get("mrope_positions_factor", 4),
    )


def _bits(table):
    import torch

    table = table.contiguous()
    if table.dtype == torch.bfloat16:
        return table.view(torch.uint16).numpy()
    return table.numpy()


def _mrope_table(case: dict):
    """Each token's [cos | sin], from the M-RoPE module's forward."""
    import torch

    module = _module(case)
    positions = torch.tensor(case["positions"], dtype=torch.int64)  # (3, tokens)
    tokens, rotary, neox = positions.shape[1], module.rotary_dim, case["is_neox_style"]
    first, second = (
        (slice(0, rotary // 2), slice(rotary // 2, rotary))
        if neox
        else (slice(0, rotary, 2), slice(1, rotary, 2))
    )
    query = torch.zeros(tokens, case["head_size"], dtype=getattr(torch, case["dtype"]))
    query[:, first] = 1  # each pair (1, 0): (1 cos - 0 sin, 0 cos + 1 sin) = (cos, sin)
    handed = []
    rotate = module.apply_rotary_emb.forward_native
    module.apply_rotary_emb.forward_native = lambda x, cos, sin: (
        handed.append((cos, sin)),
        rotate(x, cos, sin),
    )[1]
    rotated, _ = module(positions, query.clone(), query.clone())
    cos, sin = rotated[:, first], rotated[:, second]
    for mine, theirs in zip((cos, sin), handed[0]):
        assert torch.equal(mine, theirs.reshape(mine.shape)), case["name"]
    return _bits(torch.cat((cos, sin), dim=-1))


def _cache(case: dict):
    if "positions" in case:
        return _mrope_table(case)
    module = _module(case)
    if hasattr(module, "long_short_cos_sin_cache"):  # Phi3LongRoPEScaledRotaryEmbedding
        # its forward reads row position + original where it chose long factors
        original = module.original_max_position_embeddings
        both = module.long_short_cos_sin_cache
        cache = both[original:] if module.use_long_rope else both[:original]
    else:
        cache = module.cos_sin_cache
    return _bits(cache)


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
