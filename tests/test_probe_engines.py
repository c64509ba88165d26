"""Engines' own rotary ops, probed: MLX's mx.fast.rope (traditional and not) and ggml's
ggml_rope_ext (NORM and NEOX, through tests/ggml.py). pe_cli.probe names each one's pairing and
table bit for bit, and the generate command it prints rebuilds the engine's cos."""

import shlex

import numpy as np
import pytest

import pe_cli

POSITIONS = 48
HEAD_DIM = 64


@pytest.fixture(scope="module")
def ggml():
    from . import ggml

    why = ggml.unavailable()
    if why:
        pytest.skip(why)
    return ggml


def _mlx_op(traditional: bool, dims: int = HEAD_DIM, base: float = 10000.0):
    import mlx.core as mx
    import torch

    def op(x, positions):
        turned = mx.fast.rope(
            mx.array(x.numpy()), dims, traditional=traditional, base=base, scale=1.0, offset=0
        )
        return torch.from_numpy(np.array(turned))

    return op


def _ggml_op(ggml, mode: str, n_dims: int = HEAD_DIM, **arguments):
    import torch

    def op(x, positions):
        heads = [
            ggml.rope_ext(x[0, h].numpy(), positions.numpy(), n_dims, ggml.MODES[mode], **arguments)
            for h in range(x.shape[1])
        ]
        return torch.from_numpy(np.stack(heads))[None]

    return op


def _rebuilds(found, cli, tmp_path):
    """The printed command, run, writes the engine's cos: each pair's first column is the cos
    read back from the op."""
    from pe_cli.families import rotary_pairs

    out = tmp_path / "cos.npy"
    code, _, err = cli(*shlex.split(found.named.command)[1:], "-o", out)
    assert code == 0, err
    written = np.load(out)
    cos = found.reading.fit.c.real
    if written.shape[1] != cos.shape[1]:  # laid out in pairs
        first, second = rotary_pairs(written.shape[1], found.named.spec.convention)
        assert np.array_equal(written[:, first], written[:, second])
        written = written[:, first]
    assert written.dtype == np.float32 and np.array_equal(written, cos)


@pytest.mark.parametrize("traditional, pairing", [(False, "half"), (True, "interleaved")])
def test_mlx_fast_rope(cli, tmp_path, traditional, pairing):
    pytest.importorskip("mlx.core")
    found = pe_cli.probe(_mlx_op(traditional), head_dim=HEAD_DIM, seq_len=POSITIONS)
    assert found.pairing == pairing and found.rotary_dims == list(range(HEAD_DIM))
    assert found.named.identical and found.named.spec.variant == "mlx"
    assert found.rebuilt.identical and found.findings == []
    _rebuilds(found, cli, tmp_path)


def test_mlx_partial_dims():
    pytest.importorskip("mlx.core")
    found = pe_cli.probe(_mlx_op(False, dims=32), head_dim=HEAD_DIM, seq_len=POSITIONS)
    assert found.pairing == "half" and found.rotary_dims == list(range(32))
    assert "rotary dim 32 of 64" in found.passed
    assert found.named.identical and found.named.spec.d_model == 32


@pytest.mark.parametrize("mode", ["half", "interleaved"])
def test_ggml_rope(ggml, cli, tmp_path, mode):
    found = pe_cli.probe(_ggml_op(ggml, mode), head_dim=HEAD_DIM, seq_len=POSITIONS)
    assert found.pairing == mode and found.rotary_dims == list(range(HEAD_DIM))
    assert found.named.identical and found.named.spec.variant == "llama.cpp"
    assert found.rebuilt.identical and found.findings == []
    _rebuilds(found, cli, tmp_path)


def test_ggml_attention_factor_is_a_scale(ggml):
    """ggml multiplies cos and sin by attn_factor (YaRN's mscale): read back as a scale."""
    found = pe_cli.probe(
        _ggml_op(ggml, "half", attn_factor=1.25), head_dim=HEAD_DIM, seq_len=POSITIONS
    )
    assert found.codes() == ["scale"] and abs(found.reading.fit.scale - 1.25) < 1e-6
    plain = pe_cli.probe(_ggml_op(ggml, "half"), head_dim=HEAD_DIM, seq_len=POSITIONS)
    assert "scale" not in plain.codes()
