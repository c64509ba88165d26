"""compare --rope-config MODEL --frameworks: the every-engine view from training to serving, the
training frameworks' tables (their variants, each proved against the framework in
tests/test_frameworks.py, test_training_frameworks.py and test_ort_genai.py) beside
transformers' and the engines', and the verdict's words where they hold and only there."""

import json

import pytest

from .rope_models import GPT_OSS_YARN, LLAMA3, YARN
from .test_engines import _config

FRAMEWORKS = {"megatron-core", "llama-models", "litgpt", "torchtitan", "keras-hub"}
FRAMEWORKS |= {"keras-hub (JAX)", "ORT-GenAI"}
ENGINES = {"transformers", "mlx", "llama.cpp", "vllm"}
WORDS = ("another scale factor", "another frequency table")


def _view(cli, config, length, *more):
    code, out, err = cli("compare", "--rope-config", config, "-l", length, *more, "--json")
    assert code == 0, err
    found = json.loads(out)
    return {e["engine"]: e for e in found["engines"]}, found["notes"]


def _said(row, words):
    return any(words in line for line in row["why"])


def test_llama31_from_training_to_serving_differs_by_arithmetic_only(cli, tmp_path):
    rows, notes = _view(cli, _config(tmp_path, LLAMA3), 8192, "--frameworks")
    assert set(rows) == FRAMEWORKS | ENGINES
    assert list(rows)[: len(FRAMEWORKS)] == [
        "megatron-core",
        "llama-models",
        "litgpt",
        "torchtitan",
        "keras-hub",
        "keras-hub (JAX)",
        "ORT-GenAI",
    ]  # training first, then transformers and the engines that serve its checkpoints
    for name in ("megatron-core", "litgpt", "keras-hub", "ORT-GenAI", "transformers"):
        assert rows[name]["bit_equal_to_transformers"] == 1.0, name
    for name in ("llama-models", "torchtitan"):  # torch.polar's freqs_cis
        row = rows[name]
        assert 0.9 < row["bit_equal_to_transformers"] < 1.0
        assert 0 < row["versus_transformers"]["max_abs"] <= 2.0**-24
    jax = rows["keras-hub (JAX)"]  # powf's frequencies, the C library's cos
    assert 0.9 < jax["bit_equal_to_transformers"] < 1.0
    for name, row in rows.items():
        assert row["verdict"] == "arithmetic", (name, row["why"])
        assert not any(_said(row, words) for words in WORDS), name
    # the complex tables are compared frequency by frequency, and nothing else is noted
    assert sorted(notes) == sorted(
        f"{name}: holds each frequency once (64 columns), where the others pair them half: its "
        "table is compared frequency by frequency"
        for name in ("llama-models", "torchtitan", "ORT-GenAI")
    )


def test_a_table_of_one_column_per_frequency_is_measured_past_its_first_block(cli, tmp_path):
    """llama-models' freqs_cis holds 64 columns where the exact table has 128: its blocks hold
    twice the rows, and each is set against the same rows of the others (it failed with
    "operands could not be broadcast" past 8192 positions). Its share bit-equal to transformers
    is the share of transformers' frequency columns it equals, counted here from both tables."""
    import io

    import numpy as np

    config = _config(tmp_path, LLAMA3)
    rows, _ = _view(cli, config, 20000, "--frameworks")
    tables = {}
    for variant in ("llama-models", "hf-rope"):
        code, out, err = cli(
            "generate", "--rope-config", config, "--variant", variant, "--part", "cos",
            "--convention", "single", "-l", 20000, "-o", "-",
        )  # fmt: skip
        assert code == 0, err
        tables[variant] = np.load(io.BytesIO(out))
    share = np.mean(tables["llama-models"] == tables["hf-rope"])
    assert rows["llama-models"]["bit_equal_to_transformers"] == pytest.approx(share, abs=1e-9)


def test_without_frameworks_the_view_is_the_engines(cli, tmp_path):
    config = _config(tmp_path, LLAMA3)
    rows, _ = _view(cli, config, 256)
    assert set(rows) == ENGINES
    code, out, err = cli("compare", "--rope-config", config, "-l", 256)
    assert code == 0, err
    assert "every engine's table" in out.decode() and "training" not in out.decode()
    code, out, err = cli("compare", "--rope-config", config, "-l", 256, "--frameworks")
    assert code == 0, err
    text = " ".join(out.decode().split())
    assert "from training to serving: each framework's and engine's table" in text
    assert "framework or engine (float32)" in text


def test_a_yarn_the_frameworks_read_otherwise_is_said_in_words(cli, tmp_path):
    """Qwen2.5's YaRN: torchtitan leaves YaRN's attention factor out (another scale factor,
    its frequencies within rounding); litgpt's ramp runs the other way and it has no factor
    without mscale (both); transformers' arithmetic elsewhere; llama-models has no YaRN and
    ORT-GenAI's builder fails without the betas, which the notes say."""
    config = _config(tmp_path, YARN, theta=1000000.0, hidden_size=5120, num_attention_heads=40)
    rows, notes = _view(cli, config, 4096, "--frameworks")
    assert set(rows) == (FRAMEWORKS | ENGINES) - {"llama-models", "ORT-GenAI", "keras-hub (JAX)"}
    torchtitan, litgpt = rows["torchtitan"], rows["litgpt"]
    assert torchtitan["verdict"] == litgpt["verdict"] == "meaning"
    assert _said(torchtitan, "every value times 0.8782489")  # 1 / (0.1 ln 4 + 1)
    assert not _said(torchtitan, "another frequency table")
    assert _said(litgpt, "another scale factor") and _said(litgpt, "another frequency table")
    for name in ("megatron-core", "keras-hub", "transformers", "vllm"):
        assert rows[name]["verdict"] == "arithmetic", name
        assert rows[name]["bit_equal_to_transformers"] == 1.0, name
        assert not any(_said(rows[name], words) for words in WORDS), name
    assert any(n.startswith("llama-models: ") and "no rope_type yarn" in n for n in notes)
    assert any(n.startswith("ORT-GenAI: ") and "beta_fast" in n for n in notes)
    assert any(n.startswith("keras-hub (JAX): ") and "XLA's log" in n for n in notes)


def test_gpt_oss_yarn_is_transformers_table_in_the_builder(cli, tmp_path):
    config = _config(
        tmp_path,
        GPT_OSS_YARN,
        theta=150000.0,
        hidden_size=2880,
        num_attention_heads=64,
        head_dim=64,
    )
    rows, _ = _view(cli, config, 4096, "--frameworks")
    assert rows["ORT-GenAI"]["verdict"] == "arithmetic"
    assert rows["ORT-GenAI"]["bit_equal_to_transformers"] == 1.0


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "--frameworks"),
        ("compare", "--family", "rope", "-d", 64, "--frameworks"),
    ],
)
def test_frameworks_without_a_model_is_one_line(cli, args):
    code, out, err = cli(*args)
    assert code == 2 and not out
    assert err.strip().count("\n") == 0 and "--frameworks" in err and "--rope-config" in err
