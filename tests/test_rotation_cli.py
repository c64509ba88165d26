"""`pe-cli compare AFTER --before BEFORE`: the rotation read back from dumps on the command
line, its --json, --positions and --rope-config, and its refusals."""

import json

import numpy as np
import pytest

POSITIONS = 96


def _dumps(tmp_path, offset=0, layout="torch", save=np.save):
    """q before and after transformers' Llama rotary step, as a port's test would dump them."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    config = LlamaConfig(hidden_size=256, num_attention_heads=4, head_dim=64, num_hidden_layers=2)
    config.save_pretrained(tmp_path)
    x = torch.randn(1, 4, POSITIONS, 64, generator=torch.Generator().manual_seed(1))
    ids = torch.arange(offset, offset + POSITIONS)[None]
    cos, sin = modeling_llama.LlamaRotaryEmbedding(config)(x, ids)
    q = modeling_llama.apply_rotary_pos_emb(x, x, cos, sin)[0]
    if layout == "heads":  # (positions, heads, head_dim)
        x, q = x[0].permute(1, 0, 2), q[0].permute(1, 0, 2)
    before, after = tmp_path / "before.npy", tmp_path / "after.npy"
    np.save(before, x.contiguous().numpy())
    np.save(after, q.contiguous().numpy())
    return str(before), str(after), str(tmp_path / "config.json")


def test_names_the_rotation_and_its_command(cli, tmp_path):
    before, after, _ = _dumps(tmp_path)
    code, out, err = cli("compare", after, "--before", before)
    assert code == 0 and err == ""
    text = out.decode()
    assert "rotates 64 of 64 dims, half pairing" in text
    assert "bit for bit (float32)" in text and "hf-rope" in text
    assert "pe-cli generate --family rope --d-model 64" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_json_keys(cli, tmp_path):
    before, after, config = _dumps(tmp_path, layout="heads")
    code, out, err = cli("compare", after, "--before", before, "--json", "--rope-config", config)
    assert code == 0 and err == ""
    found = json.loads(out)
    assert found["pairing"] == "half"
    assert found["rotary_dims"] == list(range(64))
    assert found["candidates"][0]["spec"]["base"] == 10000
    assert found["findings"] == []
    assert found["rebuilt"]["identical"] is True
    # the candidates are of the angles' lines, not the dump's bits
    assert found["candidates_of"].startswith("each pair's line through its angles")


def test_positions_given(cli, tmp_path):
    """Rows rotated at positions 10.. read as 0.. are offset by 10; --positions 10:106 says
    where they are, and the offset is gone."""
    before, after, config = _dumps(tmp_path, offset=10)
    code, out, _ = cli("compare", after, "--before", before, "--json")
    assert [f["finding"] for f in json.loads(out)["findings"]] == ["offset"]
    code, out, _ = cli(
        "compare", after, "--before", before, "--json", "--positions", f"10:{10 + POSITIONS}"
    )
    found = json.loads(out)
    assert found["findings"] == [] and found["rebuilt"]["identical"]
    ids = tmp_path / "ids.txt"
    ids.write_text(" ".join(str(10 + p) for p in range(POSITIONS)))
    code, out, _ = cli("compare", after, "--before", before, "--json", "--positions", ids)
    assert json.loads(out)["findings"] == []


def test_against_another_model(cli, tmp_path):
    """Llama's rotation set against a config of another theta: its rates are not the model's."""
    before, after, config = _dumps(tmp_path)
    other = json.loads(open(config).read())
    other["rope_parameters"]["rope_theta"] = 500000.0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text(json.dumps(other))
    code, out, _ = cli(
        "compare", after, "--before", before, "--rope-config", tmp_path / "other" / "config.json"
    )
    assert code == 0
    assert "pairs turn at other rates than llama layer 0's" in out.decode()
    code, out, _ = cli("compare", after, "--before", before, "--rope-config", config)
    assert "other rates" not in out.decode()


def _save(path, values):
    np.save(path, values)
    return str(path)


@pytest.mark.parametrize(
    "before, after, said",
    [
        (np.zeros((4, 8), np.float32), np.zeros((4, 6), np.float32), "a rotation keeps the shape"),
        (np.zeros((4, 8), np.int32), np.zeros((4, 8), np.float32), "not a floating-point"),
        (np.zeros(8, np.float32), np.zeros(8, np.float32), "needs a head_dim axis"),
    ],
)
def test_bad_input_is_one_line(cli, tmp_path, before, after, said):
    a = _save(tmp_path / "a.npy", after)
    b = _save(tmp_path / "b.npy", before)
    code, out, err = cli("compare", a, "--before", b)
    assert code == 2 and out == b""
    assert err.startswith("Error: ") and said in err and err.count("\n") == 1


def test_pickled_and_misused_are_refused(cli, tmp_path):
    pickled = tmp_path / "p.npy"
    np.save(pickled, np.array([{"q": 1}], dtype=object), allow_pickle=True)
    fine = _save(tmp_path / "f.npy", np.zeros((4, 8), np.float32))
    for args, said in (
        ((fine, "--before", pickled), "never unpickles"),
        ((fine, "--positions", "0:4"), "give --before"),
        ((fine, fine, "--before", fine), "takes one file"),
        ((fine, "--before", fine, "--positions", "0:3"), "3 positions for 4 rows"),
        ((fine, "--before", fine, "--base", "500"), "describes a table to build"),
    ):
        code, out, err = cli("compare", *args)
        assert code == 2 and said in err and err.count("\n") == 1, err
