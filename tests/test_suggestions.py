"""Names a user gives: one did-you-mean wherever a name is taken (options, rope keys, compare's
table specs, the Python API), the current family's names first, short one-line lists; the
dtype aliases people type; and --device errors that say what to do."""

import numpy as np
import pytest
from safetensors import safe_open

import pe_cli
from pe_cli.core.errors import BadInput
from pe_cli.core.names import LISTED, did_you_mean, unknown
from pe_cli.families import FAMILIES, VARIANT_NAMES


def _one_line(code, out, err) -> str:
    assert code == 2 and out == b"", err
    assert err.startswith("Error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert "unexpected" not in err and len(err) < 240, err
    return err


@pytest.mark.parametrize(
    "args,suggestion",
    [
        (["--variant", "exp_log"], "'exp-log'"),
        (["--family", "rop"], "'rope'"),
        (["--convention", "vaswanni"], "'vaswani'"),
        (["--family", "rope", "--part", "coss"], "'cos'"),
        (["--dtype", "bfloat"], "'bfloat16'"),
        (["--dtype", "fp3"], "'fp32'"),
        (["--compute-dtype", "flaot16", "--variant", "pow"], "'float16'"),
        (["--shape", "batch_first"], "'batch-first'"),
        (["--device", "cpuu"], "'cpu'"),
        (["--family", "rope", "--preset", "flx"], "'flux'"),
        (["--family", "rope", "--rope-axes", "mrop"], "'mrope'"),
        (["--family", "rope", "--rope-arithmetic", "polr"], "'polar'"),
        (["--family", "rope", "--variant", "diffusers", "--freqs-dtype", "float46"], "'float64'"),
        (["--family", "rope", "--rope", "factr=2"], "'factor'"),
        (["--family", "rope", "--rope", "rope_type=yarm", "--rope", "factor=2"], "'yarn'"),
        (["--format", "safetensor", "-o", "-"], "'safetensors'"),
    ],
)
def test_a_near_miss_gets_one_suggestion(cli, args, suggestion):
    err = _one_line(*cli("generate", *args))
    assert err.endswith(f"(did you mean {suggestion}?)\n"), err


@pytest.mark.parametrize(
    "args",
    [
        ["--variant", "exp-log"],
        ["--family", "rope"],
        ["--convention", "vaswani"],
        ["--family", "rope", "--part", "cos"],
        ["--dtype", "bfloat16"],
        ["--dtype", "fp32"],
        ["--compute-dtype", "float16", "--variant", "pow"],
        ["--shape", "batch-first"],
        ["--device", "cpu"],
        ["--family", "rope", "--preset", "flux", "--grid", "1x2x2", "-d", "128"],
        [
            "--family",
            "rope",
            "--rope-axes",
            "mrope",
            "--grid",
            "1x2x2",
            "--rope",
            "mrope_section=1,1,2",
        ],
        ["--family", "rope", "--rope-arithmetic", "polar"],
        ["--family", "rope", "--variant", "diffusers", "--freqs-dtype", "float64"],
        [
            "--family",
            "rope",
            "--rope",
            "rope_type=yarn",
            "--rope",
            "factor=2",
            "--rope",
            "original_max_position_embeddings=2",
        ],
    ],
)
def test_a_good_name_gets_no_suggestion(cli, args):
    length = [] if "--grid" in args else ["-l", 4]  # a grid's tokens are its rows
    code, out, err = cli("generate", "-d", 8, *length, *args)
    assert code == 0 and err == "" and b"did you mean" not in out, err


def test_suggestions_look_in_the_current_familys_names_first(cli):
    # 'abgle' is closer to sincos2d's 'table' over all parts, but rope has 'angle'
    err = _one_line(*cli("generate", "--family", "rope", "--part", "abgle"))
    assert "(did you mean 'angle'?)" in err
    err = _one_line(*cli("generate", "--family", "alibi", "--variant", "mpw"))
    assert "(did you mean 'mpt'?)" in err  # over all variants 'pow' is closer
    assert did_you_mean("mpw", VARIANT_NAMES) == " (did you mean 'pow'?)"


def test_a_bad_name_lists_the_familys_names_in_a_short_line(cli):
    err = _one_line(*cli("generate", "--family", "rope", "--variant", "zzz"))
    own = ["exact", *FAMILIES["rope"].variants]
    assert len(own) > LISTED + 1  # one name more would be listed whole
    assert err == (
        f"Error: unknown --variant 'zzz'; choose from {', '.join(own[:LISTED])} and "
        f"{len(own) - LISTED} more (--family rope --help lists them)\n"
    )
    err = _one_line(*cli("generate", "--variant", "zzz"))
    own = ["exact", *FAMILIES["sinusoidal"].variants]
    assert err == (
        f"Error: unknown --variant 'zzz'; choose from {', '.join(own[:LISTED])} and "
        f"{len(own) - LISTED} more (--family sinusoidal --help lists them)\n"
    )
    assert not any(name in err for name in FAMILIES["rope"].variants)


def test_a_short_list_is_listed_whole():
    assert unknown("x", "zz", ["a", "b"]) == "unknown x 'zz'; choose from a, b"
    names = [f"n{i}" for i in range(LISTED + 1)]
    assert unknown("x", "zz", names).endswith(", ".join(names))  # 'and 1 more' says no less
    names.append("n99")
    assert unknown("x", "zz", names, more="M").endswith(" and 2 more (M)")


def test_compare_table_specs_say_did_you_mean(cli, tmp_path):
    path = tmp_path / "out.npy"
    assert cli("generate", "-d", 8, "-l", 4, "-o", path)[0] == 0
    err = _one_line(*cli("compare", path, "exp_log"))
    assert err.endswith("(did you mean 'exp-log'?)\n")
    err = _one_line(*cli("compare", "exact:flaot16", "-d", 8, "-l", 4))
    assert "'flaot16' is not a variant, convention, dtype or part (did you mean 'float16'?)" in err
    err = _one_line(*cli("compare", "--family", "rope", "hf-rop", "-d", 8, "-l", 4))
    assert err.endswith("(did you mean 'hf-rope'?)\n")
    code, out, err = cli("compare", "exp-log", "-d", 8, "-l", 4)
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    "alias,name", [("fp32", "float32"), ("fp64", "float64"), ("fp16", "float16")]
)
def test_dtype_aliases_are_the_dtypes_they_name(cli, alias, name):
    code, out, err = cli("generate", "-d", 6, "-l", 5, "--dtype", alias)
    assert code == 0 and err == "" and f"dtype       {name}" in out.decode()
    assert f"dtype       {alias}" not in out.decode()
    assert pe_cli.build(d_model=6, seq_len=5, dtype=alias).spec.dtype == name
    table = pe_cli.build(d_model=6, seq_len=5, dtype=alias).numpy()
    assert table.dtype == np.dtype(name)
    assert np.array_equal(table, pe_cli.build(d_model=6, seq_len=5, dtype=name).numpy())


