"""Hostile input, faults and interruptions: a table, or one line on stderr; never a traceback,
a partial file, or anything unpickled."""

import io
import os
import pickle
import resource
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pe_cli.core.dtypes import DTYPE_NAMES
from pe_cli.families.sinusoidal.conventions import CONVENTIONS
from pe_cli.spec import SHAPES, VARIANT_NAMES, TableSpec

from . import reference
from .terminal import run_on_terminal

PE_CLI = [sys.executable, "-m", "pe_cli"]
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _one_line_error(code, out, err):
    assert code != 0
    assert out == b"", "nothing may reach stdout when a run fails"
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "unexpected" not in err, err


@st.composite
def generate_options(draw):
    large = draw(st.booleans())
    d = draw(
        st.sampled_from([1, 2, 3, 4])
        if large
        else st.one_of(st.integers(1, 48), st.sampled_from([0, -3]))
    )
    seq_len = draw(
        st.sampled_from([2**16, 2**20])
        if large
        else st.one_of(st.integers(1, 40), st.sampled_from([0, -1]))
    )
    options = {
        "--d-model": d,
        "--seq-len": seq_len,
        "--variant": draw(st.sampled_from([*VARIANT_NAMES, "exp_log", "nope"])),
        "--dtype": draw(st.sampled_from([*DTYPE_NAMES, "int8"])),
        "--base": draw(
            st.one_of(
                st.sampled_from(
                    [10000.0, 500000.0, 2.0, 1.0, 0.5, -3.0, float("inf"), float("nan")]
                ),
                st.floats(1.001, 1e7),
            )
        ),
        "--offset": draw(
            st.one_of(st.integers(0, 2**20), st.sampled_from([-1, 2**32 - 50, 2**32]))
        ),
        "--device": draw(st.sampled_from(["cpu", "cpu", "cpu", "auto", "cuda", "mps"])),
        "--format": draw(st.sampled_from(["npy", "npy", "safetensors", "raw", "csv", "tsv"])),
    }
    for flag, values in (
        ("--convention", [*CONVENTIONS, "vaswanni"]),
        ("--shape", [*SHAPES, "3d"]),
        ("--compute-dtype", DTYPE_NAMES),
        ("--padding-idx", [0, 1, 5, -2]),
        ("--min-timescale", [0.5, 2.0, 0.0]),
    ):
        if draw(st.integers(0, 4)) == 0:
            options[flag] = draw(st.sampled_from(values))
    return options


def _spec_of(options):
    names = {
        "--d-model": "d_model",
        "--seq-len": "seq_len",
        "--variant": "variant",
        "--dtype": "dtype",
        "--base": "base",
        "--offset": "offset",
        "--convention": "convention",
        "--shape": "shape",
        "--compute-dtype": "compute_dtype",
        "--padding-idx": "padding_idx",
        "--min-timescale": "min_timescale",
    }
    return TableSpec(**{names[k]: v for k, v in options.items() if k in names})


def _read(out: bytes, fmt: str, spec: TableSpec) -> np.ndarray:
    """The written table as float64 in its shape, read by independent readers."""
    if fmt == "npy":
        return np.load(io.BytesIO(out), allow_pickle=False).astype(np.float64)
    if fmt == "safetensors":
        from safetensors.torch import load

        return load(out)["pe"].double().numpy()
    if fmt == "raw":
        storage = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "bfloat16": "<u2"}[
            spec.dtype
        ]
        values = np.frombuffer(out, storage)
        if spec.dtype == "bfloat16":
            values = (values.astype(np.uint32) << 16).view(np.float32)
        return values.astype(np.float64).reshape(spec.dims)
    rows = [line.split("," if fmt == "csv" else "\t")[1:] for line in out.decode().splitlines()[1:]]
    # each value is the shortest text that reads back to it in its dtype (bfloat16's as float32)
    text_dtype = {
        "float64": np.float64,
        "float32": np.float32,
        "float16": np.float16,
        "bfloat16": np.float32,
    }
    return np.array(rows, dtype=text_dtype[spec.dtype]).astype(np.float64).reshape(spec.dims)


