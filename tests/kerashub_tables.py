"""keras-hub itself on Keras's torch backend, for the conformance tests of --variant keras-hub:
the cos and sin its RotaryEmbedding and LlamaRotaryEmbedding layers compute. Keras chooses its
backend once, at import (KERAS_BACKEND), and the test process may hold another one, so this file
is both sides of the call:

- run by Python with KERAS_BACKEND=torch (`python -P tests/kerashub_tables.py CASES.json
  OUT_DIR`), it builds each case's layer and writes (2, rows, d / 2) float32 cos and sin to
  OUT_DIR/NAME.npy, read back from the layer's compute dtype;
- imported by the tests, `tables(cases)` runs it once for many cases, `unavailable()` says why
  it cannot.

A case is a dict: name, head_dim, rows, base, dtype, and rope (transformers' rope parameters,
turned here into the layer's arguments as keras-hub's checkpoint converters do).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path


def unavailable() -> str | None:
    for name in ("keras", "keras_hub"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed (pip install --no-deps keras-hub)"
    return None


def tables(cases: list[dict], backend: str = "torch") -> dict:
    """Each case's cos and sin on Keras's `backend` (torch, the one reproduced; jax for
    benchmarks/frameworks.py's figures)."""
    from .harness import run_harness

    env = {**os.environ, "KERAS_BACKEND": backend}
    return run_harness(sys.executable, __file__, cases, "keras-hub's", env)


def _layer(case: dict):
    from keras_hub.src.layers.modeling.rotary_embedding import RotaryEmbedding
    from keras_hub.src.models.llama.llama_rotary_embedding import LlamaRotaryEmbedding

    rope, base, dtype = case["rope"], case["base"], case["dtype"]
    kind = rope.get("rope_type", "default")
    if kind == "llama3":
        return LlamaRotaryEmbedding(
            max_wavelength=base,
            frequency_adjustment_factor=rope["factor"],
            low_freq_factor=rope["low_freq_factor"],
            high_freq_factor=rope["high_freq_factor"],
            pretraining_sequence_length=rope["original_max_position_embeddings"],
            dtype=dtype,
        )
    if kind == "yarn":
        return RotaryEmbedding(
            max_wavelength=base,
            scaling_factor=rope["factor"],
            rope_type="yarn",
            beta_fast=rope.get("beta_fast") or 32.0,
            beta_slow=rope.get("beta_slow") or 1.0,
            original_max_position_embeddings=rope["original_max_position_embeddings"],
            truncate=rope.get("truncate", True),
            dtype=dtype,
        )
    if kind in ("linear", "dynamic"):
        return RotaryEmbedding(
            max_wavelength=base, scaling_factor=rope["factor"], rope_type=kind, dtype=dtype
        )
    return RotaryEmbedding(max_wavelength=base, dtype=dtype)


def main(request: str, folder: str) -> None:
    import keras
    import numpy as np

    assert keras.backend.backend() == os.environ["KERAS_BACKEND"], keras.backend.backend()
    for case in json.loads(Path(request).read_text()):
        layer, half = _layer(case), case["head_dim"] // 2
        inputs = keras.ops.zeros((1, case["rows"], case["head_dim"]), dtype=case["dtype"])
        planes = [
            keras.ops.convert_to_numpy(keras.ops.cast(plane, "float32"))[0, :, :half]
            for plane in layer._compute_cos_sin_embedding(inputs)
        ]
        np.save(Path(folder) / f"{case['name']}.npy", np.stack(planes))


if __name__ == "__main__":
    main(*sys.argv[1:])
