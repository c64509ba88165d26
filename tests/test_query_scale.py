"""--part query-scale: the factor a layer multiplies its queries by at each position. Exact:
against mpmath at the steps where it changes; --variant hf-rope: against transformers' own
attention modules, which are run on queries of ones so that what reaches their attention
function is the scale itself; through --rope-config and --layer N, each model's."""

import io
import json

import mpmath
import numpy as np
import pytest

from pe_cli import build
from pe_cli.spec import TableSpec

from . import reference as ref

BETA = {"llama_4_scaling_beta": 0.1, "original_max_position_embeddings": 16384}
TEMPERATURE = {"floor_scale": 8192.0, "attn_scale": 0.1}
# around the steps of each kind: the first ones, and far on (2^24: float32's whole numbers end)
WINDOWS = [(0, 4), (16382, 5), (131070, 4), (2**24 - 2, 5), (2**31 - 20000, 3)]


def _truth(rope: dict, p: int):
    if "floor_scale" in rope:
        step = (p + 1) // int(rope["floor_scale"])
        return 1 + mpmath.mpf(rope["attn_scale"]) * mpmath.log(1 + step)
    step = p // rope["original_max_position_embeddings"]
    return 1 + mpmath.mpf(rope["llama_4_scaling_beta"]) * mpmath.log(1 + step)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("rope", [BETA, TEMPERATURE], ids=["llama4-beta", "temperature"])
def test_the_exact_scale_is_correctly_rounded(rope, dtype):
    for offset, length in WINDOWS:
        spec = TableSpec(
            family="rope", d_model=8, seq_len=length, offset=offset, part="query-scale",
            rope=rope, dtype=dtype,
        )  # fmt: skip
        got = build(spec).float64()
        assert got.shape == (length, 1)
        for r in range(length):
            assert got[r, 0] == ref.round_to(_truth(rope, offset + r), dtype), offset + r


def _captured(attention, module, call):
    """The query a module hands its attention function, while call() runs it."""
    import torch

    seen = {}

    def capture(module_, query, key, value, *args, **kwargs):
        seen["query"] = query.detach().clone()
        return torch.zeros_like(query).transpose(1, 2), None

    original = attention.eager_attention_forward
    attention.eager_attention_forward = capture
    try:
        call()
    finally:
        attention.eager_attention_forward = original
    return seen["query"]


def _ones(linear, width):
    """A projection that makes every output 1 from an input of ones (1/width a power of 2)."""
    import torch

    with torch.no_grad():
        linear.weight.fill_(1.0 / width)
        if linear.bias is not None:
            linear.bias.zero_()


def test_ministral3s_scale_is_its_attentions_own():
    """Ministral3Attention multiplies its rotated queries by get_llama_4_attn_scale: with cos 1
    and sin 0 the rotated queries of ones are ones, and what its attention function is handed
    is the scale at each of position_ids (any position, no cache needed)."""
    pytest.importorskip("transformers")
    import torch
    from transformers import Ministral3Config
    from transformers.models.ministral3 import modeling_ministral3 as m

    config = Ministral3Config(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=4, head_dim=16,
        intermediate_size=32, num_hidden_layers=1, vocab_size=16,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6, **BETA},
    )  # fmt: skip
    config._attn_implementation = "eager"
    attention = m.Ministral3Attention(config, 0).eval()
    _ones(attention.q_proj, 64)
    for offset, length in WINDOWS:
        positions = torch.arange(offset, offset + length)[None]
        hidden = torch.ones(1, length, 64)
        embeddings = (torch.ones(1, length, 16), torch.zeros(1, length, 16))
        query = _captured(
            m,
            attention,
            lambda h=hidden, e=embeddings, p=positions: attention(h, e, None, position_ids=p),
        )
        theirs = query[0, 0, :, 0].numpy()
        spec = TableSpec(
            family="rope", d_model=16, seq_len=length, offset=offset, part="query-scale",
            rope=BETA, variant="hf-rope",
        )  # fmt: skip
        assert np.array_equal(build(spec).float64()[:, 0], theirs.astype(np.float64)), offset


def test_llama4s_temperature_is_its_nope_layers_own():
    """Llama4TextAttention on a NoPE layer multiplies its queries (ones here) by its
    temperature at positions 0 .. length - 1 of a pass without a cache."""
    pytest.importorskip("transformers")
    import torch
    from transformers import Llama4TextConfig
    from transformers.models.llama4 import modeling_llama4 as m

    length = 8200  # past floor_scale's first step
    config = Llama4TextConfig(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=4, head_dim=16,
        intermediate_size=32, intermediate_size_mlp=32, num_hidden_layers=4, vocab_size=16,
    )  # fmt: skip
    config._attn_implementation = "eager"
    attention = m.Llama4TextAttention(config, 3).eval()  # no_rope_layers[3] = 0
    assert not attention.use_rope
    _ones(attention.q_proj, 64)
    query = _captured(m, attention, lambda: attention(torch.ones(1, length, 64), None, None, None))
    theirs = query[0, 0, :, 0].numpy().astype(np.float64)
    spec = TableSpec(
        family="rope", d_model=16, seq_len=length, part="query-scale", rope=TEMPERATURE,
        variant="hf-rope",
    )  # fmt: skip
    assert np.array_equal(build(spec).float64()[:, 0], theirs)


def test_a_models_layer_gives_its_scale(cli, tmp_path):
    """--rope-config --layer N --part query-scale: Ministral 3's on every layer; Llama 4's on
    its NoPE layers only, where cos and sin are refused; the model view lists them."""
    from .published import PUBLISHED

    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED["devstral-small-2-24b-instruct"]))
    code, out, err = cli(
        "generate", "--rope-config", path, "--layer", 5, "--part", "query-scale",
        "--offset", 8190, "-l", 4, "-o", "-",
    )  # fmt: skip
    assert code == 0, err
    found = np.load(io.BytesIO(out))[:, 0]
    truth = [
        ref.round_to(1 + mpmath.mpf("0.1") * mpmath.log(1 + p // 8192), "float32")
        for p in range(8190, 8194)
    ]
    assert found.tolist() == truth
    llama4 = tmp_path / "llama4.json"
    llama4.write_text(json.dumps({"model_type": "llama4_text", "num_hidden_layers": 8}))
    code, out, err = cli(
        "generate",
        "--rope-config",
        llama4,
        "--layer",
        3,
        "--part",
        "query-scale",
        "-l",
        2,
        "-o",
        "-",
    )
    assert code == 0, err
    code, _, err = cli("generate", "--rope-config", llama4, "--layer", 2, "--part", "query-scale")
    assert code == 2 and "no scale of the position" in err
    code, out, err = cli("show", "--rope-config", llama4, "--json")
    model = json.loads(out)["model"]
    assert model["query_scales"] == [None, None, None, "query-scale"] * 2
    assert model["scales"]["query-scale"]["kind"] == "temperature"
