"""The families through the command line: export, show, compare, identify."""

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from .libraries import LLAMA31


def test_export_rope_writes_cos_and_sin_with_their_parameters(cli, tmp_path):
    path = tmp_path / "rope.safetensors"
    code, _, err = cli(
        "export",
        path,
        "--family",
        "rope",
        "-d",
        64,
        "-l",
        100,
        "--base",
        500000,
        "--rope",
        "rope_type=yarn",
        "--rope",
        "factor=4",
        "--rope",
        "original_max_position_embeddings=64",
    )
    assert code == 0, err
    tensors = load_file(str(path))
    assert sorted(tensors) == ["cos", "sin"] and tensors["cos"].shape == (100, 64)
    from pe_cli.io.read import read

    loaded = read(f"{path}:sin")
    assert loaded.spec.family == "rope" and loaded.spec.part == "sin"
    assert dict(loaded.spec.rope) == {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 64,
    }
    # yarn's attention factor 0.1 ln 4 + 1 scales row 0 of cos
    assert tensors["cos"][0, 0] == np.float32(0.1 * np.log(4) + 1)


def test_rope_config_file(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA31))
    code, out, err = cli("generate", "--rope-config", config, "--part", "inv_freq", "-o", "-")
    assert code == 0, err
    import io

    inv_freq = np.load(io.BytesIO(out))
    assert (
        inv_freq.shape == (64,)
        and inv_freq[0] == 1.0
        and inv_freq[-1] < 500000.0 ** (-126 / 128) / 7.9
    )


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--family", "rope", "--rope", "factor"), "not KEY=VALUE"),
        (("--family", "rope", "--rope", "rope_type=llama3"), "needs factor"),
        (("--family", "alibi", "--base", 500), "ALiBi slopes have no --base"),
        (("--family", "sincos2d"), "needs --grid"),
        (("--family", "sincos2d", "--grid", "4x4", "--offset", 3), "--offset does not apply"),
        (("--heads", 4), "belongs to --family alibi"),
    ],
)
def test_family_errors_are_one_line(cli, args, needle):
    code, out, err = cli("generate", *args)
    assert code == 2 and out == b"" and needle in err and err.count("\n") == 1


def _identify(cli, path):
    code, out, err = cli("compare", path)
    assert code == 0, err
    return " ".join(out.decode().split())


def test_identifies_each_family(cli, tmp_path):
    cases = {
        "rope.npy": (
            (
                "--family",
                "rope",
                "-d",
                64,
                "-l",
                300,
                "--base",
                500000,
                "--part",
                "sin",
                "--convention",
                "interleaved",
            ),
            "matches rope sin, interleaved pairing, base 500000",
        ),
        "hf.npy": (
            (
                "--family",
                "rope",
                "--variant",
                "hf-rope",
                "-d",
                32,
                "-l",
                200,
                "--rope",
                "rope_type=linear",
                "--rope",
                "factor=2",
            ),
            "matches library hf-rope",
        ),
        "alibi.npy": (
            ("--family", "alibi", "--heads", 12, "-l", 30, "--part", "symmetric"),
            "matches alibi symmetric (Press et al. slopes), heads 12",
        ),
        "bloom.npy": (
            ("--family", "alibi", "--variant", "bloom", "--heads", 24),
            "matches library bloom",
        ),
        "mae.npy": (
            ("--family", "sincos2d", "--variant", "mae", "--grid", "8", "-d", 64, "--cls-token"),
            "matches sincos2d mae, grid 8x8",
        ),
        "timm.npy": (
            (
                "--family",
                "sincos2d",
                "--variant",
                "timm",
                "--grid",
                "6x10",
                "-d",
                32,
                "--convention",
                "timm-interleaved",
            ),
            "matches library timm",
        ),
        "pe2d.npy": (
            (
                "--family",
                "sincos2d",
                "--variant",
                "positional-encodings",
                "--grid",
                "6x5",
                "-d",
                30,
            ),
            "matches library positional-encodings",
        ),
    }
    for name, (args, expected) in cases.items():
        path = tmp_path / name
        code, _, err = cli("generate", *args, "-o", path)
        assert code == 0, err
        text = _identify(cli, path)
        assert expected in text and "bit for bit" in text, text


