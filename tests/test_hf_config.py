"""Reading Hugging Face configs as transformers does: aliases, defaults, composite configs,
legacy keys, per-layer-type parameters, and where a config comes from. Each table is checked
against transformers' own rotary module built from the same config.json."""

import io
import json

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

from pe_cli import build
from pe_cli.core.errors import BadInput
from pe_cli.families.hf_config import read
from pe_cli.options import Options

from .libraries import LLAMA31

transformers = pytest.importorskip("transformers", reason="transformers is not installed")


def write(path, config):
    path.write_text(json.dumps(config))
    return str(path)


def module_for(path, part=None):
    """transformers' rotary module for a config.json, built as its model builds it."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(
        str(path.parent) if path.name == "config.json" else str(path)
    )
    node = getattr(config, part) if part else config
    module_name = type(node).__module__.replace("configuration_", "modeling_")
    import importlib

    modeling = importlib.import_module(module_name)
    cls = next(
        v for k, v in vars(modeling).items() if k.endswith("RotaryEmbedding") and "Vision" not in k
    )
    return cls(node)


def hf_table(module, positions, layer_type=None):
    with torch.no_grad():
        cos, sin = module(
            torch.zeros(1),
            torch.tensor(positions)[None],
            **({"layer_type": layer_type} if layer_type else {}),
        )
    return cos.reshape(-1, len(positions), cos.shape[-1])[0], sin.reshape(
        -1, len(positions), sin.shape[-1]
    )[0]


def pe_table(path, rows, **options):
    spec = Options(
        rope_config=str(path), family="rope", variant="hf-rope", seq_len=rows, **options
    ).spec()
    return (
        torch.as_tensor(build(spec.replace(part="cos")).values),
        torch.as_tensor(build(spec.replace(part="sin")).values),
    )


def assert_same(path, part=None, layer_type=None, rows=64):
    theirs = hf_table(module_for(path, part), list(range(rows)), layer_type)
    ours = pe_table(path, rows, **({"layer_type": layer_type} if layer_type else {}))
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and torch.equal(a, b.float())


@pytest.mark.parametrize(
    "config, head_dim",
    [
        (
            {
                "model_type": "jetmoe",
                "hidden_size": 2048,
                "num_attention_heads": 32,
                "kv_channels": 64,
            },
            64,
        ),
        (
            {
                "model_type": "zamba2",
                "hidden_size": 2560,
                "num_attention_heads": 32,
                "attention_head_dim": 80,
            },
            80,
        ),
        (
            {
                "model_type": "glm4_moe_lite",
                "hidden_size": 2048,
                "num_attention_heads": 20,
                "qk_rope_head_dim": 32,
            },
            32,
        ),
        ({"model_type": "dbrx", "d_model": 1024, "n_heads": 8}, 128),
    ],
)
def test_head_dim_under_an_alias(tmp_path, config, head_dim):
    path = tmp_path / "config.json"
    write(path, config)
    assert read(str(path))["d_model"] == head_dim
    assert_same(path)


def test_defaults_of_the_model_type_fill_what_config_json_leaves_out(tmp_path):
    path = tmp_path / "config.json"
    write(path, {"model_type": "moonshine"})  # hidden 288, 8 decoder heads, partial 0.9
    settings = read(str(path))
    assert settings["d_model"] == 36 and settings["rope"]["partial_rotary_factor"] == 0.9
    assert_same(path)


def test_legacy_rope_scaling_and_theta(tmp_path):
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "llama",
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "rope_theta": 500000.0,
            "max_position_embeddings": 8192,
            "rope_scaling": {
                "type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 2048,
            },
        },
    )
    settings = read(str(path))
    assert settings["base"] == 500000.0 and settings["rope"]["rope_type"] == "yarn"
    assert_same(path)


def test_a_legacy_key_whose_placement_is_unknown_is_refused_not_guessed(tmp_path, monkeypatch):
    """A legacy key whose placement the data does not record (the probe of its class failed)
    is refused, never placed by guess."""
    from pe_cli.families.hf_config import models

    rules = dict(models()["phi3"]["legacy"])
    del rules["partial_rotary_factor+rope_scaling"]
    monkeypatch.setitem(models(), "phi3", {**models()["phi3"], "legacy": rules})
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "phi3",
            "hidden_size": 3072,
            "num_attention_heads": 32,
            "partial_rotary_factor": 0.5,
            "rope_scaling": {
                "type": "longrope",
                "short_factor": [1.0] * 24,
                "long_factor": [2.0] * 24,
            },
        },
    )
    with pytest.raises(BadInput, match="rules pe-cli does not know"):
        read(str(path))


def test_composite_config_reads_the_language_model(tmp_path):
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "qwen2_vl",
            "text_config": {
                "model_type": "qwen2_vl_text",
                "hidden_size": 1536,
                "num_attention_heads": 12,
                "rope_parameters": {
                    "rope_type": "default",
                    "rope_theta": 1e6,
                    "mrope_section": [16, 24, 24],
                },
            },
            "vision_config": {"model_type": "qwen2_vl_vision"},
        },
    )
    assert read(str(path))["d_model"] == 128
    with pytest.raises(BadInput, match="axial"):
        Options(rope_config=str(path), config_part="vision_config", family="rope").spec()
    with pytest.raises(BadInput, match="no part 'audio_config'"):
        read(str(path), part="audio_config")


def test_per_layer_type_parameters(tmp_path, cli):
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "gemma3_text",
            "head_dim": 64,
            "hidden_size": 512,
            "num_attention_heads": 8,
            "num_hidden_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"],
            "rope_parameters": {
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
            },
        },
    )
    for layer_type in ("sliding_attention", "full_attention"):
        assert_same(path, layer_type=layer_type)
    code, _, err = cli("generate", "--rope-config", path, "-l", 8, "-o", "-")
    assert (
        code != 0 and "--layer-type" in err and "full_attention" in err and "Traceback" not in err
    )
    code, _, err = cli(
        "generate", "--rope-config", path, "--layer-type", "global", "-l", 8, "-o", "-"
    )
    assert code != 0 and "sliding_attention" in err
    out = tmp_path / "all.safetensors"
    code, _, err = cli("export", out, "--rope-config", path, "--variant", "hf-rope", "-l", 8)
    assert code == 0, err
    tensors = load_file(str(out))
    assert sorted(tensors) == [
        "full_attention.cos",
        "full_attention.sin",
        "sliding_attention.cos",
        "sliding_attention.sin",
    ]
    full = hf_table(module_for(path), list(range(8)), "full_attention")
    assert np.array_equal(tensors["full_attention.cos"], full[0].numpy())


def test_a_layer_type_without_rope(tmp_path):
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "gemma3_text",
            "head_dim": 64,
            "hidden_size": 512,
            "num_attention_heads": 8,
            "num_hidden_layers": 2,
            "layer_types": ["sliding_attention", "full_attention"],
            "rope_parameters": {
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                "full_attention": None,
            },
        },
    )
    with pytest.raises(BadInput, match="no rotary embedding"):
        read(str(path), layer_type="full_attention")


def test_folder_and_cache(tmp_path, monkeypatch, cli):
    config = {
        "model_type": "llama",
        "hidden_size": 256,
        "num_attention_heads": 4,
        "rope_theta": 5e5,
    }
    folder = tmp_path / "model"
    folder.mkdir()
    write(folder / "config.json", config)
    assert read(str(folder))["base"] == 5e5
    # the Hugging Face cache layout: models--org--name/refs/main -> snapshots/<revision>/
    hub = tmp_path / "hub"
    snapshot = hub / "models--org--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (hub / "models--org--tiny" / "refs").mkdir()
    (hub / "models--org--tiny" / "refs" / "main").write_text("abc123")
    write(snapshot / "config.json", config)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    assert read(str(snapshot))["d_model"] == 64
    assert read("org/tiny")["d_model"] == 64
    code, out, err = cli(
        "generate",
        "--rope-config",
        "org/tiny",
        "-l",
        4,
        "-o",
        "-",
        "--format",
        "npy",
        env={"HF_HUB_CACHE": str(hub)},
    )
    assert code == 0, err and np.load(io.BytesIO(out)).shape == (4, 64)
    code, _, err = cli("generate", "--rope-config", "org/absent", "-l", 4, "-o", "-")
    assert code != 0 and "never downloads" in err


def test_odd_rotary_dim_and_proportional(tmp_path):
    # GLM-4-MoE's default: head_dim 128 * partial 0.5... transformers' arange(0, dim, 2) for odd dims
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "glm4_moe",
            "head_dim": 42,
            "hidden_size": 512,
            "num_attention_heads": 8,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1e4,
                "partial_rotary_factor": 0.5,
            },
        },
    )
    assert pe_table(path, 4)[0].shape == (4, 22)
    assert_same(path)
    path = tmp_path / "gemma4.json"
    write(
        path,
        {
            "model_type": "gemma4_text",
            "head_dim": 64,
            "global_head_dim": 64,  # full_attention's own head dim (512 where it is not given)
            "hidden_size": 512,
            "num_attention_heads": 8,
            "num_hidden_layers": 1,
            "layer_types": ["full_attention"],
            "rope_parameters": {
                "full_attention": {
                    "rope_type": "proportional",
                    "partial_rotary_factor": 0.25,
                    "rope_theta": 1e6,
                }
            },
        },
    )
    cos, sin = pe_table(path, 8, layer_type="full_attention")
    assert cos.shape == (8, 64) and torch.all(cos[:, 8:32] == 1) and torch.all(sin[:, 8:32] == 0)


def _legacy_cases():
    from pe_cli.families.hf_config import models

    return sorted(t for t, facts in models().items() if isinstance(facts.get("legacy"), dict))


@pytest.mark.parametrize("model_type", _legacy_cases())
def test_legacy_keys_land_where_the_config_class_puts_them(model_type, tmp_path):
    """A config class that converts legacy keys by its own code: every key it places, given at
    once in an old-style config.json, gives pe-cli the rope parameters transformers gives."""
    from transformers import CONFIG_MAPPING

    from pe_cli.families.hf_config import models

    rules = models()[model_type]["legacy"]
    legacy = {
        k: v
        for k, v in {
            "rope_theta": 123456.0,
            "rope_local_base_freq": 23456.0,
            "rotary_emb_base": 34567.0,
            "rotary_pct": 0.5,
            "partial_rotary_factor": 0.75,
        }.items()
        if rules.get(k)
    }
    if "rope_scaling" in rules:
        from tools.transformers_configs import _resized, _scaling_probe

        cls = CONFIG_MAPPING[model_type]
        probe = _scaling_probe(cls)
        for key in ("partial_rotary_factor", "rotary_pct"):  # LongRoPE's factors, one a frequency
            if key in legacy and rules.get(f"{key}+rope_scaling"):
                probe = _resized(probe, cls, key, legacy[key])
        legacy["rope_scaling"] = {
            k: [4.0] * len(v) if k == "long_factor" else 2.0 if k == "factor" else v
            for k, v in probe.items()
        }
        legacy = {
            k: v for k, v in legacy.items() if k == "rope_scaling" or rules.get(f"{k}+rope_scaling")
        }
    theirs = CONFIG_MAPPING[model_type](**json.loads(json.dumps(legacy))).rope_parameters
    path = tmp_path / "config.json"
    write(path, {"model_type": model_type, **legacy})
    nested = all(isinstance(v, dict) or v is None for v in theirs.values())
    for layer_type, expected in theirs.items() if nested else [(None, theirs)]:
        if expected is None:
            continue
        if "rope_theta" not in expected:  # transformers' rotary module cannot run on this
            with pytest.raises(BadInput, match="without rope_theta"):
                read(str(path), layer_type=layer_type)
            continue
        try:
            ours = read(str(path), layer_type=layer_type)
        except BadInput as e:
            pytest.fail(f"{layer_type}: {e}")
        assert ours["base"] == expected["rope_theta"], layer_type
        for key in ("rope_type", "factor", "partial_rotary_factor", "long_factor"):
            if key in expected or key in ours["rope"]:
                assert ours["rope"].get(key) == expected.get(key), (layer_type, key)


def test_a_flat_vision_language_config_from_the_hub(tmp_path):
    """Qwen2-VL's config.json as the Hub keeps it: text settings at the top, rope_scaling of
    type mrope with its sections, rope_theta beside it."""
    path = tmp_path / "config.json"
    write(
        path,
        {
            "model_type": "qwen2_vl",
            "hidden_size": 1536,
            "num_attention_heads": 12,
            "rope_theta": 1e6,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
            "vision_config": {"model_type": "qwen2_vl_vision"},
        },
    )
    settings = read(str(path))
    assert (
        settings["base"] == 1e6
        and settings["d_model"] == 128
        and settings["rope"]["rope_type"] == "default"
    )
    assert settings["axes"] == "mrope" and settings["rope"]["mrope_section"] == [16, 24, 24]


@pytest.mark.parametrize(
    "config, message",
    [
        ({"head_dim": "x", "rope_theta": 1e4}, "not a positive whole number"),
        ({"head_dim": 8.5, "rope_theta": 1e4}, "not a positive whole number"),
        ({"rope_parameters": {"rope_theta": "abc"}, "head_dim": 8}, "not a number above 1"),
        ({"head_dim": 8, "rope_theta": True}, "not a number above 1"),
        ({"rope_parameters": "x", "head_dim": 8}, "not a JSON object"),
        (
            {
                "model_type": "gemma3_text",
                "head_dim": 8,
                "layer_types": ["a"],
                "per_layer_config": {"0": 5},
                "rope_parameters": {"a": {"rope_theta": 10}},
            },
            "per_layer_config entry 0",
        ),
        ([1, 2], "not a JSON object"),
    ],
)
def test_a_bad_config_is_one_line_not_a_traceback(cli, tmp_path, config, message):
    path = tmp_path / "config.json"
    write(path, config)
    code, out, err = (
        cli(
            "generate",
            "--rope-config",
            path,
            "--layer-type",
            "a",
            "-l",
            4,
            "-o",
            "-",
            "--format",
            "csv",
        )
        if "per_layer_config" in str(config)
        else cli("generate", "--rope-config", path, "-l", 4, "-o", "-", "--format", "csv")
    )
    assert code != 0 and message in err and "Traceback" not in err and out == b""


# ---------------------------------------------------------------------------------------------
# A config names transformers' table: its length is the default, and its distance is said


def _true_cos(config: dict, positions):
    """The correctly rounded float32 cos table of a Llama 3.1 config (half pairs), from
    arbitrary-precision frequencies (tests/reference.py), not from pe-cli."""
    from . import figures, reference

    rope = dict(config["rope_scaling"])
    frequencies, _ = reference.rope_frequencies(
        config["head_dim"], config["rope_theta"], rope, int(max(positions)) + 1
    )
    _, cos = figures.sin_cos(positions, frequencies)
    return np.concatenate([cos, cos], axis=1).astype(np.float32)


def _gap(path, config, positions, part="cos"):
    """max |true table - transformers' table| over these positions, as the line writes it."""
    cos, sin = hf_table(module_for(path), list(positions))
    theirs = (cos if part == "cos" else sin).numpy().astype(np.float64)
    if part == "cos":
        truth = _true_cos(config, np.asarray(positions))
    else:  # sin of the same angles: pe-cli's exact sin part, checked against mpmath elsewhere
        truth = build(rope_config=str(path), seq_len=int(max(positions)) + 1, part="sin").numpy()
        truth = truth[positions[0] :]
    return f"{np.abs(truth.astype(np.float64) - theirs).max():.3g}"


