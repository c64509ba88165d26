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
]  # fmt: skip


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