@SETTINGS
@given(options=generate_options(), data=st.data())
def test_generate_gives_a_table_or_one_line(cli, options, data):
    args = [str(a) for pair in options.items() for a in pair]
    code, out, err = cli("generate", *args, "-o", "-")
    if code != 0:
        _one_line_error(code, out, err)
        return
    assert err == ""
    spec = _spec_of(options)  # it ran, so the parameters are valid
    table = _read(out, options["--format"], spec)
    assert table.shape == spec.dims and np.all(np.isfinite(table))
    if spec.variant == "exact":
        flat = table.reshape(spec.seq_len, spec.d_model)
        for _ in range(3):
            i = data.draw(st.integers(0, spec.seq_len - 1))
            j = data.draw(st.integers(0, spec.d_model - 1))
            truth = reference.value(
                spec.convention,
                spec.d_model,
                spec.base,
                spec.offset + i,
                j,
                spec.padding_idx,
                spec.min_timescale,
            )
            assert flat[i, j] == reference.round_to(truth, spec.dtype)


@pytest.mark.parametrize("value", ["", "abc", "1e3", "-", "5.0", "0x10"])
@pytest.mark.parametrize("option", ["--d-model", "--seq-len", "--offset", "--padding-idx"])
def test_non_numeric_and_empty_values(cli, option, value):
    _one_line_error(*cli("generate", option, value))


def test_unknown_names_say_did_you_mean(cli):
    for args, suggestion in (
        (["--variant", "exp_log"], "did you mean 'exp-log'?"),
        (["--convention", "vaswanni"], "did you mean 'vaswani'?"),
        (["--dtype", "bfloat"], "did you mean 'bfloat16'?"),
        (["--format", "safetensor", "-o", "-"], "did you mean 'safetensors'?"),
    ):
        code, out, err = cli("generate", *args)
        _one_line_error(code, out, err)
        assert suggestion in err


def test_huge_sizes_are_refused_before_allocating(cli, tmp_path):
    code, out, err = cli("generate", "-d", "100000", "-l", "100000000", "--variant", "pow")
    _one_line_error(code, out, err)
    assert "TiB of memory" in err
    code, out, err = cli("generate", "-d", "100000", "-l", "4000000000")
    _one_line_error(code, out, err)
    assert "too many to summarize" in err
    for show in (["show"], ["show", "--json"], ["show", "--precision", "bf16", "--family", "rope"]):
        # every element of it would be gone through for its facts: minutes, so refused at once
        code, out, err = cli(*show, "-d", 16384, "-l", 16777216)
        _one_line_error(code, out, err)
        assert "2.75e+11 elements, too many to summarize; show a shorter one (-l)" in err
    code, out, err = cli("show", "-d", 16384, "-l", 8192, "--rows", "0:2")  # 2**27 elements: shown
    assert code == 0 and "too many" not in err
    code, out, err = cli("export", tmp_path / "huge.npy", "-d", "100000", "-l", "4000000000")
    _one_line_error(code, out, err)
    assert "is free there" in err and not list(tmp_path.iterdir())


# ------------------------------------------------------------------------- files we are handed


@pytest.fixture(scope="module")
def valid_files(tmp_path_factory):
    """A .npy and a two-tensor .safetensors written by pe-cli, as bytes."""
    from pe_cli.io import write as pe_io

    folder = tmp_path_factory.mktemp("valid")
    spec = TableSpec(d_model=8, seq_len=6)
    pe_io.write(str(folder / "good.npy"), spec)
    pe_io.write(
        str(folder / "good.safetensors"),
        {"pe": spec, "other": TableSpec(d_model=8, seq_len=6, dtype="bfloat16")},
    )
    return (folder / "good.npy").read_bytes(), (folder / "good.safetensors").read_bytes()