def _said(text: str) -> str:
    return " ".join(text.split())


def test_the_summary_says_how_far_transformers_table_is(cli, tmp_path):
    """Llama 3.1 at its 131072 positions, the config's length by default: the exact table is
    written, and the summary names transformers' distance from it and the flag that gives it."""
    path = tmp_path / "config.json"
    write(path, LLAMA31)
    code, out, err = cli("generate", "--rope-config", path)
    assert code == 0, err
    gap = _gap(path, LLAMA31, np.arange(131072))
    summary = _said(out.decode())
    assert "positions 0 .. 131071" in summary and "131072 x 128" in summary
    assert (
        f"transformers its table (--variant hf-rope) differs from this one by up to {gap}: "
        "max |difference| over the whole table" in summary
    )
    assert err.splitlines() == [
        "--seq-len 131072: the config's max_position_embeddings (-l gives another length)"
    ]


def test_a_write_says_it_on_stderr(cli, tmp_path):
    path = tmp_path / "config.json"
    write(path, LLAMA31)
    code, out, err = cli("generate", "--rope-config", path, "-l", 20000, "-o", "-")
    assert code == 0, err
    assert np.load(io.BytesIO(out)).shape == (20000, 128)
    gap = _gap(path, LLAMA31, np.arange(20000))
    assert err.splitlines() == [
        f"transformers: its table (--variant hf-rope) differs from this one by up to {gap}: "
        "max |difference| over the whole table"
    ]


