"""A port's parity test for its rotary op, with pe_cli.testing.assert_rotation.

Run it with `python -m pytest examples/test_port_rotation.py`. The port here is a Llama-style
rotary step written from the RoFormer paper, as a port's author would; the config is a small
Llama's, as transformers writes it.
"""

import pytest
import torch

from pe_cli.testing import assert_rotation


def port_rope(x, positions, theta=10000.0, negate=False):
    """Our port: q in (batch, heads, positions, head_dim), turned in rotate_half pairs."""
    dim = x.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)
    angles = positions[:, None].float() * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    halves = torch.cat([-x[..., dim // 2 :], x[..., : dim // 2]], dim=-1)
    return x * cos + halves * (-sin if negate else sin)


@pytest.fixture
def llama_config(tmp_path):
    from transformers import LlamaConfig

    LlamaConfig(hidden_size=512, num_attention_heads=8, head_dim=64).save_pretrained(tmp_path)
    return tmp_path / "config.json"


def test_port_applies_llamas_rotation(llama_config):
    # the exact table's angles, within the rounding of float32
    assert_rotation(port_rope, rope_config=llama_config)


def test_port_is_transformers_bit_for_bit(llama_config):
    # transformers' own cos and sin, bit for bit: this port computes them as transformers does
    assert_rotation(port_rope, rope_config=llama_config, variant="hf-rope")


def test_a_sign_slip_is_caught(llama_config):
    with pytest.raises(AssertionError, match="rotated by -theta"):
        assert_rotation(
            lambda x, p: port_rope(x, p, negate=True), rope_config=llama_config, variant="hf-rope"
        )