def test_bf16_in_files_and_the_api_is_bfloat16(cli, tmp_path):
    path = tmp_path / "t.safetensors"
    code, _, err = cli("export", path, "-d", 6, "-l", 5, "--dtype", "bf16", "--dtype", "fp32")
    assert code == 0 and "did you mean" not in err
    with safe_open(path, "pt") as f:
        assert sorted(f.keys()) == ["bfloat16", "float32"]
        assert str(f.get_tensor("bfloat16").dtype) == "torch.bfloat16"
        assert f.metadata()["bfloat16.dtype"] == "bfloat16"
    spec = pe_cli.build(
        d_model=6, seq_len=5, dtype="bf16", variant="pow", compute_dtype="fp16"
    ).spec
    assert (spec.dtype, spec.compute_dtype) == ("bfloat16", "float16")
    spec = pe_cli.TableSpec(family="rope", d_model=8, variant="diffusers", freqs_dtype="fp64")
    assert spec.freqs_dtype == "float64"
    code, out, _ = cli("compare", "exact:bf16", "-d", 8, "-l", 4)
    assert code == 0 and "bfloat16" in out.decode()


def test_the_api_says_did_you_mean_with_the_familys_names_first():
    with pytest.raises(BadInput, match=r"unknown --part 'abgle' \(did you mean 'angle'\?\)$"):
        pe_cli.build(family="rope", part="abgle")
    with pytest.raises(BadInput, match=r"unknown --dtype 'bf61' \(did you mean 'bf16'\?\)$"):
        pe_cli.TableSpec(dtype="bf61")
    with pytest.raises(BadInput, match=r"unknown --preset 'flx' \(did you mean 'flux'\?\)$"):
        pe_cli.build(preset="flx", grid="1x2x2")
    with pytest.raises(BadInput, match=r"unknown --rope-axes 'mrop' \(did you mean 'mrope'\?\)$"):
        pe_cli.TableSpec(family="rope", axes="mrop", d_model=16)


def test_device_gpu_suggests_cuda(cli):
    err = _one_line(*cli("generate", "--device", "gpu"))
    assert err == "Error: unknown --device 'gpu' (did you mean 'cuda'?)\n"


@pytest.mark.parametrize("built", [True, False])
def test_cuda_absent_says_what_to_do(cli, monkeypatch, built):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: built)
    err = _one_line(*cli("generate", "--device", "cuda", "-o", "-"))
    assert err.startswith("Error: --device cuda: CUDA is not available here (torch ")
    assert "use --device cpu" in err
    if built:  # a CUDA torch without a usable GPU: the driver
        assert "nvidia-smi" in err and "pip install" not in err
    else:
        assert "install a CUDA build of torch" in err and "pip install" in err


@pytest.mark.parametrize("built", [True, False])
def test_mps_absent_says_what_to_do(cli, monkeypatch, built):
    import torch

    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_built", lambda: built)
    err = _one_line(*cli("generate", "--device", "mps", "-o", "-"))
    assert err.startswith("Error: --device mps: Apple MPS is not available here")
    assert err.endswith("use --device cpu\n")
    assert ("macOS 12.3" in err) == built and ("a torch built with MPS" in err) == (not built)