def test_past_the_budget_the_last_rows_are_measured_and_named(cli, tmp_path, monkeypatch):
    from pe_cli.analysis import distance

    monkeypatch.setattr(distance, "MEASURED_ELEMENTS", 2 * 128 * 3000)
    path = tmp_path / "config.json"
    write(path, LLAMA31)
    out = tmp_path / "t.safetensors"
    code, _, err = cli("export", out, "--rope-config", path, "-l", 10000)
    assert code == 0, err
    last = np.arange(7000, 10000)
    cos, sin = _gap(path, LLAMA31, last), _gap(path, LLAMA31, last, "sin")
    assert err.splitlines()[-1] == (
        f"transformers: its tables (--variant hf-rope) differ from these by up to {cos} (cos), "
        f"{sin} (sin): max |difference| over positions 7000 .. 9999, the table's last 3000 rows"
    )


def test_a_table_past_the_budget_without_rows_of_its_own_is_not_measured(
    cli, tmp_path, monkeypatch
):
    """Rows listed by --ids are no table of their own: past the budget, the line says it did
    not measure, and why, rather than a figure over some of them."""
    from pe_cli.analysis import distance

    monkeypatch.setattr(distance, "MEASURED_ELEMENTS", 64)
    path = tmp_path / "config.json"
    write(path, LLAMA31)
    code, _, err = cli("generate", "--rope-config", path, "--ids", "0:5", "-o", "-")
    assert code == 0, err
    assert err.splitlines() == [
        "transformers: its table (--variant hf-rope) was not measured against this one: this "
        "table's 640 values are more than the 64 measured here, and its last rows are no table "
        "of their own; pe-cli compare exact hf-rope with the same options measures it"
    ]


