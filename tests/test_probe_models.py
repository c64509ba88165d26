"""transformers' own rotary ops, probed: each model's rotary embedding and apply function, called
as its attention calls them, read back by pe_cli.probe (its pairing, the dims that turn, the
table bit for bit) and held by assert_rotation to what `--rope-config` says its layer applies;
a copy of each with the other pairing is caught."""

import importlib
import os
from dataclasses import dataclass, field

import pytest

import pe_cli
from pe_cli.testing import assert_rotation

POSITIONS = 48


@dataclass(frozen=True)
class Case:
    model: str  # transformers' module name
    config: str  # its config class
    settings: dict
    embedding: str  # its rotary embedding class
    head_dim: int  # the dims the op is handed
    pairing: str
    turning: int  # the dims that turn
    apply: str = "apply_rotary_pos_emb"
    split: bool = False  # its attention hands apply only the rotary dims (Phi)
    layer_type: str | None = None  # Gemma 4's rotary embedding takes the layer's type
    layer: int | None = None
    rope_type: str = "default"  # the rope type of the table its angles are named
    extra: dict = field(default_factory=dict)


SMALL = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2}
CASES = {
    "llama": Case("llama", "LlamaConfig", {**SMALL, "head_dim": 64}, "LlamaRotaryEmbedding", 64,
                  "half", 64),
    "cohere": Case("cohere", "CohereConfig", SMALL, "CohereRotaryEmbedding", 64, "interleaved", 64),
    "gpt_neox": Case("gpt_neox", "GPTNeoXConfig", {**SMALL, "rotary_pct": 0.25},
                     "GPTNeoXRotaryEmbedding", 64, "half", 16),
    "phi": Case("phi", "PhiConfig", {**SMALL, "partial_rotary_factor": 0.5}, "PhiRotaryEmbedding",
                64, "half", 32, split=True),
    "glm": Case("glm", "GlmConfig", {**SMALL, "head_dim": 64}, "GlmRotaryEmbedding", 64,
                "interleaved", 32),
    "glm4": Case("glm4", "Glm4Config", {**SMALL, "head_dim": 64}, "Glm4RotaryEmbedding", 64,
                 "interleaved", 32),
    "helium": Case("helium", "HeliumConfig", {**SMALL, "head_dim": 64}, "HeliumRotaryEmbedding",
                   64, "interleaved", 64),
    "moonshine": Case("moonshine", "MoonshineConfig",
                      {"hidden_size": 256, "decoder_num_attention_heads": 4,
                       "encoder_num_attention_heads": 4, "encoder_num_hidden_layers": 2,
                       "decoder_num_hidden_layers": 2},
                      "MoonshineRotaryEmbedding", 64, "interleaved", 58),
    "ernie4_5": Case("ernie4_5", "Ernie4_5Config", {**SMALL, "head_dim": 64},
                     "Ernie4_5RotaryEmbedding", 64, "interleaved", 64),
    "deepseek_v3": Case(
        "deepseek_v3", "DeepseekV3Config",
        {**SMALL, "q_lora_rank": None, "kv_lora_rank": 64, "qk_rope_head_dim": 32,
         "qk_nope_head_dim": 32, "v_head_dim": 32, "first_k_dense_replace": 2,
         "n_routed_experts": 4},
        "DeepseekV3RotaryEmbedding", 32, "interleaved", 32,
        apply="apply_rotary_pos_emb_interleave",
    ),
    "gemma4-full": Case(
        "gemma4", "Gemma4TextConfig",
        {**SMALL, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64,
         "global_head_dim": 128, "num_hidden_layers": 6},
        "Gemma4TextRotaryEmbedding", 128, "half", 32, layer_type="full_attention", layer=5,
        rope_type="proportional",
    ),
    "gemma4-sliding": Case(
        "gemma4", "Gemma4TextConfig",
        {**SMALL, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64,
         "global_head_dim": 128, "num_hidden_layers": 6},
        "Gemma4TextRotaryEmbedding", 64, "half", 64, layer_type="sliding_attention", layer=0,
    ),
}  # fmt: skip


