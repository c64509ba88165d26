"""Published config.json files (tests/published.py) read as transformers reads them: each is
written small (its sizes shrunk, its keys that set positions and their spellings kept), the
model transformers builds from that file is run, and each decoder layer's cos and sin are
held to pe-cli's `--layer N --variant hf-rope` of the same file; the layers transformers
rotates none of are the ones pe-cli calls NoPE. The same files at their real sizes give the
rotary module's own table at a long context."""

import io
import json

import numpy as np
import pytest

pytest.importorskip("transformers", reason="transformers is not installed")

from tools import transformers_conformance as tc  # noqa: E402
from tools import transformers_layers as tl  # noqa: E402
from tools import transformers_models as tm  # noqa: E402

from .layered import holds  # noqa: E402
from .published import PUBLISHED  # noqa: E402

PARTS = ("text_config",)


def _text(config: dict) -> dict:
    """The language model's part of a config.json (the whole of a text model's)."""
    return next((config[p] for p in PARTS if isinstance(config.get(p), dict)), config)


def small(config: dict) -> dict:
    """The config with its language model's sizes shrunk and its lists cut to tl.LAYERS layers,
    in the form it was published in."""
    from transformers import CONFIG_MAPPING

    config = json.loads(json.dumps(config))
    text = _text(config)
    hidden, heads = text.get("hidden_size"), text.get("num_attention_heads")
    pairs = text.get("num_key_value_heads") == heads
    kind = text.get("model_type") or config["model_type"]
    fields = set()  # the sizes of its language model's class (a flat composite's: its _text's)
    for name in (kind, f"{kind}_text"):
        fields |= tl._fields(CONFIG_MAPPING[name]) if name in CONFIG_MAPPING else set()
    count = text.get("num_hidden_layers")
    for key, value in tl.SHRUNK.items():  # the sizes its class has, given or left to defaults
        if key in fields and key not in ("hidden_size", "num_attention_heads") or key in text:
            text[key] = value
    for key in ("pad_token_id", "bos_token_id", "eos_token_id"):
        text[key] = 1
    if "head_dim" not in text and hidden and heads:  # hidden_size // heads kept
        text["hidden_size"] = tl.SHRUNK["num_attention_heads"] * (hidden // heads)
    if pairs:  # as many key heads as query heads (multi-head latent attention)
        text["num_key_value_heads"] = tl.SHRUNK["num_attention_heads"]
    if count and count > tl.LAYERS:
        text["num_hidden_layers"] = tl.LAYERS
        for key, value in list(text.items()):
            if isinstance(value, list) and len(value) == count:
                text[key] = value[: tl.LAYERS]
    text.setdefault("vocab_size", tl.SHRUNK["vocab_size"])
    return config


def _transformers(path):
    """The text part of the config transformers reads from the file, and its layers' record."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(path))
    node = config.get_text_config()
    return node, tl.record(node.model_type, node)


def flags(config: dict) -> tuple[dict, list[str]]:
    """The config as transformers 5.23 loads it: a flag its class types bool, published as a
    number (Llama 4's attn_temperature_tuning 4), refused there, set to the bool transformers 4
    read it as; and the keys so set."""
    from transformers import CONFIG_MAPPING

    config = json.loads(json.dumps(config))
    text = _text(config)
    defaults = CONFIG_MAPPING[text.get("model_type") or config["model_type"]]()
    changed = []
    for key, value in text.items():
        try:
            default = getattr(defaults, key, None)
        except RuntimeError:  # Gemma 4's per-layer keys are no global attribute
            default = None
        if isinstance(default, bool) and not isinstance(value, bool):
            text[key] = bool(value)
            changed.append(key)
    return config, changed


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_a_published_config_gives_each_layer_the_models_table(name, cli, tmp_path):
    """pe-cli reads the file as published; transformers the same file, any flag it refuses as
    published set as transformers 4 read it."""
    (tmp_path / "published").mkdir()
    (tmp_path / "loaded").mkdir()
    path = tmp_path / "published" / "config.json"
    path.write_text(json.dumps(small(PUBLISHED[name])))
    (tmp_path / "loaded" / "config.json").write_text(json.dumps(flags(small(PUBLISHED[name]))[0]))
    node, recorded = _transformers(tmp_path / "loaded" / "config.json")
    holds(cli, path, recorded, name)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_a_flag_published_as_a_number_is_said(name, cli, tmp_path):
    """Llama 4 Scout's attn_temperature_tuning is 4 in its published file: transformers 5.23
    refuses the file, pe-cli reads it as true and says so; a config whose flags are bools has
    no such line."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED[name]))
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 16)
    assert code == 0, err
    said = [f["line"] for f in json.loads(out)["model"]["findings"] if "true or false" in f["line"]]
    _, changed = flags(PUBLISHED[name])
    assert len(said) == len(changed)
    for key, line in zip(changed, said):
        value = _text(PUBLISHED[name])[key]
        assert line == (
            f"{key} {value} is no true or false: transformers 5.23 refuses the file; read as "
            f"{str(bool(value)).lower()}, as transformers 4 read it"
        )
    assert bool(changed) == name.startswith("llama-4-scout")


def _module(node):
    """transformers' rotary module for a config part, built from it."""
    for rotary in tm.rotary_modules():
        if rotary.config_class is not None and isinstance(node, rotary.config_class):
            return rotary.cls(node)
    raise LookupError(f"no rotary module takes a {type(node).__name__}")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_a_published_config_at_its_own_size(name, cli, tmp_path):
    """At the published sizes (DeepSeek-V3's 64 rotary dims of 7168 / 128 = 56, Gemma 4's 512 of
    its full-attention layers), each treatment's table at positions 100000 on is the rotary
    module's."""
    import torch
    from transformers import AutoConfig

    (tmp_path / "loaded").mkdir()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED[name]))
    (tmp_path / "loaded" / "config.json").write_text(json.dumps(flags(PUBLISHED[name])[0]))
    node = AutoConfig.from_pretrained(str(tmp_path / "loaded")).get_text_config()
    module = _module(node)
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 16)
    assert code == 0, err
    model = json.loads(out)["model"]
    for treatment in model["treatments"].values():
        label = treatment["rope_parameters_of"] or (
            treatment["layer_type"] if getattr(module, "layer_types", None) else None
        )
        cos, sin = tc._module_table(module, torch.arange(100_000, 100_064), label)
        for part, theirs in (("cos", cos), ("sin", sin)):
            code, out, err = cli(
                *treatment["command"].split()[1:], "--variant", "hf-rope", "--part", part,
                "--offset", 100_000, "-l", 64, "-o", "-",
            )  # fmt: skip
            assert code == 0, err
            assert np.array_equal(np.load(io.BytesIO(out)), theirs.numpy()), (name, part)