def test_no_distance_is_said_of_transformers_own_table_or_without_a_config(cli, tmp_path):
    path = tmp_path / "config.json"
    write(path, LLAMA31)
    plain = ("--family", "rope", "-d", 128, "--base", 500000, "-l", 64)
    for args in (("--rope-config", path, "--variant", "hf-rope", "-l", 64), plain):
        code, out, err = cli("generate", *args)
        assert code == 0, err
        assert "--variant hf-rope)" not in out.decode() + err


def _small(tmp_path, **config):
    path = tmp_path / "config.json"
    write(path, {**LLAMA31, **config})
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("generate", "-o", "-"),
        ("show", "--json"),
        ("compare", "exact", "hf-rope", "--json"),
        ("export", "OUT"),
    ],
)
def test_the_length_defaults_to_max_position_embeddings(cli, tmp_path, command):
    path = _small(tmp_path, max_position_embeddings=300)
    out_file = tmp_path / "t.safetensors"
    args = [out_file if a == "OUT" else a for a in command]
    note = "--seq-len 300: the config's max_position_embeddings (-l gives another length)"
    for given, rows in (((), 300), (("-l", 20), 20)):
        out_file.unlink(missing_ok=True)
        code, out, err = cli(*args, "--rope-config", path, *given)
        assert code == 0, err
        assert (note in err.splitlines()) == (not given)
        if command[0] == "generate":
            assert np.load(io.BytesIO(out)).shape == (rows, 128)
        elif command[0] == "show":
            assert json.loads(out)["shape"] == [rows, 128]
        elif command[0] == "compare":
            assert json.loads(out)["size"] == rows * 128
        else:
            assert load_file(str(out_file))["cos"].shape == (rows, 128)


