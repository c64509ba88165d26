"""Every rotary module in the installed transformers, from its model's own default config.json,
against pe-cli's hf-rope from the same file: bit for bit, or refused with the reason. The
modules are discovered by walking transformers' packages (tools/transformers_models.py)."""

import json

import numpy as np
import pytest

pytest.importorskip("transformers", reason="transformers is not installed")

from tools import transformers_conformance as tc  # noqa: E402
from tools import transformers_models as tm  # noqa: E402

MODULES = tm.rotary_modules()
# what transformers itself cannot do: no module to compare with
TRANSFORMERS_SIDE = (
    "its forward takes",
    "not built from any part",
    "the module fails on its default config",
    "transformers fails on the",
)


def test_discovery_finds_the_models():
    names = {r.name for r in MODULES}
    assert len(MODULES) > 200
    assert {
        "LlamaRotaryEmbedding",
        "CohereRotaryEmbedding",
        "Gemma3RotaryEmbedding",
        "DeepseekV2RotaryEmbedding",
    } <= names


def test_data_is_transformers_own():
    """transformers.json is what the installed transformers' config classes and modules say,
    recomputed in a fresh interpreter with its own hash seed (`python -m
    tools.transformers_models --check`)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "tools.transformers_models", "--check"],
        cwd=tm.DATA.parents[2],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # it ran: a module that lost its __main__ call exits 0 having checked nothing
    count = len(json.loads(tm.DATA.read_text()))
    assert done.stdout.strip().endswith(f"transformers.json: current ({count} model types)")


@pytest.mark.parametrize("form", tc.FORMS)
@pytest.mark.parametrize("rotary", MODULES, ids=lambda r: f"{r.model}.{r.name}")
def test_rotary_module(rotary, form):
    """From the model's default config.json as transformers 5 writes it in full, as
    save_pretrained writes it (use_diff=True), as its authors publish it (the keys its class
    fills in left out), and in the legacy form
    (rope_theta and rope_scaling with "type"); the module is the one transformers builds
    from that file."""
    result = next(r for r in tc.results(form) if r.rotary is rotary)  # every module's, run once
    if result.outcome == "not run":
        assert result.detail.startswith(TRANSFORMERS_SIDE), result.detail
    elif result.outcome == "refused":
        assert result.detail and "\n" not in result.detail
    else:
        assert result.outcome == "identical", result.detail


def test_each_key_that_moves_an_encoders_rotary_module():
    """The rotary modules outside the token models (vision towers, audio and speech encoders,
    codecs; tests/test_layers.py moves the token models' keys through their forward): each key
    of the config part a module is built from is moved (tools/transformers_layers.moves, and
    each number of rope_parameters), and where the module it builds changes, pe-cli from that
    config.json equals it bit for bit or refuses it in one line. Every module the zoo runs
    changes with some key (rope_theta at least): none is passed over."""
    from tools import transformers_layers as tl

    tokens = set(tl.candidates())
    checked, wrong = {}, []
    for rotary in MODULES:
        built = tm.usable(rotary)
        if isinstance(built, str) or built[2].model_type in tokens or not rotary.takes_positions:
            continue  # transformers cannot run it (the zoo's "not run"), or a token model's
        checked[rotary.name] = 0
        for key, result in tc.moved(rotary):
            checked[rotary.name] += 1
            if result.outcome == "refused":
                assert result.detail and "\n" not in result.detail, (rotary.name, key)
            elif result.outcome != "identical":
                wrong.append((rotary.name, key, result.outcome, result.detail))
    assert not wrong, wrong
    assert len(checked) > 50 and all(checked.values()), checked


SINUSOIDS = tc.sinusoidal_modules()


def test_sinusoid_discovery_finds_the_modules():
    assert len(SINUSOIDS) >= 23
    assert {
        "MusicgenSinusoidalPositionalEmbedding",
        "M2M100SinusoidalPositionalEmbedding",
        "VibeVoiceDiffusionHeadSinusoidalEmbedding",
    } <= {s.name for s in SINUSOIDS}


@pytest.mark.parametrize("sinusoid", SINUSOIDS, ids=lambda s: f"{s.model}.{s.name}")
def test_sinusoidal_module_is_named_and_rebuilt(sinusoid, cli, tmp_path):
    """`compare FILE` names the module's table bit for bit, and `generate` with the named
    parameters writes the same bytes."""
    import io

    import numpy as np

    made = tc.sinusoidal_table(sinusoid, rows=96, width=64, padding_idx=1)
    assert not isinstance(made, str), made
    table = made[0].numpy()
    path = tmp_path / "table.npy"
    np.save(path, table)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    best = json.loads(out)["candidates"][0]
    assert best["differing"] == 0, best["name"]
    spec = best["spec"]
    args = [
        "generate",
        "--family",
        spec["family"],
        "-d",
        spec["d_model"],
        "-l",
        spec["seq_len"],
        "--convention",
        spec["convention"],
        "--variant",
        spec["variant"],
        "--base",
        spec["base"],
        "--offset",
        spec["offset"],
        "-o",
        "-",
        "--format",
        "npy",
    ]
    if spec.get("padding_idx") is not None:
        args += ["--padding-idx", spec["padding_idx"]]
    code, out, err = cli(*args)
    assert code == 0, err
    assert np.load(io.BytesIO(out)).tobytes() == table.tobytes()


def _identification_samples():
    """One rotary module for each way transformers makes a table from a config of one layer
    type (layout, arithmetic, rope_type, partial rotary), found from the data and the default
    configs rather than listed."""
    data = json.loads(tm.DATA.read_text())
    seen = {}
    for rotary in MODULES:
        if not rotary.takes_positions or isinstance(built := tm.usable(rotary), str):
            continue
        module, config, node, path = built
        rope = getattr(node, "rope_parameters", None) or {}
        if tm.layer_types(module, node) or "axial" in str(rope):
            continue
        table = data.get(node.model_type, {}).get("table", {})
        key = (
            json.dumps(table, sort_keys=True),
            rope.get("rope_type"),
            rope.get("partial_rotary_factor", 1.0) < 1,
        )
        seen.setdefault(key, rotary)
    return list(seen.values())


@pytest.mark.parametrize("rotary", _identification_samples(), ids=lambda r: f"{r.model}.{r.name}")
def test_rotary_table_is_identified(rotary, cli, tmp_path):
    """`compare FILE` names a module's cos and sin tables bit for bit: pairing, arithmetic,
    theta and the scaling parameters, fitted from the table."""
    import numpy as np
    import torch

    module, config, node, path = tm.usable(rotary)
    cos, sin = tc._module_table(module, torch.arange(0, 512), None)
    for part, table in (("cos", cos), ("sin", sin)):
        file = tmp_path / f"{part}.npy"
        np.save(file, table.float().numpy())
        code, out, err = cli("compare", file, "--json")
        assert code == 0, err
        best = json.loads(out)["candidates"][0]
        assert best["differing"] == 0, (part, best["name"], best["max_ulps"])


def _layout_samples():
    """One rotary module per way its table is laid out or computed (transformers.json's
    "table" entries), to run through the command line."""
    data = json.loads(tm.DATA.read_text())
    seen = {}
    for rotary in MODULES:
        if not rotary.takes_positions or isinstance(built := tm.build(rotary), str):
            continue
        table = data.get(built[2].model_type, {}).get("table")
        if table:
            seen.setdefault(json.dumps(table, sort_keys=True), rotary)
    return list(seen.values())


@pytest.mark.parametrize("rotary", _layout_samples(), ids=lambda r: f"{r.model}.{r.name}")
def test_the_command_line_takes_the_layout_from_the_config(rotary, cli, tmp_path):
    """`pe-cli export --rope-config config.json --variant hf-rope` (with --grid for a
    multi-axis module) writes the module's cos and sin: the command line's defaults must not
    hide the config's layout, arithmetic or merge size."""
    import torch
    from safetensors.numpy import load_file

    from pe_cli.families.rope import LAYOUTS as AXES
    from pe_cli.families.rope.tokens import axes_positions
    from pe_cli.options import Options

    data = json.loads(tm.DATA.read_text())
    built = tm.build(rotary)
    table = data[built[2].model_type]["table"]
    style = AXES.get(table.get("axes", ""))
    if style is None or not style.vision:
        built = tm.usable(rotary)
    module, config, node, part = built
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string())
    args = ["--rope-config", path, "--variant", "hf-rope"] + (
        ["--config-part", part] if part else []
    )
    kinds = tm.layer_types(module, node)
    args += ["--layer-type", kinds[0]] if kinds else []
    options = {
        "rope_config": str(path),
        "config_part": part or None,
        "layer_type": kinds[0] if kinds else None,
        "variant": "hf-rope",
        "seq_len": 64,
    }
    if style is not None:
        merge = (getattr(node, "spatial_merge_size", 1) or 1) if style.merged else 1
        grid = tm._grid(style)(merge)
        args += ["--grid", grid]
        positions = tm.module_input(
            style,
            axes_positions(Options(options, grid=grid).spec()),
            table.get("positions", "rc"),
        )
    else:
        args += ["-l", 64]
        positions = torch.arange(64)
    out = tmp_path / "out.safetensors"
    code, _, err = cli("export", out, *args)
    assert code == 0, err
    tensors = load_file(str(out))
    cos, sin = tc._module_table(module, positions, kinds[0] if kinds else None)
    assert np.array_equal(tensors["cos"], cos.numpy()) and np.array_equal(
        tensors["sin"], sin.numpy()
    )


def test_readme_model_table_is_the_tests_results():
    """docs/rope.md's table of models is what these tests find (rewrite it with
    `python -m tools.transformers_models --readme`)."""
    assert tc.readme_section() in tc.README.read_text()