@pytest.mark.parametrize("name", ["deepseek-v3", "deepseek-v3.2"])
def test_the_softmax_scale_of_latent_attention_is_the_attentions_own(name, cli, tmp_path):
    """DeepSeek's attention scales its softmax by qk_head_dim**-0.5 times YaRN's mscale squared
    (mscale_all_dim): the model view's figure is its attention module's `scaling`."""
    from transformers import AutoConfig
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as m

    path = tmp_path / "config.json"
    path.write_text(json.dumps(small(PUBLISHED[name])))
    node = AutoConfig.from_pretrained(str(path)).get_text_config()
    theirs = m.yarn_apply_mscale(node.rope_parameters, node.qk_head_dim ** (-0.5))
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 16)
    assert code == 0, err
    (treatment,) = json.loads(out)["model"]["treatments"].values()
    assert treatment["softmax_scale"] == theirs and theirs != node.qk_head_dim ** (-0.5)
    assert treatment["applied_pairing"] == "interleaved" and treatment["table_pairing"] == "half"


@pytest.mark.parametrize(
    "name, latent",
    [
        ("deepseek-v3", True),
        ("deepseek-v3.2", True),
        ("llama-3.1-8b", False),
        ("gemma-4-26b-a4b", False),
    ],
)
def test_latent_attention_says_the_dims_its_rotation_passes(name, latent, cli, tmp_path):
    """Multi-head latent attention rotates qk_rope_head_dim of each query and key head and
    passes qk_nope_head_dim beside them unrotated (its attention splits q and k so): the model
    view says both, from transformers' own config; a model without latent attention says no
    such thing."""
    from transformers import AutoConfig

    path = tmp_path / "config.json"
    path.write_text(json.dumps(small(PUBLISHED[name])))
    node = AutoConfig.from_pretrained(str(path)).get_text_config()
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 16)
    assert code == 0, err
    treatments = json.loads(out)["model"]["treatments"].values()
    code, out, err = cli("show", "--rope-config", path, "-l", 16)
    text = " ".join(out.decode().split())
    if not latent:
        assert all(t["unrotated_dims"] is None for t in treatments)
        assert "pass unrotated" not in text
        return
    (treatment,) = treatments
    assert treatment["rotary_dims"] == node.qk_rope_head_dim
    assert treatment["unrotated_dims"] == node.qk_nope_head_dim
    head = node.qk_rope_head_dim + node.qk_nope_head_dim
    assert (
        f"rotates {node.qk_rope_head_dim} of {head} query and key dims (qk_nope_head_dim "
        f"{node.qk_nope_head_dim} pass unrotated)"
    ) in text