def test_a_config_without_max_position_embeddings(cli, tmp_path):
    """config.json without the key: the value transformers' config class gives it, else
    pe-cli's 1024; either way, said."""
    config = {k: v for k, v in LLAMA31.items() if k != "max_position_embeddings"}
    path = tmp_path / "config.json"
    write(path, config)
    length = transformers.LlamaConfig().max_position_embeddings
    code, out, err = cli("generate", "--rope-config", path, "-o", "-")
    assert code == 0, err
    assert np.load(io.BytesIO(out)).shape == (length, 128)
    assert (
        f"--seq-len {length}: max_position_embeddings of transformers' llama config class "
        "(config.json gives none) (-l gives another length)" in err.splitlines()
    )
    write(path, {k: v for k, v in config.items() if k != "model_type"})
    code, out, err = cli("generate", "--rope-config", path, "-o", "-")
    assert code == 0, err
    assert np.load(io.BytesIO(out)).shape == (1024, 128)
    assert (
        "--seq-len 1024, pe-cli's default: the config gives no max_position_embeddings "
        "(-l gives another length)" in err.splitlines()
    )


def test_a_files_length_goes_before_the_configs(cli, tmp_path):
    path = _small(tmp_path, max_position_embeddings=300)
    table = tmp_path / "t.npy"
    np.save(table, build(rope_config=str(path), seq_len=64, variant="hf-rope").numpy())
    code, out, err = cli("compare", table, "hf-rope", "--rope-config", path, "--json")
    assert code == 0, err
    assert json.loads(out)["size"] == 64 * 128 and json.loads(out)["differing"] == 0
    assert "--seq-len" not in err