def _op(case: Case, tmp_path, pairing=None):
    """The model's rotary step as its attention takes it, and the path of its config.json;
    with `pairing`, a broken copy that applies the model's table in that pairing instead."""
    modeling = importlib.import_module(f"transformers.models.{case.model}.modeling_{case.model}")
    configs = importlib.import_module(f"transformers.models.{case.model}")
    config = getattr(configs, case.config)(**case.settings)
    config.save_pretrained(tmp_path)
    embedding = getattr(modeling, case.embedding)(config)
    apply = getattr(modeling, case.apply)

    def op(x, positions):
        import torch

        args = (case.layer_type,) if case.layer_type else ()
        cos, sin = embedding(x, positions[None], *args)
        if pairing is not None:
            return _other(x, cos, sin, case)
        if case.model == "gemma4":
            return apply(x, cos, sin)
        if case.split:
            rotary = cos.shape[-1]
            turned = apply(x[..., :rotary], x[..., :rotary], cos, sin)[0]
            return torch.cat([turned, x[..., rotary:]], dim=-1)
        return apply(x, x, cos, sin)[0]

    return op, os.fspath(tmp_path / "config.json")


def _other(x, cos, sin, case: Case):
    """The model's table applied in the other pairing: a port that got the pairing wrong. The
    frequency of each pair is read from the table as the model lays it out (each column twice:
    in its two halves, or side by side)."""
    import torch

    rotary = cos.shape[-1]
    half = rotary // 2
    if torch.equal(cos[..., :half], cos[..., half:]):
        c, s = cos[..., :half], sin[..., :half]
    else:
        c, s = cos[..., 0::2], sin[..., 0::2]
    part = x[..., :rotary]
    if case.pairing == "half":  # the model turns (i, i + R/2): turn (2i, 2i + 1) instead
        c, s = (torch.repeat_interleave(t, 2, -1)[:, None] for t in (c, s))
        turned = torch.stack([-part[..., 1::2], part[..., 0::2]], -1).flatten(-2)
    else:  # the model turns (2i, 2i + 1): turn (i, i + R/2) instead
        c, s = (torch.cat([t, t], -1)[:, None] for t in (c, s))
        turned = torch.cat([-part[..., half:], part[..., :half]], -1)
    return torch.cat([part * c + turned * s, x[..., rotary:]], -1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_probe_reads_each_models_op(name, tmp_path):
    case = CASES[name]
    op, path = _op(case, tmp_path)
    found = pe_cli.probe(op, head_dim=case.head_dim, seq_len=POSITIONS)
    assert found.pairing == case.pairing
    assert len(found.rotary_dims) == case.turning
    assert found.findings == []
    assert found.named.identical and found.named.spec.variant == "hf-rope"
    assert dict(found.named.spec.rope).get("rope_type", "default") == case.rope_type
    assert found.rebuilt.identical
    assert_rotation(op, rope_config=path, variant="hf-rope", layer=case.layer, seq_len=POSITIONS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_other_pairing_is_caught(name, tmp_path):
    case = CASES[name]
    op, path = _op(case, tmp_path, pairing="other")
    with pytest.raises(AssertionError) as caught:
        assert_rotation(
            op, rope_config=path, variant="hf-rope", layer=case.layer, seq_len=POSITIONS
        )
    assert f"applies {case.pairing} pairing" in str(caught.value)


@pytest.mark.parametrize("denominator", [128, 32])
def test_gemma4_proportional_against_a_partial_rotary_port(tmp_path, denominator):
    """Gemma 4's full attention turns 16 frequency pairs of 128 dims, (i, i + 64), the rest at
    zero frequency. A port that treats it as partial rotary turns dims 0-31 as (i, i + 16):
    with the model's frequencies (coreai-models #66: "only the dim pairing differs") or with
    the partial denominator too. Both are caught, by the dims they turn; the pairing is right."""
    import torch

    from pe_cli.analysis.rotation_report import expected_of

    case = CASES["gemma4-full"]
    _, path = _op(case, tmp_path)
    theta = 1_000_000.0
    rates = theta ** (-torch.arange(0, 32, 2, dtype=torch.float32) / denominator)

    def port(x, positions):
        angles = positions[:, None].float() * rates
        cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
        part = x[..., :32]
        turned = torch.cat([-part[..., 16:], part[..., :16]], -1)
        return torch.cat([part * cos + turned * sin, x[..., 32:]], -1)

    expected = expected_of(path, case.layer, POSITIONS)
    found = pe_cli.probe(port, head_dim=128, seq_len=POSITIONS, expected=expected)
    assert found.pairing == "half"
    assert "rotary-dims" in found.codes() and "pairing" not in found.codes()
    with pytest.raises(AssertionError, match="turns dims 0-31; .* turns dims 0-15, 64-79"):
        assert_rotation(port, rope_config=path, layer=case.layer, seq_len=POSITIONS)
