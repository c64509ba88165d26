"""The inference engines' tables (--variant llama.cpp, --variant mlx) read back by compare: a
file holding one is named as that engine's table bit for bit, and the generate command compare
prints rebuilds the file byte for byte. The variants are held against the engines themselves in
test_llamacpp.py and test_mlx.py; here they stand for the engines' tables."""

import json
import shlex

import numpy as np
import pytest

import pe_cli

LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
MODELS = {
    "llama3.1": {"d_model": 128, "base": 500000.0, "rope": LLAMA3},
    "qwen2": {"d_model": 128, "base": 1e6},
    "qwen2.5-yarn": {"d_model": 128, "base": 1e6, "rope": YARN},
    "partial": {"d_model": 128, "base": 10000.0, "rope": {"partial_rotary_factor": 0.5}},
}
# (engine, model, pairing): each engine's every model, in both pairings between them
CASES = [
    ("llama.cpp", "llama3.1", "half"),
    ("llama.cpp", "qwen2", "interleaved"),
    ("llama.cpp", "qwen2.5-yarn", "half"),
    ("llama.cpp", "partial", "interleaved"),
    ("mlx", "llama3.1", "interleaved"),
    ("mlx", "qwen2", "half"),
    ("mlx", "qwen2.5-yarn", "interleaved"),
    ("mlx", "partial", "half"),
]


def _named_and_rebuilt(cli, tmp_path, table):
    """compare FILE's best candidate, after checking that its printed command rebuilds FILE."""
    np.save(tmp_path / "table.npy", table)
    code, out, err = cli("compare", tmp_path / "table.npy")
    assert code == 0, err
    printed = [line for line in out.decode().splitlines() if "rebuilt by: " in line]
    assert len(printed) == 1, out.decode()
    words = shlex.split(printed[0].split("rebuilt by: ", 1)[1])
    assert words[:2] == ["pe-cli", "generate"]
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == (tmp_path / "table.npy").read_bytes()
    code, out, err = cli("compare", tmp_path / "table.npy", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert shlex.split(found["command"]) == words
    return found["candidates"][0]


@pytest.mark.parametrize("engine, model, pairing", CASES)
def test_engine_tables_are_named_and_rebuilt(cli, tmp_path, engine, model, pairing):
    options = {**MODELS[model], "convention": pairing}
    table = pe_cli.build(family="rope", variant=engine, seq_len=2048, **options).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == f"library {engine}" and best["confirmed"]
    assert best["spec"]["convention"] == pairing and best["spec"]["base"] == options["base"]
    # a partial table holds the rotated dims only: it reads as a whole rotary head that wide
    given, rope = dict(options.get("rope", {})), dict(best["spec"]["rope"])
    share = given.pop("partial_rotary_factor", 1.0)
    assert best["spec"]["d_model"] * rope.get("partial_rotary_factor", 1.0) == 128 * share
    assert {k: rope[k] for k in given} == given


def test_a_long_engine_table_is_named_from_its_sample(cli, tmp_path):
    """32768 positions: scored on a sample, then confirmed over every row."""
    table = pe_cli.build(
        family="rope", variant="llama.cpp", seq_len=32768, **MODELS["llama3.1"]
    ).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library llama.cpp" and best["confirmed"]


def test_an_exact_table_is_rebuilt_by_its_command(cli, tmp_path):
    table = pe_cli.build(family="rope", d_model=64, seq_len=512, base=1e6).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["variant"] == "exact"