def test_the_configs_length_is_for_tables_whose_rows_are_positions(cli, tmp_path):
    """A multi-axis table's text tokens (no grid) are positions along one line: the config's
    length; a grid's tokens are not, and nothing is said of a length."""
    path = _small(tmp_path, max_position_embeddings=300)
    axes = ("--rope-axes", "mrope", "--rope", "mrope_section=16,24,24")
    note = "--seq-len 300: the config's max_position_embeddings (-l gives another length)"
    code, out, err = cli("generate", "--rope-config", path, *axes, "-o", "-")
    assert code == 0, err
    assert np.load(io.BytesIO(out)).shape == (300, 128) and note in err.splitlines()
    code, out, err = cli("generate", "--rope-config", path, *axes, "--grid", "1x2x2", "-o", "-")
    assert code == 0, err
    assert np.load(io.BytesIO(out)).shape == (4, 128) and "--seq-len" not in err


def test_an_option_is_refused_only_where_it_changes_none_of_the_tables(cli, tmp_path):
    """-l sets the length of the cos and sin tables export writes beside inv_freq (which has
    none): it is taken; alone with inv_freq it changes nothing and is refused."""
    from safetensors.numpy import load_file

    path = tmp_path / "config.json"
    write(path, LLAMA31)
    out = tmp_path / "t.safetensors"
    code, _, err = cli(
        "export", out, "--rope-config", path, "--variant", "hf-rope", "--variant", "exact",
        "--part", "cos", "--part", "sin", "--part", "inv_freq", "-l", 64,
    )  # fmt: skip
    assert code == 0, err
    tensors = load_file(str(out))
    assert tensors["hf-rope.cos"].shape == (64, 128) and tensors["exact.inv_freq"].shape == (64,)
    code, _, err = cli("export", tmp_path / "v.safetensors", "--rope-config", path,
                       "--part", "inv_freq", "-l", 64)  # fmt: skip
    assert code == 2 and "--seq-len 64 changes nothing" in err
    assert not (tmp_path / "v.safetensors").exists()


