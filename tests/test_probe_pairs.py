"""Models whose rotary embedding gives one column per pair (a complex freqs_cis, or cos and sin
of half the head): the table does not say which dims the attention pairs, their apply function
does. Each is probed through transformers' own op: the model view's pairing is the one the op
applies (Llama 4 and DeepSeek-V2 turn view_as_complex's interleaved pairs, the privacy filter
x[..., ::2] with x[..., 1::2], gpt-oss its two halves), and a copy in the other pairing is
caught."""

import importlib
import json
import os

import pytest

import pe_cli
from pe_cli.testing import assert_rotation

pytest.importorskip("transformers", reason="transformers is not installed")

POSITIONS = 48
SMALL = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2, "head_dim": 64}
# model: (config class, its settings, rotary embedding class, the pairing its apply turns)
CASES = {
    "gpt_oss": ("GptOssConfig", SMALL, "GptOssRotaryEmbedding", "half"),
    "llama4": ("Llama4TextConfig", SMALL, "Llama4TextRotaryEmbedding", "interleaved"),
    "deepseek_v2": (
        "DeepseekV2Config",
        {**SMALL, "q_lora_rank": None, "kv_lora_rank": 64, "qk_rope_head_dim": 64,
         "qk_nope_head_dim": 32, "v_head_dim": 32, "first_k_dense_replace": 2},
        "DeepseekV2RotaryEmbedding", "interleaved",
    ),
    "openai_privacy_filter": (
        "OpenAIPrivacyFilterConfig", SMALL, "OpenAIPrivacyFilterRotaryEmbedding", "interleaved",
    ),
}  # fmt: skip


def _op(model: str, tmp_path, other: bool = False):
    """The model's rotary step as its attention takes it (x as (batch, heads, positions, dims)),
    and its config.json; `other`: the same angles turned in the other pairing."""
    import torch

    config_class, settings, embedding_class, pairing = CASES[model]
    modeling = importlib.import_module(f"transformers.models.{model}.modeling_{model}")
    config = getattr(importlib.import_module(f"transformers.models.{model}"), config_class)(
        **settings
    )
    config.save_pretrained(tmp_path)
    embedding = getattr(modeling, embedding_class)(config)

    def op(x, positions):
        out = embedding(x, positions[None])
        if isinstance(out, torch.Tensor):  # a complex freqs_cis (batch, positions, pairs)
            cos, sin = out.real, out.imag
        else:
            cos, sin = out
        if other:
            return _turned(x, cos[:, None], sin[:, None], pairing != "interleaved")
        if model == "llama4":  # it takes (batch, positions, heads, dims)
            return modeling.apply_rotary_emb(x.transpose(1, 2), x.transpose(1, 2), out)[
                0
            ].transpose(1, 2)
        if model == "deepseek_v2":
            return modeling.apply_rotary_emb(x, x, out)[0]
        return modeling.apply_rotary_pos_emb(x, x, cos, sin)[0]

    return op, os.fspath(tmp_path / "config.json")


def _turned(x, cos, sin, interleaved: bool):
    """x turned by one angle per pair, in interleaved pairs (2i, 2i + 1) or half pairs."""
    import torch

    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, b * cos + a * sin], -1).flatten(-2)
    a, b = x.chunk(2, -1)
    return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)


@pytest.mark.parametrize("model", sorted(CASES))
def test_the_model_view_says_the_pairing_its_op_applies(model, cli, tmp_path):
    op, path = _op(model, tmp_path)
    found = pe_cli.probe(op, head_dim=64, seq_len=POSITIONS)
    pairing = CASES[model][3]
    assert found.pairing == pairing and len(found.rotary_dims) == 64
    assert_rotation(op, rope_config=path, variant="hf-rope", layer=0, seq_len=POSITIONS)
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 16)
    assert code == 0, err
    (treatment,) = json.loads(out)["model"]["treatments"].values()
    assert treatment["applied_pairing"] == pairing and treatment["table_pairing"] == "single"
    # gpt-oss and the privacy filter fold YaRN's attention factor into cos and sin: the table
    # named holds it, so it is no finding, and the table is named bit for bit
    assert found.findings == [] and found.named.identical and found.rebuilt.identical
    assert (abs(found.reading.fit.scale - 1) > 0.3) == (treatment["attention_factor"] != 1)
    code, out, err = cli("show", "--rope-config", path, "-l", 16)
    text = " ".join(out.decode().split())
    assert f"in {pairing} pairs (its table: one column per pair)" in text
    assert "single pairs" not in text


@pytest.mark.parametrize("model", sorted(CASES))
def test_the_other_pairing_is_caught(model, tmp_path):
    op, path = _op(model, tmp_path, other=True)
    with pytest.raises(AssertionError) as caught:
        assert_rotation(op, rope_config=path, variant="hf-rope", layer=0, seq_len=POSITIONS)
    assert f"applies {CASES[model][3]} pairing" in str(caught.value)


def test_a_port_that_drops_yarns_attention_factor_is_caught(tmp_path):
    """gpt-oss's YaRN scales cos and sin by its attention factor (1.3466 at factor 32): a port
    that turns by the same angles unscaled is said to, against the model's layer; with the
    factor folded in twice, the extra factor is a finding on its own too."""
    op, path = _op("gpt_oss", tmp_path)

    def unscaled(x, positions):
        return _scaled(op, x, positions, None)

    def twice(x, positions):
        return _scaled(op, x, positions, 2)

    with pytest.raises(AssertionError) as caught:
        assert_rotation(unscaled, rope_config=path, variant="hf-rope", layer=0, seq_len=POSITIONS)
    assert "scaled by 1; gpt_oss layer 0's attention factor is 1.346574" in str(caught.value)
    found = pe_cli.probe(twice, head_dim=64, seq_len=POSITIONS)
    assert found.codes() == ["scale"]


def _scaled(op, x, positions, power):
    """The op's rotation with its scale taken out (power None) or applied `power` times."""
    import torch

    turned = op(x, positions)
    norm = torch.linalg.vector_norm(turned[0, 0], dim=-1)[0]  # e_0's length after: the factor
    return turned / norm if power is None else turned * norm ** (power - 1)
