"""The rope types' registry (families/rope/types.py) side by side with transformers' own
(modeling_rope_utils' ROPE_INIT_FUNCTIONS and RopeParameters): the same names, the same keys,
and each type's arithmetic bit for bit; and each type read back by identification, or the
reason it is not."""

import re

import pytest

from pe_cli.engine import spec_from_keywords
from pe_cli.families.rope.identify.scalings import (
    DIVIDED,
    NOT_FITTED,
    PLAIN,
    READ,
    TAILED,
    TRIED,
)
from pe_cli.families.rope.keys import KEYS
from pe_cli.families.rope.types import NOT_SUPPORTED, ROPE_TYPES, hf_inv_freq


def _transformers():
    from transformers import modeling_rope_utils

    return modeling_rope_utils


def test_every_transformers_rope_type_is_an_entry_or_refused_with_its_reason():
    functions = _transformers().ROPE_INIT_FUNCTIONS
    for name in functions:
        assert name in ROPE_TYPES or NOT_SUPPORTED.get(name), name
    assert not set(NOT_SUPPORTED) & set(ROPE_TYPES)


def test_every_entry_is_a_transformers_rope_type_under_its_name():
    """The registered types are ROPE_INIT_FUNCTIONS' (each entry says which function computes
    it), and the two RopeParameters documents beside them: default and axial."""
    utils = _transformers()
    documented = re.search(r"Can be one of \[([^\]]*)\]", utils.RopeParameters.__doc__)
    named = set(re.findall(r"'(\w+)'", documented.group(1)))
    own = {n for n, t in ROPE_TYPES.items() if "." in t.transformers.split()[0]}  # a model's
    assert set(ROPE_TYPES) - own <= set(utils.ROPE_INIT_FUNCTIONS) | named
    assert named - set(utils.ROPE_INIT_FUNCTIONS) == {"default", "axial"}
    for name, found in ROPE_TYPES.items():
        if name in utils.ROPE_INIT_FUNCTIONS:
            assert found.transformers.split()[0] == utils.ROPE_INIT_FUNCTIONS[name].__name__


def test_transformers_rope_parameters_are_keys():
    """Every key of RopeParameters is a --rope key of the same name (rope_theta is --base)."""
    keys = set(_transformers().RopeParameters.__annotations__)
    assert keys - {"rope_theta"} <= set(KEYS)


def test_the_keys_say_which_types_read_them():
    for kind in ROPE_TYPES.values():
        for key in (*kind.required, *kind.optional):
            assert kind.name in KEYS[key].used_by, (kind.name, key)
    for key in KEYS.values():
        for user in set(key.used_by) & set(ROPE_TYPES):
            assert key.name in (*ROPE_TYPES[user].required, *ROPE_TYPES[user].optional)


def test_every_type_is_read_back_or_says_why_not():
    fitted = [*TAILED, *PLAIN, *DIVIDED, *TRIED, *READ]
    assert len(fitted) == len(set(fitted)) and not set(fitted) & set(NOT_FITTED)
    assert set(fitted) | set(NOT_FITTED) == set(ROPE_TYPES)
    assert all(NOT_FITTED.values())


LONG = [1.0 + i / 40 for i in range(64)]
SETTINGS = {
    "linear": {"factor": 4.0},
    "dynamic": {"factor": 2.0},
    "yarn": {"factor": 8.0, "original_max_position_embeddings": 1024, "beta_fast": 16.0},
    "longrope": {
        "factor": 4.0,
        "original_max_position_embeddings": 1024,
        "short_factor": [1.0] * 64,
        "long_factor": LONG,
    },
    "llama3": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 1024,
    },
    "proportional": {"partial_rotary_factor": 0.25},
}


@pytest.mark.parametrize("length", [None, 5000])
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_each_type_is_its_transformers_function_bit_for_bit(name, length):
    """inv_freq and the attention factor of ROPE_INIT_FUNCTIONS[name], at construction (no
    length) and in the forward pass of a 5000-position table (which regrows dynamic NTK's base
    and takes LongRoPE's long factors), against the entry's own arithmetic."""
    import torch
    from transformers import LlamaConfig

    assert set(SETTINGS) == set(_transformers().ROPE_INIT_FUNCTIONS)
    rope = {"rope_type": name, **SETTINGS[name]}
    config = LlamaConfig(
        hidden_size=512,
        num_attention_heads=4,
        head_dim=128,
        max_position_embeddings=4096,
        rope_parameters={"rope_theta": 500000.0, **rope},
    )
    # the forward pass gives dynamic NTK max(position) + 1 as an int64 tensor
    given = torch.tensor(length) if length and name == "dynamic" else length
    expected, factor = _transformers().ROPE_INIT_FUNCTIONS[name](config, "cpu", seq_len=given)
    if name == "dynamic":  # transformers reads it from the config
        rope["max_position_embeddings"] = 4096
    spec = spec_from_keywords(family="rope", d_model=128, base=500000.0, rope=rope, seq_len=8)
    found, attention = hf_inv_freq(torch, spec, lambda: length or 1)
    assert found.dtype == expected.dtype and torch.equal(found, expected)
    assert attention == factor


@pytest.mark.parametrize("alpha", [1000.0, 3.5])
def test_ntk_alpha_is_hunyuans_own_function_bit_for_bit(alpha):
    """HunYuan's configs say rope_type dynamic with alpha; its rotary module computes
    compute_ntk_alpha_rope_parameters, the entry ntk_alpha's arithmetic."""
    import torch
    from transformers import HunYuanDenseV1Config
    from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import (
        HunYuanDenseV1RotaryEmbedding,
    )

    config = HunYuanDenseV1Config(
        hidden_size=512,
        num_attention_heads=4,
        head_dim=128,
        rope_parameters={
            "rope_type": "dynamic",
            "rope_theta": 10000.0,
            "alpha": alpha,
            "factor": 1.0,
        },
    )
    expected, factor = HunYuanDenseV1RotaryEmbedding.compute_ntk_alpha_rope_parameters(config)
    rope = {"rope_type": "ntk_alpha", "alpha": alpha}
    spec = spec_from_keywords(family="rope", d_model=128, base=10000.0, rope=rope, seq_len=8)
    found, attention = hf_inv_freq(torch, spec, lambda: 1)
    assert torch.equal(found, expected) and attention == factor