def test_a_nope_layer_is_refused_in_one_line_and_nothing_is_written(cli, tmp_path):
    from .published import PUBLISHED

    path = tmp_path / "config.json"
    write(path, PUBLISHED["smollm3-3b"])
    out = tmp_path / "t.npy"
    for command in ("generate", "export", "show"):
        args = [command] + ([out] if command == "export" else [])
        code, stdout, err = cli(*args, "--rope-config", path, "--layer", 3)
        assert code == 2 and not stdout and not out.exists()
        assert err.splitlines() == [
            "Error: layer 3 applies no rotary embedding: NoPE: no_rope_layers[3] = 0"
        ]
    code, _, err = cli("generate", "--rope-config", path, "--layer", 36)
    assert code == 2 and "the model has 36 layers (0 .. 35)" in err
    code, _, err = cli("generate", "--rope-config", path, "--layer", 2, "--layer-type", "x")
    assert code == 2 and "give one" in err


def test_export_writes_each_treatment_with_the_schedule(cli, tmp_path):
    """Gemma 4's config.json: one cos and sin per treatment (its full-attention layers' 512 wide,
    global_head_dim), and the layers' schedule in the file's metadata, as show --json says it."""
    import struct

    from .published import PUBLISHED

    path = tmp_path / "config.json"
    write(path, PUBLISHED["gemma-4-26b-a4b"])
    out = tmp_path / "g.safetensors"
    code, _, err = cli("export", out, "--rope-config", path, "-l", 8)
    assert code == 0, err
    raw = out.read_bytes()
    header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
    shapes = {k: v["shape"] for k, v in header.items() if k != "__metadata__"}
    assert shapes == {
        "sliding_attention.cos": [8, 256], "sliding_attention.sin": [8, 256],
        "full_attention.cos": [8, 512], "full_attention.sin": [8, 512],
    }  # fmt: skip
    code, view, err = cli("show", "--rope-config", path, "--json", "-l", 8)
    layers = json.loads(view)["model"]["layers"]
    assert json.loads(header["__metadata__"]["pe_cli.layers"]) == layers
    assert layers[5] == "full_attention" and layers[4] == "sliding_attention"
    code, _, err = cli(
        "export", tmp_path / "one.safetensors", "--rope-config", path, "--layer", 5, "-l", 8
    )
    raw = (tmp_path / "one.safetensors").read_bytes()
    header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
    assert "pe_cli.layers" not in header["__metadata__"] and header["cos"]["shape"] == [8, 512]


@pytest.mark.parametrize("command", [("show",), ("compare",), ("generate", "-l", "64", "-o", "-")])
def test_a_command_reads_its_config_from_disk_once(cli, tmp_path, monkeypatch, command):
    """The model view, each treatment and the engines all ask for the config: it is read once
    (5 times by show, 7 by compare before), and a change to the file is read again."""
    import pathlib

    from pe_cli.families import hf_config

    from .published import PUBLISHED

    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED["llama-3.1-8b"]))
    reads = []
    read_text = pathlib.Path.read_text

    def counted(self, *args, **kwargs):
        if self.name == "config.json":
            reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_text", counted)
    monkeypatch.setattr(hf_config, "_LOADED", {})
    code, _, err = cli(command[0], "--rope-config", tmp_path, *command[1:])
    assert code == 0, err
    assert len(reads) == 1, reads
    config = dict(PUBLISHED["llama-3.1-8b"], rope_theta=10000.0)
    path.write_text(json.dumps(config))
    assert hf_config.load(str(path))["rope_theta"] == 10000.0 and len(reads) == 2


def test_a_config_whose_parts_rotate_each_by_its_own_names_them(cli, tmp_path):
    """BLT's own rope parameters size no table (its config gives no head sizes): the parts that
    do (patcher, local encoder, global transformer, local decoder) are named, to choose with
    --config-part; a flat config without head sizes names no parts."""
    transformers = pytest.importorskip("transformers")
    path = tmp_path / "config.json"
    path.write_text(transformers.BltConfig().to_json_string())
    code, out, err = cli("show", "--rope-config", path)
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert err.startswith("Error: the config gives no head_dim")
    for key in ("patcher_config", "encoder_config", "global_config", "decoder_config"):
        assert key in err
    assert "(choose one with --config-part)" in err
    code, out, err = cli("show", "--rope-config", path, "--config-part", "global_config")
    assert code == 0, err
    write(path, {"rope_theta": 1e4})
    code, out, err = cli("show", "--rope-config", path)
    assert code == 2 and "gives no head_dim" in err and "--config-part" not in err
