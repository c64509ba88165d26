"""Each training framework's own Llama 3.1 rotary table (llama3 scaling, theta 500000, head dim
128) against transformers' own and against the exact one: docs/variants.md's table.

    python benchmarks/frameworks.py [--rows N]

Runs the frameworks themselves, as the conformance tests do: transformers' LlamaRotaryEmbedding,
megatron-core's RotaryEmbedding and llama-models' precompute_freqs_cis in this process,
litgpt's build_rope_cache and torchtitan's ComplexRoPE in build/frameworks-venv
(tools/frameworks_venv.sh), keras-hub's LlamaRotaryEmbedding on Keras's torch backend and
ORT-GenAI's model builder in processes of their own (keras-hub on its JAX backend too, whose
XLA sin and cos pe-cli does not reproduce). Prints, for cos and sin (float32, one
column per frequency), the largest |difference| from transformers' table and the share of
elements bit-equal to it, then the largest |error| from the exact values (pe-cli's exact
table in float64) and the share bit-equal to the exact table rounded once to float32. A
framework that cannot be run here is listed with the reason.
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pe_cli.engine import build  # noqa: E402
from pe_cli.spec import TableSpec  # noqa: E402
from tests import framework_tables, kerashub_tables, ortgenai_tables  # noqa: E402
from tests.rope_models import LLAMA3  # noqa: E402

HEAD, THETA = 128, 500000.0


def _transformers(rows):
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        hidden_size=HEAD * 32,
        num_attention_heads=32,
        max_position_embeddings=131072,
        rope_theta=THETA,
        rope_scaling=dict(LLAMA3),  # transformers adds rope_theta to the dict it is given
    )
    module = LlamaRotaryEmbedding(config)
    positions = torch.arange(rows)[None, :]
    cos, sin = module(torch.zeros(1, rows, HEAD), positions)
    return cos[0, :, : HEAD // 2].numpy(), sin[0, :, : HEAD // 2].numpy()


def _megatron(rows):
    from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding

    torch.cuda.current_device = lambda: "cpu"  # its buffers go to the current device
    module = RotaryEmbedding(
        HEAD,
        1.0,
        rotary_base=THETA,
        rope_scaling=True,
        rope_scaling_factor=LLAMA3["factor"],
        use_cpu_initialization=True,
    )
    angles = module.get_emb(rows, 0)[:, 0, 0, : HEAD // 2]
    return torch.cos(angles).numpy(), torch.sin(angles).numpy()


def _llama_models(rows):
    from llama_models.llama3.model import precompute_freqs_cis

    freqs_cis = precompute_freqs_cis(HEAD, rows, THETA, True)
    return freqs_cis.real.numpy(), freqs_cis.imag.numpy()


def _harnessed(module, cases):
    why = module.unavailable()
    if why:
        raise RuntimeError(why)
    return module.tables(cases)


def _venv_frameworks(rows):
    case = dict(head_dim=HEAD, rows=rows, base=THETA, rope=LLAMA3)
    cases = [dict(case, name=name, framework=name) for name in ("litgpt", "torchtitan-complex")]
    found = _harnessed(framework_tables, cases)
    return found["litgpt"], found["torchtitan-complex"]


def _keras_hub(rows, backend="torch"):
    case = dict(name="keras", head_dim=HEAD, rows=rows, base=THETA, rope=LLAMA3, dtype="float32")
    why = kerashub_tables.unavailable()
    if why:
        raise RuntimeError(why)
    return kerashub_tables.tables([case], backend)["keras"]


def _ort_genai(rows):
    case = dict(name="ort", builder="llama", head_dim=HEAD, rows=rows, base=THETA, rope=LLAMA3)
    return _harnessed(ortgenai_tables, [dict(case, dtype="float32")])["ort"]


def _exact(rows, part, dtype):
    spec = TableSpec(
        family="rope",
        variant="exact",
        d_model=HEAD,
        seq_len=rows,
        base=THETA,
        rope=LLAMA3,
        convention="single",
        dtype=dtype,
        part=part,
    )
    return build(spec).float64()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=131072)
    rows = parser.parse_args().rows
    warnings.simplefilter("ignore")
    tables = {"transformers": _transformers(rows)}
    failed = {}
    for name, run in (
        ("megatron-core", _megatron),
        ("llama-models", _llama_models),
        ("litgpt, torchtitan", _venv_frameworks),
        ("keras-hub", _keras_hub),
        ("keras-hub, JAX backend", lambda rows: _keras_hub(rows, "jax")),
        ("ORT-GenAI", _ort_genai),
    ):
        try:
            found = run(rows)
        except Exception as e:  # a framework that cannot run here is reported, not fatal
            failed[name] = f"{type(e).__name__}: {str(e).splitlines()[-1] if str(e) else ''}"
            continue
        if name == "litgpt, torchtitan":
            tables["litgpt"], tables["torchtitan"] = found
        else:
            tables[name] = found
    parts = ("cos", "sin")
    exact = {p: _exact(rows, p, "float64") for p in parts}
    rounded = {p: _exact(rows, p, "float32").astype(np.float32) for p in parts}
    print(f"Llama 3.1 (llama3, theta {THETA:g}, head dim {HEAD}), {rows} positions, float32")
    print("framework: vs transformers max |diff| cos / sin (bit-equal cos / sin);")
    print("           vs exact max |err| cos / sin (bit-equal to exact in float32 cos / sin)")
    hf = tables["transformers"]
    for name, planes in tables.items():
        planes = [np.ascontiguousarray(p, dtype=np.float32) for p in planes]
        versus_hf = [float(np.abs(p.astype(np.float64) - h).max()) for p, h in zip(planes, hf)]
        equal_hf = [
            float(np.mean(p.view(np.uint32) == h.view(np.uint32))) for p, h in zip(planes, hf)
        ]
        error = [float(np.abs(p - exact[q]).max()) for p, q in zip(planes, parts)]
        equal = [float(np.mean(p == rounded[q])) for p, q in zip(planes, parts)]
        print(
            f"{name}: {versus_hf[0]:.3g} / {versus_hf[1]:.3g} "
            f"({100 * equal_hf[0]:.2f}% / {100 * equal_hf[1]:.2f}%); "
            f"{error[0]:.3g} / {error[1]:.3g} ({100 * equal[0]:.2f}% / {100 * equal[1]:.2f}%)"
        )
    for name, why in failed.items():
        print(f"{name}: not run ({why})")


if __name__ == "__main__":
    main()
