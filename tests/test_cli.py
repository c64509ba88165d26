"""The command line: stdout carries data or the summary, stderr one line per error, exit codes."""

import io

import numpy as np
import pytest
from safetensors.torch import load_file

from pe_cli import __version__
from pe_cli.engine import build


def test_summary_without_output(cli):
    code, out, err = cli("generate", "--d-model", 8, "--seq-len", 5)
    text = out.decode()
    assert code == 0 and err == ""
    assert "5 x 8" in text and "float32" in text and "exact" in text and "sha256" in text
    assert "0.84147096" in text  # sin(1), a corner value, in float32's shortest form
    assert "\x1b[" not in text  # no escape codes when not on a terminal


def test_npy_to_stdout_is_data_only(cli):
    code, out, err = cli("generate", "-d", 16, "-l", 9, "-o", "-")
    assert code == 0 and err == ""
    table = np.load(io.BytesIO(out), allow_pickle=False)
    assert np.array_equal(table, build(d_model=16, seq_len=9).numpy())


@pytest.mark.parametrize(
    "args,expected_shape",
    [(["--shape", "batch-first"], (1, 9, 16)), (["--shape", "seq-first"], (9, 1, 16))],
)
def test_shapes(cli, args, expected_shape):
    code, out, _ = cli("generate", "-d", 16, "-l", 9, "-o", "-", *args)
    assert np.load(io.BytesIO(out)).shape == expected_shape


def test_every_convention_variant_and_dtype_generates(cli, tmp_path):
    for convention in ("vaswani", "concat", "tensor2tensor", "fairseq", "whisper"):
        code, out, err = cli("generate", "-d", 8, "-l", 4, "--convention", convention, "-o", "-")
        assert code == 0, err
    for variant in ("exact", "pow", "exp-log", "neg-pow", "exp-div", "stack"):
        for dtype in ("float32", "float64", "float16", "bfloat16"):
            path = tmp_path / f"{variant}-{dtype}.safetensors"
            code, _, err = cli(
                "generate", "-l", 4, "--variant", variant, "--dtype", dtype, "-o", path
            )
            assert code == 0, err
            loaded = load_file(path)["pe"]
            assert loaded.shape == (4, 512) and str(loaded.dtype) == f"torch.{dtype}"


def test_export_several_tables_with_metadata(cli, tmp_path):
    path = tmp_path / "tables.safetensors"
    code, out, err = cli(
        "export",
        path,
        "-d",
        8,
        "-l",
        6,
        "--variant",
        "exact",
        "--variant",
        "exp-log",
        "--dtype",
        "float32",
        "--dtype",
        "float16",
    )
    assert code == 0 and out == b""
    assert err.count("\n") == 1 and all(
        name in err for name in ("exact.float16", "exp-log.float32")
    )
    from safetensors import safe_open

    with safe_open(str(path), "np") as f:
        assert sorted(f.keys()) == [
            "exact.float16",
            "exact.float32",
            "exp-log.float16",
            "exp-log.float32",
        ]
        meta = f.metadata()
    assert meta["exp-log.float16.variant"] == "exp-log" and meta["pe_cli.version"] == __version__


def test_export_to_stdout_as_csv(cli):
    code, out, err = cli("export", "-", "-d", 4, "-l", 3, "--format", "csv")
    assert code == 0 and err == ""
    assert out.decode().splitlines()[0] == "position,d0,d1,d2,d3"
    assert len(out.decode().splitlines()) == 4


def test_existing_file_is_kept_without_force(cli, tmp_path):
    path = tmp_path / "pe.npy"
    path.write_bytes(b"old")
    code, _, err = cli("generate", "-o", path)
    assert code == 2 and "--force" in err and path.read_bytes() == b"old"
    code, _, _ = cli("generate", "-d", 4, "-l", 2, "-o", path, "--force")
    assert code == 0 and np.load(path).shape == (2, 4)


BAD = [
    (["--d-model", "0"], "--d-model must be >= 1"),
    (["--d-model", "-3"], "--d-model must be >= 1"),
    (["--d-model", "abc"], "d-model"),
    (["--d-model", "1.5"], "d-model"),
    (["--seq-len", "0"], "--seq-len must be >= 1"),
    (["--convention", "fairseq", "-d", "3"], "fairseq divides"),
    (["--convention", "whisper", "-d", "6", "-l", "2", "--offset", "0", "-d", "7"], "even"),
    (["--convention", "whisper", "-d", "2"], "whisper"),
    (["--base", "1"], "--base must be a finite number > 1"),
    (["--base", "0.5"], "--base must be a finite number > 1"),
    (["--base", "nan"], "--base must be a finite number > 1"),
    (["--offset", "-1"], "--offset must be >= 0"),
    (["--offset", str(2**32)], "below 2**32"),
    (["--variant", "nope"], "nope"),
    (["--convention", "nope"], "nope"),
    (["--dtype", "int8"], "int8"),
    (["--device", "tpu"], "tpu"),
    (["--format", "xls", "-o", "-"], "xls"),
    (["--variant", "pow", "--convention", "concat"], "vaswani convention only"),
    (["--compute-dtype", "float16"], "applies to the seed variants"),
    (["--padding-idx", "1"], "fairseq"),
    (["--dtype", "bfloat16", "-o", "-"], "npy has no bfloat16"),
    (["-d", "100000", "-l", "100000000", "--variant", "pow"], "255 TiB of memory"),
    (["-o", "/no/such/folder/pe.npy"], "does not exist"),
    (["-o", "pe.xyz"], "cannot tell the format"),
]


@pytest.mark.parametrize("args,message", BAD)
def test_bad_input_is_one_line_and_exit_2(cli, args, message):
    code, out, err = cli("generate", *args)
    assert code == 2, err
    assert out == b""
    assert err.count("\n") == 1 and err.startswith("Error: ") and message in err
    assert "Traceback" not in err


def test_cuda_absent_is_one_line(cli):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")  # pragma: no cover
    code, _, err = cli("generate", "--device", "cuda")
    assert code == 2 and err.startswith("Error: --device cuda: CUDA is not available")


def test_auto_device_picks_what_is_here(cli):
    code, out, _ = cli("generate", "-d", 4, "-l", 2, "--device", "auto")
    assert code == 0 and "device" in out.decode()


def test_debug_variable_shows_the_traceback(monkeypatch):
    from pe_cli.cli.app import app
    from pe_cli.core.errors import BadInput

    monkeypatch.setenv("PE_CLI_DEBUG", "1")
    with pytest.raises(BadInput):
        app(["generate", "-d", "0"], standalone_mode=False)


def test_version_and_help(cli):
    assert cli("--version")[1].decode().strip() == f"pe-cli {__version__}"
    code, out, _ = cli()
    assert code == 0 and "generate" in out.decode() and "export" in out.decode()


@pytest.mark.parametrize(
    "args",
    [["--device", "cuda"], ["--variant", "pow", "--compute-dtype", "float16", "-l", "70000"]],
)
def test_refusals_write_nothing_to_stdout(cli, args):
    import torch

    if torch.cuda.is_available() and "cuda" in args:
        pytest.skip("this machine has CUDA")  # pragma: no cover
    code, out, err = cli("generate", "-o", "-", *args)
    assert code == 2 and out == b"" and err.startswith("Error: ")
