"""The libraries' own code, called the way their models call it, for the tests that compare
pe-cli with them on the machine the tests run on."""

import pytest
import torch

# Llama 3.1's config.json, as far as its rotary embedding reads it
LLAMA31 = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "head_dim": 128,
    "rope_theta": 500000.0,
    "max_position_embeddings": 131072,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}


def hf_rotary(rope: dict, d: int, base: float, positions):
    """cos, sin, inv_freq and attention factor from transformers' own rotary embedding for rope
    parameters, at positions (a list, or a tensor of any dtype: the model widens them to
    float32 as it does its position ids)."""
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    rope = dict(rope, rope_theta=base)
    rope.setdefault("rope_type", "default")
    rope.setdefault("partial_rotary_factor", 1.0)  # GPT-NeoX's config defaults to 0.25
    limit = rope.pop("max_position_embeddings", 4096)
    common = dict(
        hidden_size=4 * d, num_attention_heads=4, head_dim=d, max_position_embeddings=limit
    )
    if rope["rope_type"] == "default":
        # Llama's default ignores partial_rotary_factor; GPT-NeoX's (the same arithmetic) honours it
        from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

        config = transformers.GPTNeoXConfig(**common, rope_parameters=rope)
        module = GPTNeoXRotaryEmbedding(config)
    elif rope["rope_type"] == "ntk_alpha":  # HunYuan's: its configs say dynamic with alpha
        from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import (
            HunYuanDenseV1RotaryEmbedding,
        )

        rope = {**rope, "rope_type": "dynamic", "factor": 1.0}
        config = transformers.HunYuanDenseV1Config(**common, rope_parameters=rope)
        module = HunYuanDenseV1RotaryEmbedding(config)
    else:
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

        config = transformers.LlamaConfig(**common, rope_parameters=rope)
        module = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, dtype=torch.float32)
    positions = positions if torch.is_tensor(positions) else torch.tensor(positions)
    cos, sin = module(x, positions[None, :])
    return cos[0], sin[0], module.inv_freq, module.attention_scaling