@SETTINGS
@given(data=st.data())
def test_damaged_files_never_crash(cli, tmp_path, valid_files, data):
    npy, safetensors = valid_files
    original, suffix = data.draw(st.sampled_from([(npy, ".npy"), (safetensors, ".safetensors")]))
    damaged = bytearray(original)
    how = data.draw(st.sampled_from(["truncate", "flip", "both"]))
    if how in ("truncate", "both"):
        damaged = damaged[: data.draw(st.integers(0, len(damaged) - 1))]
    if how in ("flip", "both") and damaged:
        for _ in range(data.draw(st.integers(1, 8))):
            k = data.draw(st.integers(0, min(len(damaged), 160) - 1))
            damaged[k] = data.draw(st.integers(0, 255))
    assume(bytes(damaged) != original)
    path = tmp_path / f"damaged{suffix}"
    path.write_bytes(bytes(damaged))
    source = f"{path}:pe" if suffix == ".safetensors" else str(path)
    for command in (["show", source], ["compare", source], ["compare", source, "exact"]):
        code, out, err = cli(*command)
        if code == 2:
            _one_line_error(code, out, err)
        else:  # the damage left a readable table
            assert code in (0, 1) and "Traceback" not in err and "unexpected" not in err


class _Exploit:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ['PE_CLI_MARKER']}",))


def test_pickled_npy_is_never_unpickled(cli, tmp_path, monkeypatch):
    proof = tmp_path / "unpickled"
    monkeypatch.setenv("PE_CLI_MARKER", str(proof))
    pickle.loads(pickle.dumps(_Exploit()))  # unpickling this payload does run a command
    assert proof.exists()
    marker = tmp_path / "executed"
    monkeypatch.setenv("PE_CLI_MARKER", str(marker))
    path = tmp_path / "exploit.npy"
    np.save(path, np.array([_Exploit()], dtype=object), allow_pickle=True)
    for command in (["show", path], ["compare", path], ["compare", path, "exact"]):
        code, out, err = cli(*command)
        _one_line_error(code, out, err)
        assert "never unpickles" in err
    assert not marker.exists()


def test_layouts_numpy_writes_are_read_correctly(cli, tmp_path):
    from pe_cli.engine import build

    table = build(d_model=8, seq_len=20).numpy()
    cases = {
        "fortran.npy": np.asfortranarray(table),
        "bigendian.npy": table.astype(">f4"),
        "strided.npy": np.concatenate([table, table], axis=1)[:, ::2],  # saved from a view
        "float16.npy": table.astype(np.float16),
    }
    for name, array in cases.items():
        np.save(tmp_path / name, array)
        report = __import__("json").loads(cli("show", tmp_path / name, "--json")[1])
        assert report["shape"] == [20, 8]
        assert report["min"] == pytest.approx(float(array.min()))
    for name in ("fortran.npy", "bigendian.npy"):
        code, out, _ = cli("compare", tmp_path / name, "exact", "--json")
        assert __import__("json").loads(out)["differing"] == 0, name


@pytest.mark.parametrize(
    "array,message",
    [
        (np.zeros((3, 3), np.int32), "not a floating-point table"),
        (np.zeros((3, 3), np.complex64), "not a floating-point table"),
        (np.zeros((0, 4), np.float32), "is empty"),
        (np.zeros((2, 3, 4), np.float32), "no obvious 2-D"),
        (
            np.zeros((2, 2, 3, 4), np.float32),
            "no obvious 2-D",
        ),  # 1-D vectors are ALiBi slopes or inv_freq
    ],
)
def test_unusable_arrays_are_refused(cli, tmp_path, array, message):
    path = tmp_path / "table.npy"
    np.save(path, array)
    for command in (["show", path], ["compare", path]):
        code, out, err = cli(*command)
        _one_line_error(code, out, err)
        assert message in err


