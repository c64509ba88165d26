"""Gemma 4's proportional RoPE named (issue 41): its full-attention layers' table, made by
transformers' own rotary embedding from the published config (head dim 512, partial_rotary_factor
0.25, theta 1e6), is named rope_type proportional bit for bit by compare FILE, in float32 and
bfloat16, and from a dump of q before and after transformers' own apply. Where the table is
another (a partial-rotary one, whose exponents are over its rotated dims; a full one; a short
half table whose slowest columns round to cos 1; a partial one padded with unrotated columns,
at no real model's base), no candidate is proportional."""

import json

import pytest

from .published import PUBLISHED

FULL = 5  # the published config's first full-attention layer


def _gemma4(tmp_path):
    """The published Gemma 4 config as save_pretrained writes it, and its text config."""
    from transformers import AutoConfig

    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED["gemma-4-26b-a4b"]))
    return str(path), AutoConfig.from_pretrained(str(path)).get_text_config()


def _rotary(config, x, positions: int):
    """cos and sin of transformers' Gemma4TextRotaryEmbedding for a full-attention layer, as
    its attention asks for them (in x's dtype)."""
    import torch
    from transformers.models.gemma4 import modeling_gemma4

    embedding = modeling_gemma4.Gemma4TextRotaryEmbedding(config)
    return embedding(x, torch.arange(positions)[None], "full_attention")


def _save(path, **tensors):
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in tensors.items()}, str(path))
    return path


def _identified(cli, path):
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    code, out, err = cli("compare", path)
    assert code == 0, err
    return found, " ".join(out.decode().split())


def _proportional(candidate) -> bool:
    return dict(candidate["spec"]["rope"]).get("rope_type") == "proportional"


@pytest.mark.parametrize("part", ["cos", "sin"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gemma4_full_attention_table_is_named(cli, tmp_path, dtype, part):
    import torch

    path, config = _gemma4(tmp_path)
    x = torch.zeros(1, dtype=getattr(torch, dtype))
    cos, sin = _rotary(config, x, 1024)
    table = _save(tmp_path / "t.safetensors", pe=(cos if part == "cos" else sin)[0])
    found, text = _identified(cli, table)
    best = found["candidates"][0]
    assert found["explained"] and best["differing"] == 0, text
    assert _proportional(best) and dict(best["spec"]["rope"])["partial_rotary_factor"] == 0.25
    assert best["spec"]["base"] == 1e6 and best["spec"]["d_model"] == 512
    assert "rope_type=proportional" in text and f"bit for bit ({dtype})" in text
    assert "columns are constant" not in text  # the zero tail is the type's, not unexplained
    # the table --rope-config gives for the layer is the same one
    code, _, err = cli(
        "generate", "--rope-config", path, "--layer", FULL, "--variant", "hf-rope", "-l", 1024,
        "--dtype", dtype, "--part", part, "-o", tmp_path / "config.safetensors",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = cli("compare", table, tmp_path / "config.safetensors", "--json")
    assert code == 0 and json.loads(out)["max_abs"] == 0, err


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gemma4_dump_names_the_table_and_its_turning_dims(cli, tmp_path, dtype):
    """q before and after transformers' own Gemma 4 apply at its full-attention head dim: 128
    of 512 dims turn, the rest are proportional RoPE's zero-frequency pairs, and the table the
    angles make is named proportional."""
    import torch
    from transformers.models.gemma4 import modeling_gemma4

    path, config = _gemma4(tmp_path)
    kind = getattr(torch, dtype)
    x = torch.randn(1, 2, 96, 512, generator=torch.Generator().manual_seed(0)).to(kind)
    cos, sin = _rotary(config, x, 96)
    q = modeling_gemma4.apply_rotary_pos_emb(x, cos, sin)
    before = _save(tmp_path / "before.safetensors", q=x)
    after = _save(tmp_path / "after.safetensors", q=q)
    code, out, err = cli(
        "compare", after, "--before", before, "--json", "--rope-config", path, "--layer", FULL
    )
    assert code == 0, err
    found = json.loads(out)
    assert found["pairing"] == "half" and found["findings"] == []
    assert found["rotary_dims"] == [*range(64), *range(256, 320)]
    assert _proportional(found["candidates"][0])
    code, out, err = cli("compare", after, "--before", before)
    text = " ".join(out.decode().split())
    assert "rotates 128 of 512 dims" in text
    assert "192 of 256 pairs turn by 0 at every position (dims 64-255, 320-511" in text
    assert "rope_type=proportional" in text


YARN = ["--rope", "rope_type=yarn", "--rope", "factor=4"]
YARN += ["--rope", "original_max_position_embeddings=32768"]  # Qwen2.5's


@pytest.mark.parametrize(
    "options",
    [
        # GPT-NeoX's and Phi's partial rotary: exponents over the rotated dims, no tail
        ["--d-model", 512, "--rope", "partial_rotary_factor=0.25", "--base", 1e6],
        ["--d-model", 64, "--rope", "partial_rotary_factor=0.5", "--dtype", "bfloat16"],
        # every pair turns
        ["--d-model", 512, "--base", 1e6],
        # 8 positions of bfloat16: the slowest 42 frequencies' cos round to 1 at every one
        ["--d-model", 128, "--seq-len", 8, "--base", 1e6, "--dtype", "bfloat16"],
        # YaRN in bfloat16 over 1024 positions: its 48 slowest columns round to cos 1, after
        # frequencies divided by up to its factor (no power law)
        ["-d", 128, "-l", 1024, "--base", 1e6, "--dtype", "bfloat16", "--variant", "vllm", *YARN],
    ],
)
def test_no_other_table_is_named_proportional(cli, tmp_path, options):
    table = tmp_path / "t.safetensors"
    length = [] if {"-l", "--seq-len"} & set(options) else ["-l", 256]
    code, _, err = cli("generate", "--family", "rope", *length, *options, "-o", table)
    assert code == 0, err
    found, text = _identified(cli, table)
    assert found["explained"] and found["candidates"][0]["differing"] == 0, text
    assert not any(_proportional(c) for c in found["candidates"])


def test_a_padded_partial_table_is_not_named_proportional(cli, tmp_path):
    """A port's partial-rotary table over 32 of 128 dims (exponents 2i / 32, theta 1e3),
    padded to the head dim with unrotated pairs (cos 1): the numbers of proportional RoPE's at
    theta 1e3^4 = 1e12, which no model has (by its 256th position the first padded pair would
    have turned 0.26 rad at that theta); never named so."""
    import torch

    rates = 1e3 ** (-torch.arange(0, 32, 2, dtype=torch.float64) / 32)
    angles = torch.arange(256, dtype=torch.float64)[:, None] * rates
    cos = torch.cat([angles.cos(), torch.ones(256, 48, dtype=torch.float64)], -1)
    table = _save(tmp_path / "t.safetensors", pe=torch.cat([cos, cos], -1).float())
    found, text = _identified(cli, table)
    assert not any(_proportional(c) for c in found["candidates"]), text
