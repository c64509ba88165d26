"""The model view's findings on a config.json: each said where it holds, and not where it does
not."""

import json

import pytest

LLAMA = {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64, "rope_theta": 5e5}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
CASES = [
    # rope_scaling and rope_parameters: transformers reads the latter
    ("rope-scaling-disagrees", {**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 8.0},
                                "rope_parameters": {"rope_type": "linear", "factor": 4.0,
                                                    "rope_theta": 5e5}},
     "rope_scaling and rope_parameters disagree (factor 8 there, 4 here)"),
    ("rope-scaling-disagrees", {**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 4.0},
                                "rope_parameters": {"rope_type": "linear", "factor": 4.0,
                                                    "rope_theta": 5e5}}, None),
    ("no-rope-theta", {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64},
     "config.json gives no rope_theta: model type llama's class default is used (10000"),
    ("no-rope-theta", LLAMA, None),
    ("alpha-beside-factor", {"model_type": "hunyuan_v1_dense", "num_hidden_layers": 2,
                             "head_dim": 64, "rope_theta": 1e4,
                             "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}},
     "alpha 1000 beside factor 1: HunYuan's rotary module reads alpha"),
    ("alpha-beside-factor", {"model_type": "hunyuan_v1_dense", "num_hidden_layers": 2,
                             "head_dim": 64, "rope_theta": 1e4,
                             "rope_scaling": {"type": "dynamic", "alpha": 1000.0}}, None),
    ("yarn-truncate-default", {**LLAMA, "rope_scaling": YARN}, "YaRN without truncate"),
    ("yarn-truncate-default", {**LLAMA, "rope_scaling": {**YARN, "truncate": False}}, None),
    ("yarn-truncate-default", {**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
     None),
    # a flag that changes positions, published as a number: transformers 5.23 refuses it
    ("flag-not-a-bool", {"model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 64,
                         "rope_theta": 5e5, "attn_temperature_tuning": 4},
     "attn_temperature_tuning 4 is no true or false: transformers 5.23 refuses the file; read "
     "as true"),
    ("flag-not-a-bool", {"model_type": "deepseek_v3", "num_hidden_layers": 2,
                         "qk_rope_head_dim": 64, "rope_theta": 1e4, "rope_interleave": 0},
     "rope_interleave 0 is no true or false: transformers 5.23 refuses the file; read as false"),
    ("flag-not-a-bool", {"model_type": "llama4_text", "num_hidden_layers": 4, "head_dim": 64,
                         "rope_theta": 5e5, "attn_temperature_tuning": True}, None),
]  # fmt: skip


def test_a_flag_given_as_a_number_is_read_as_transformers_4_read_it(cli, tmp_path):
    """rope_interleave 0 is false (DeepSeek-V3's attention then turns the table's half pairs),
    1 true; attn_temperature_tuning 0 gives Llama 4's NoPE layers no query scale."""
    path = tmp_path / "config.json"
    base = {"model_type": "deepseek_v3", "num_hidden_layers": 2, "qk_rope_head_dim": 64}
    for flag, pairing in ((0, "half"), (1, "interleaved"), (False, "half"), (True, "interleaved")):
        path.write_text(json.dumps({**base, "rope_interleave": flag}))
        code, out, err = cli("show", "--rope-config", path, "--json", "-l", 8)
        assert code == 0, err
        (treatment,) = json.loads(out)["model"]["treatments"].values()
        assert treatment["applied_pairing"] == pairing, flag
    for flag, scaled in ((0, False), (4, True)):
        path.write_text(json.dumps({**LLAMA4, "attn_temperature_tuning": flag}))
        code, out, err = cli("show", "--rope-config", path, "--json", "-l", 8)
        assert code == 0, err
        assert bool(json.loads(out)["model"]["scales"]) == scaled, flag


@pytest.mark.parametrize("rule, config, said", CASES)
def test_a_finding_is_said_where_it_holds_and_nowhere_else(rule, config, said, cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("show", "--rope-config", path, "--json")
    assert code == 0, err
    found = [f["line"] for f in json.loads(out)["model"]["findings"] if f["rule"] == rule]
    assert (found == []) if said is None else [line.startswith(said) for line in found] == [True]
    code, out, err = cli("show", "--rope-config", path)
    assert code == 0, err
    view = out.decode().split("\n\nshape")[0].splitlines()
    printed = " ".join(" ".join(line.split()[1:]) for line in view if line.startswith("finding"))
    assert (said is None) or said.split(":")[0] in printed


# A GGUF beside config.json (convert_hf_to_gguf's default place for it): llama.cpp's NoPE layers
# (a step its source hard-codes) against the config's. Each case: the config, the GGUF's
# architecture and metadata, and the finding (None: nothing said).
def _nope(arch, count, **fields):
    return arch, {"block_count": count, **fields}


SMOLLM3 = {"model_type": "smollm3", "num_hidden_layers": 8, "head_dim": 64, "rope_theta": 5e6}
LLAMA4 = {"model_type": "llama4_text", "num_hidden_layers": 8, "head_dim": 64, "rope_theta": 5e5}
AFMOE = {"model_type": "afmoe", "num_hidden_layers": 8, "head_dim": 64, "rope_theta": 1e4}
STEP4 = "n_no_rope_layer_step 4"
GGUF_CASES = [
    ({**SMOLLM3, "no_rope_layer_interval": 3}, _nope("smollm3", 8),
     f"smollm3.gguf: llama.cpp's NoPE layers are 3, 7 (its smollm3 graph hard-codes {STEP4}); "
     "the config's are 2, 5"),
    (SMOLLM3, _nope("smollm3", 8), None),
    ({**SMOLLM3, "no_rope_layers": [1] * 8}, _nope("smollm3", 8),
     f"smollm3.gguf: llama.cpp's NoPE layers are 3, 7 (its smollm3 graph hard-codes {STEP4}); "
     "the config has none"),
    (SMOLLM3, _nope("smollm3", 12),
     f"smollm3.gguf: llama.cpp's NoPE layers are 3, 7, 11 of 12 (its smollm3 graph hard-codes "
     f"{STEP4}); the config's are 3, 7 of 8"),
    (LLAMA4, _nope("llama4", 8), None),
    ({**LLAMA4, "no_rope_layers": [1] * 8, "layer_types": ["full_attention"] * 8},
     _nope("llama4", 8, sliding_window=0),
     "llama4.gguf: llama.cpp's NoPE layer is 7 (llama4.attention.sliding_window 0 sets "
     "n_no_rope_layer_step to the block count); the config has none"),
    ({**LLAMA4, "no_rope_layer_interval": 2}, _nope("llama4", 8),
     f"llama4.gguf: llama.cpp's NoPE layers are 3, 7 (its llama4 loader keeps {STEP4}); the "
     "config's are 1, 3, ..., 7, every 2nd"),
    ({**AFMOE, "global_attn_every_n_layers": 2}, _nope("afmoe", 8),
     "afmoe.gguf: llama.cpp's NoPE layers are 3, 7 (its afmoe graph hard-codes every 4th "
     "layer); the config's are 1, 3, ..., 7, every 2nd"),
    (AFMOE, _nope("afmoe", 8), None),
    (LLAMA, _nope("llama", 2), None),  # llama.cpp's llama sets no NoPE step
]  # fmt: skip


def _model_view(cli, folder, *more):
    code, out, err = cli("show", "--rope-config", folder, *more)
    assert code == 0, err
    return out.decode()


@pytest.mark.parametrize("config, gguf, said", GGUF_CASES)
def test_a_gguf_beside_the_config_whose_nope_layers_differ_is_said(
    config, gguf, said, cli, tmp_path
):
    from .gguf_files import write_gguf

    (tmp_path / "config.json").write_text(json.dumps(config))
    arch, fields = gguf
    write_gguf(tmp_path / f"{arch}.gguf", arch, head=64, heads=4, base=1e4, fields=fields)
    found = json.loads(_model_view(cli, tmp_path, "--json"))["model"]["findings"]
    assert [f["line"] for f in found if f["rule"].startswith("gguf")] == ([said] if said else [])
    view = _model_view(cli, tmp_path / "config.json", "--rows", "0:1").split("\n\nshape")[0]
    # the finding's rows, its label left out, up to the next label
    printed = view.partition("\nfinding")[2].partition("\nbelow")[0]
    assert (said is None and "\nfinding" not in view) or " ".join(printed.split()) == said


def test_a_gguf_that_cannot_be_read_is_said_unchecked(cli, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(SMOLLM3))
    (tmp_path / "model.gguf").write_bytes(b"GGUF\x03\x00")  # its header cut short
    found = json.loads(_model_view(cli, tmp_path, "--json"))["model"]["findings"]
    [line] = [f["line"] for f in found if f["rule"] == "gguf-unread"]
    assert line.startswith("model.gguf: not checked against the config's NoPE layers (")
    (tmp_path / "model.gguf").unlink()
    found = json.loads(_model_view(cli, tmp_path, "--json"))["model"]["findings"]
    assert [f for f in found if f["rule"].startswith("gguf")] == []