def test_files_of_many_tensors(cli, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "many.safetensors"
    save_file({f"t{k}": np.full((4, 2), k, np.float32) for k in range(40)}, path)
    code, out, err = cli("show", path)
    _one_line_error(code, out, err)
    assert "holds 40 tensors" in err
    assert "4 x 2" in cli("show", f"{path}:t39")[1].decode()


# ----------------------------------------------------------------------------------- writing


def test_file_size_limit_leaves_nothing_behind(tmp_path):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    target = tmp_path / "big.npy"
    result = subprocess.run(
        [*PE_CLI, "export", str(target), "-d", "512", "-l", "4096"],
        capture_output=True,
        preexec_fn=limit,
        timeout=120,
    )
    assert result.returncode == 1
    assert (
        result.stderr.decode().startswith("Error: writing") and b"File too large" in result.stderr
    )
    assert result.stderr.count(b"\n") == 1 and list(tmp_path.iterdir()) == []


def test_read_only_folder(cli, tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    # immutable: even root cannot create files in it (a chmod would not stop root)
    subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        code, out, err = cli("generate", "-d", "8", "-l", "4", "-o", folder / "pe.npy")
        _one_line_error(code, out, err)
        assert "cannot write in folder" in err
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert list(folder.iterdir()) == []


def test_output_path_is_a_directory(cli, tmp_path):
    _one_line_error(*cli("generate", "-o", tmp_path))
    _one_line_error(*cli("export", tmp_path, "--format", "npy"))


# ------------------------------------------------------------------------ terminals and pipes


def _on_terminal(args, env=None, columns=80):
    return run_on_terminal(args, env=env, columns=columns)


def test_colour_on_a_terminal_and_none_with_no_color():
    code, shown = _on_terminal(["show", "-d", "32", "-l", "32", "--heatmap"])
    assert code == 0 and b"\x1b[" in shown
    code, shown = _on_terminal(["show", "-d", "32", "-l", "32", "--heatmap"], env={"NO_COLOR": "1"})
    assert code == 0 and b"\x1b[" not in shown


@pytest.mark.parametrize(
    "command",
    [["generate", "-d", "512"], ["show", "-d", "512"], ["compare", "-d", "64", "-l", "256"]],
)
def test_narrow_terminals(command):
    code, shown = _on_terminal(command, env={"NO_COLOR": "1"}, columns=40)
    assert code == 0
    widths = [len(line.decode()) for line in shown.replace(b"\r", b"").split(b"\n")]
    assert max(widths) <= 40, max(widths)


def test_no_escape_codes_in_pipes(cli):
    for command in (
        ["generate", "-d", "16"],
        ["show", "-d", "16", "--heatmap"],
        ["compare", "-d", "16", "-l", "32"],
    ):
        code, out, err = cli(*command, env={"FORCE_COLOR": None})
        assert code == 0 and b"\x1b[" not in out


def test_errors_never_show_a_traceback_even_for_bugs(cli, monkeypatch):
    from pe_cli import engine

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(engine, "_kernel_blocks", broken)
    monkeypatch.setattr(engine, "_fast_blocks", broken)
    code, out, err = cli("generate", "-d", "8", "-l", "4")
    assert (
        code == 1 and err.startswith("Error: unexpected ZeroDivisionError") and err.count("\n") == 1
    )


def test_files_too_large_for_memory_are_refused_before_reading(cli, tmp_path, monkeypatch):
    from pe_cli import engine
    from pe_cli.io import read

    path = tmp_path / "table.npy"
    np.save(path, np.zeros((1000, 64), np.float32))
    for module in (engine, read):
        monkeypatch.setattr(module, "available_memory", lambda: 100_000)  # a 100 kB machine
    for command in (["show", path], ["compare", path]):
        code, out, err = cli(*command)
        _one_line_error(code, out, err)
        assert "of memory" in err


@pytest.mark.parametrize("axes", ["mrope-interleaved", "mrope-ernie"])
def test_an_mrope_section_of_too_few_sizes_is_refused(cli, axes):
    """Qwen3-VL's and ERNIE's M-RoPE read three sections: two are refused in one line."""
    code, out, err = cli(
        "generate", "--family", "rope", "-d", 64, "--rope-axes", axes,
        "--rope", "mrope_section=16,16", "--grid", "1x2x2",
    )  # fmt: skip
    _one_line_error(code, out, err)
    assert "takes mrope_section as 3 sizes, one per axis, got 2: 16,16" in err


def test_cosmos3_of_two_axes_is_refused(cli):
    """Cosmos 3 places its sound and action tokens on (t, 0, 0): an axes_dim of two axes is
    refused in one line (it was an unexpected ValueError)."""
    code, out, err = cli(
        "generate", "--family", "rope", "-d", 16, "--rope-axes", "cosmos3",
        "--rope", "axes_dim=8,8", "--grid", "2x3",
    )  # fmt: skip
    _one_line_error(code, out, err)
    assert "--rope-axes cosmos3 places its tokens on 3 axes (t, h, w): its axes_dim has 2" in err
