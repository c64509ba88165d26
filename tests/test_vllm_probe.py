"""vLLM's RotaryEmbedding probed (issue 41): its op called by pe_cli.probe on unit vectors in
vLLM's own process (tests/vllm_probe.py), with is_neox_style True (half pairs) and False
(interleaved). pe-cli names the pairing, the dims that turn and the table, bit for bit, finds
nothing wrong, and the printed command rebuilds the op's own cos."""

import shlex

import numpy as np
import pytest

PAIRINGS = {"half": True, "interleaved": False}
# name: head size, theta, rope parameters (vLLM's), the dims that turn, dtype
MODELS = {
    "default": (64, 10000.0, {}, 64, "float32"),
    "llama3.1": (
        128,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        128,
        "float32",
    ),
    "partial": (80, 10000.0, {"partial_rotary_factor": 0.4}, 32, "float32"),
    "default-bfloat16": (64, 10000.0, {}, 64, "bfloat16"),
}
SEQ_LEN = 96


def _cases():
    for name, (head, theta, rope, _, dtype) in MODELS.items():
        for pairing, neox in PAIRINGS.items():
            yield {
                "name": f"{name}-{pairing}",
                "head_size": head,
                "max_position": 8192,
                "base": theta,
                "is_neox_style": neox,
                "dtype": dtype,
                "rope_parameters": rope,
                "seq_len": SEQ_LEN,
            }


@pytest.fixture(scope="session")
def vllm_probes():
    """Every case probed in one vLLM process (its import alone takes about 10 s)."""
    from . import vllm_probe, vllm_tables

    why = vllm_tables.unavailable()
    if why:
        pytest.skip(why)
    return vllm_probe.probes(list(_cases()))


@pytest.mark.parametrize("pairing", sorted(PAIRINGS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_vllm_rotary_embedding_is_read_bit_for_bit(vllm_probes, cli, tmp_path, name, pairing):
    cos, said = vllm_probes[f"{name}-{pairing}"]
    turning = MODELS[name][3]
    assert said["pe_cli"].startswith(str(__import__("pathlib").Path(__file__).parents[1]))
    assert said["pairing"] == pairing
    assert len(said["rotary_dims"]) == turning
    assert said["findings"] == []
    assert said["exact"] and said["rebuilt"]["identical"], said["rebuilt"]
    # the printed command rebuilds the op's own cos, bit for bit
    assert said["command"] is not None
    words = shlex.split(said["command"])
    out = tmp_path / "cos.safetensors"  # bfloat16 too (npy has none)
    code, _, err = cli(*words[1:], "-o", str(out))
    assert code == 0, err
    import torch
    from safetensors.torch import load_file

    table = next(iter(load_file(out).values())).to(torch.float64).numpy()
    assert table.shape == cos.shape, said["command"]
    assert np.array_equal(table, cos)
