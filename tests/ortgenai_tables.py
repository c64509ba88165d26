"""ONNX Runtime GenAI's model builder itself, for the conformance tests of --variant ort-genai:
the cos_cache and sin_cache its Model.make_rotary_embedding_caches bakes into the graph. The
builder's package puts its own folder on sys.path (it imports `builders` and `quantization` as
top-level modules) and imports transformers' model classes, so it runs in a process of its own;
this file is both sides of the call:

- run by Python (`python -P tests/ortgenai_tables.py CASES.json OUT_DIR`), it constructs the
  builder's model class from a transformers config (no weights: the constructor reads only the
  config), asks it for its caches as it would initialize the graph with them (cast to the io
  dtype, sliced to rotary dim / 2) and writes (2, rows, rotary dim / 2) float32 cos and sin to
  OUT_DIR/NAME.npy;
- imported by the tests, `tables(cases)` runs it once for many cases, `unavailable()` says why
  it cannot.

A case is a dict: name, builder (llama: LlamaModel, whose make_rope_init reads llama3 only;
mistral: MistralModel, the base Model's default, linear and yarn; gpt-oss: GPTOSSModel, which
computes its own frequencies), head_dim, rows (the config's max_position_embeddings: the
builder's cache length), base, dtype (the io dtype), and rope (transformers' rope parameters,
the config's rope_scaling).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

_BUILDERS = {  # builder: (module, class, transformers config class, architecture)
    "llama": ("llama", "LlamaModel", "LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("mistral", "MistralModel", "MistralConfig", "MistralForCausalLM"),
    "gpt-oss": ("gptoss", "GPTOSSModel", "GptOssConfig", "GptOssForCausalLM"),
}


def unavailable() -> str | None:
    for name in ("onnxruntime_genai", "onnx_ir", "onnx"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed (the test extra installs it)"
    return None


def tables(cases: list[dict]) -> dict:
    from .harness import run_harness

    return run_harness(sys.executable, __file__, cases, "ORT-GenAI's builder")


def _model(case: dict):
    import importlib

    import onnx_ir as ir
    import onnxruntime_genai.models  # noqa: F401  (puts the builder's folder on sys.path)
    import transformers

    module, name, config_class, architecture = _BUILDERS[case["builder"]]
    rope = dict(case["rope"])
    partial = rope.pop("partial_rotary_factor", None)
    head_dim, heads = case["head_dim"], 4
    config = getattr(transformers, config_class)(
        hidden_size=head_dim * heads,
        head_dim=head_dim,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        num_hidden_layers=1,
        intermediate_size=64,
        vocab_size=32,
        max_position_embeddings=case["rows"],
        rope_theta=case["base"],
        rope_scaling={"rope_type": "default", **rope},
    )
    config.architectures = [architecture]
    if partial is not None:
        config.partial_rotary_factor = partial
    io_dtype = {"float32": "FLOAT", "float16": "FLOAT16", "bfloat16": "BFLOAT16"}[case["dtype"]]
    io_dtype = getattr(ir.DataType, io_dtype)
    builder = getattr(importlib.import_module(f"builders.{module}"), name)
    return builder(config, io_dtype, io_dtype, "cpu", "", {})


def main(request: str, folder: str) -> None:
    import contextlib
    import io

    import numpy as np

    for case in json.loads(Path(request).read_text()):
        with contextlib.redirect_stdout(io.StringIO()):  # its notes on the attention op chosen
            model = _model(case)
        model.rope_attrs["save_caches"] = False  # hand the caches back, not into a graph
        cos, sin = model.make_rotary_embedding_caches()
        planes = [plane.float().numpy() for plane in (cos, sin)]
        np.save(Path(folder) / f"{case['name']}.npy", np.stack(planes))


if __name__ == "__main__":
    main(*sys.argv[1:])