def test_deepseek_v32s_indexer_is_named_apart(cli, tmp_path):
    """Its attention rotates interleaved pairs, its indexer half pairs, by one table: the
    model view says both (ports got the indexer wrong: sglang #13530, mlx-lm PR #512)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED["deepseek-v3.2"]))
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 8)
    (treatment,) = json.loads(out)["model"]["treatments"].values()
    assert treatment["applied_pairing"] == "interleaved"
    assert treatment["components"] == {"indexer": "half"}
    path.write_text(json.dumps(PUBLISHED["deepseek-v3"]))
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", 8)
    (treatment,) = json.loads(out)["model"]["treatments"].values()
    assert treatment["components"] == {}


@pytest.mark.parametrize(
    "name, said, unsaid",
    [
        (  # every layer one treatment: all its layers, not "layers all 43"
            "deepseek-v4-flash",
            ["main layers 0-1 (2 of 43)", "in interleaved pairs (its table: one column per pair)"],
            ["layers all", "its table's", "(its table: columns"],
        ),
        (  # transformers' table is half-split; its attention rotates interleaved pairs
            "deepseek-v3",
            ["all 61 layers", "in interleaved pairs (its table: columns in half pairs)"],
            ["layers all", "one column per pair", "no rotation"],
        ),
        (  # the NoPE layers' key, by index: rich took "[i]" for markup and printed "= 0" alone
            "smollm3-3b",
            ["layers 3, 7, ..., 35, every 4th (9 of 36): NoPE: no_rope_layers[i] = 0"],
            ["no_rope_layers =", "its table", "all 36 layers"],
        ),
        ("llama-3.1-8b", ["all 32 layers", "rotates all 128 dims in half pairs"], ["its table"]),
        (  # a complex freqs_cis, one column per pair, turned by view_as_complex: interleaved
            "llama-4-scout-17b-16e-instruct",
            [
                "rotates all 128 dims in interleaved pairs (its table: one column per pair)",
                "llama3, theta 500000, factor 16, high_freq_factor 1, low_freq_factor 1",
            ],
            ["single pairs", "all 48 layers"],
        ),
        (  # cos and sin of half the head, turned by halves
            "gpt-oss-20b",
            ["rotates all 64 dims in half pairs (its table: one column per pair)"],
            ["single pairs"],
        ),
    ],
)
def test_the_model_view_says_layers_and_pairs_plainly(name, said, unsaid, cli, tmp_path):
    """What the model view prints of a published config's layers and pairs, word for word, and
    what it must not."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED[name]))
    code, out, err = cli("show", "--rope-config", path, "-l", 16, env={"COLUMNS": "100"})
    assert code == 0, err
    text = " ".join(out.decode().split())
    for line in said:
        assert line in text, (name, line)
    for line in unsaid:
        assert line not in text, (name, line)