@pytest.mark.parametrize(
    "rope, rows",
    [
        (
            (
                "rope_type=llama3",
                "factor=8",
                "low_freq_factor=1",
                "high_freq_factor=4",
                "original_max_position_embeddings=8192",
            ),
            2000,
        ),
        (("rope_type=yarn", "factor=16", "original_max_position_embeddings=4096"), 2000),
        # dynamic NTK past max_position_embeddings: a plain table whose base grew with the length
        (("rope_type=dynamic", "factor=4", "max_position_embeddings=2048"), 3000),
    ],
)
def test_identification_fits_the_scaling(cli, tmp_path, rope, rows):
    path = tmp_path / "scaled.npy"
    options = [item for pair in rope for item in ("--rope", pair)]
    code, _, err = cli(
        "generate",
        "--family",
        "rope",
        "-d",
        64,
        "-l",
        rows,
        "--base",
        500000,
        *options,
        "--variant",
        "hf-rope",
        "-o",
        path,
    )
    assert code == 0, err
    code, out, err = cli("compare", path, "--json")
    best = json.loads(out)["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["base"] == 500000
    found = {k: v for k, v in best["spec"]["rope"]}  # and defaults written out (YaRN's betas)
    assert {
        k: (v if k == "rope_type" else float(v)) for k, v in (pair.split("=") for pair in rope)
    }.items() <= found.items()


def test_identification_says_when_no_common_scaling_fits(cli, tmp_path):
    path = tmp_path / "llama3.npy"
    cli(
        "generate",
        "--family",
        "rope",
        "-d",
        64,
        "-l",
        400,
        "--rope",
        "rope_type=llama3",
        "--rope",
        "factor=8",
        "--rope",
        "low_freq_factor=1",
        "--rope",
        "high_freq_factor=4",
        "--rope",
        "original_max_position_embeddings=64",
        "-o",
        path,
    )
    assert "no common llama3 or YaRN setting fits" in " ".join(_identify(cli, path).split())


def test_compare_explains_mae_versus_timm(cli, tmp_path):
    path = tmp_path / "mae.npy"
    cli(
        "generate",
        "--family",
        "sincos2d",
        "--variant",
        "mae",
        "--grid",
        "14",
        "-d",
        64,
        "--cls-token",
        "-o",
        path,
    )
    code, out, _ = cli(
        "compare", path, "exact:timm", "--family", "sincos2d", "--grid", "14", "--d-model", 64
    )
    text = " ".join(out.decode().split())
    assert "class token" in text and "column blocks of d/4 = 16 in another order" in text
    # timm [sin y | sin x | cos y | cos x] is MAE [sin x | cos x | sin y | cos y] reordered
    assert "exact:timm's blocks are " + str(path) + "'s blocks 2, 0, 3, 1" in text


def test_rope_precision_audit(cli):
    code, out, err = cli("compare", "--family", "rope", "-d", 64, "-l", 2048, "--json")
    assert code == 0, err
    rows = {row["variant"]: row for row in json.loads(out)}
    # bfloat16 holds integers exactly up to 256; position 257 rounds to 256
    assert rows["rope-positions (bfloat16)"]["first_over"] == 257
    assert rows["hf-rope"]["max_abs"] < 1e-3 < rows["rope-table (bfloat16)"]["max_abs"]
    assert rows["rope-inv-freq (bfloat16)"]["first_over"] <= 8


def test_show_reads_an_alibi_file(cli, tmp_path):
    path = tmp_path / "alibi.safetensors"
    cli("export", path, "--family", "alibi", "--heads", 4, "-l", 8)
    code, out, err = cli("show", path, "--rows", "8:10")
    text = out.decode()
    assert code == 0, err
    assert "h1 q0" in text and "h1 q1" in text and "-0.0625" in text
