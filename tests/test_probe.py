"""pe_cli.probe and pe_cli.testing.assert_rotation: real rotary ops called on unit vectors, the
table named bit for bit from the op's own cos, the printed command rebuilding that cos, and the
parity assertion's message; the example a port copies (examples/test_port_rotation.py) runs."""

import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pe_cli
from pe_cli.testing import assert_rotation

ROOT = Path(__file__).resolve().parents[1]
POSITIONS = 64


def _llama(tmp_path):
    from transformers import LlamaConfig

    config = LlamaConfig(hidden_size=512, num_attention_heads=8, head_dim=64, num_hidden_layers=2)
    config.save_pretrained(tmp_path)
    return config, str(tmp_path / "config.json")


def _llama_op(config, sign=1.0, shift=0):
    from transformers.models.llama import modeling_llama

    embedding = modeling_llama.LlamaRotaryEmbedding(config)

    def op(x, positions):
        cos, sin = embedding(x, positions[None] + shift)
        return modeling_llama.apply_rotary_pos_emb(x, x, cos.to(x.dtype), sign * sin.to(x.dtype))[0]

    return op


def _neox_op(tmp_path):
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox import modeling_gpt_neox

    config = GPTNeoXConfig(hidden_size=256, num_attention_heads=4, rotary_pct=0.25)
    config.save_pretrained(tmp_path)
    embedding = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)

    def op(x, positions):
        cos, sin = embedding(x, positions[None])
        return modeling_gpt_neox.apply_rotary_pos_emb(x, x, cos, sin)[0]

    return op, str(tmp_path / "config.json")


def test_probe_names_transformers_bit_for_bit_and_the_command_rebuilds_its_cos(cli, tmp_path):
    config, _ = _llama(tmp_path)
    op = _llama_op(config)
    found = pe_cli.probe(op, head_dim=64, seq_len=POSITIONS)
    assert found.pairing == "half" and found.rotary_dims == list(range(64))
    assert found.findings == []
    best = found.named
    assert best.identical and best.spec.variant == "hf-rope"
    # the printed command builds the op's own cos, byte for byte
    out = tmp_path / "cos.npy"
    code, _, err = cli(*shlex.split(best.command)[1:], "-o", out)
    assert code == 0, err
    import torch
    from transformers.models.llama import modeling_llama

    x = torch.zeros(1, 1, POSITIONS, 64)
    cos, _ = modeling_llama.LlamaRotaryEmbedding(config)(x, torch.arange(POSITIONS)[None])
    assert np.array_equal(np.load(out), cos[0, :, :32].numpy())


def test_probe_reads_a_partial_rotary_op(tmp_path):
    op, path = _neox_op(tmp_path)
    found = pe_cli.probe(op, head_dim=64, seq_len=POSITIONS)
    assert found.pairing == "half" and found.rotary_dims == list(range(16))
    assert "rotary dim 16 of 64" in found.passed
    assert found.named.identical and found.named.spec.d_model == 16
    assert_rotation(op, rope_config=path, variant="hf-rope", seq_len=POSITIONS)


def test_assert_rotation_passes_the_model_and_says_what_a_broken_port_does(tmp_path):
    config, path = _llama(tmp_path)
    found = assert_rotation(_llama_op(config), rope_config=path, variant="hf-rope")
    assert found.findings == []
    with pytest.raises(AssertionError) as negated:
        assert_rotation(_llama_op(config, sign=-1.0), rope_config=path, variant="hf-rope")
    said = str(negated.value)
    assert "rotated by -theta" in said
    assert "its sine differs from hf-rope's" in said  # its cos is right, its sin is not
    assert "its cosine differs" not in said
    assert "--variant hf-rope --part cos --convention single -l 256" in said
    with pytest.raises(AssertionError, match=r"positions offset by \+3"):
        assert_rotation(_llama_op(config, shift=3), rope_config=path, variant="hf-rope")


def test_a_cos_computed_otherwise_is_placed(tmp_path):
    """A port that computes inv_freq in float64 turns by the exact table's angles within
    float32's rounding, and is not transformers' cos bit for bit: the message says where."""
    import torch

    config, path = _llama(tmp_path)

    def port(x, positions):
        inv = 1.0 / 10000 ** (torch.arange(0, 64, 2, dtype=torch.float64) / 64)
        angles = (positions[:, None].double() * inv).float()
        cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()
        halves = torch.cat([-x[..., 32:], x[..., :32]], -1)
        return x * cos + halves * sin

    assert_rotation(port, rope_config=path)
    with pytest.raises(AssertionError, match=r"its cosine differs from hf-rope's at \d+ positions"):
        assert_rotation(port, rope_config=path, variant="hf-rope")


def test_the_example_runs():
    import transformers  # the example's config is transformers'

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            str(ROOT / "examples" / "test_port_rotation.py"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout, transformers.__version__
