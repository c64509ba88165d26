"""--variant llama.cpp against ggml itself: ggml_rope_ext called through ctypes on the libraries
tools/build_ggml.sh builds (tests/ggml.py), bit for bit, for the models' rope parameters as
llama.cpp receives them; and what the variant refuses."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import pe_cli
from pe_cli.core.errors import BadInput
from pe_cli.families.rope.llamacpp import ggml_arguments, llama3_freq_factors
from pe_cli.numerics.float32 import F32, c_libm, fma

from .gguf_files import write_gguf
from .rope_models import LLAMA3, PHI35_LONG, PHI35_SHORT, YARN

# Phi-3.5-mini: head dim 96, 48 factors per list, original 4096, context 131072
PHI_SHORT, PHI_LONG = PHI35_SHORT, PHI35_LONG
PHI35 = {
    "rope_type": "longrope",
    "short_factor": PHI_SHORT,
    "long_factor": PHI_LONG,
    "original_max_position_embeddings": 4096,
    "max_position_embeddings": 131072,
}
# Phi-3's converter's attention factor, sqrt(1 + ln(131072 / 4096) / ln(4096)), in Python floats
PHI_ATTENTION = math.sqrt(1 + math.log(32) / math.log(4096))


@pytest.fixture(scope="module")
def ggml():
    from . import ggml

    why = ggml.unavailable()
    if why:
        pytest.skip(why)
    return ggml


def _same(mine, theirs):
    assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
    differ = mine.view(np.uint16 if mine.dtype == np.float16 else np.uint32) != theirs.view(
        np.uint16 if theirs.dtype == np.float16 else np.uint32
    )
    assert not differ.any(), f"{int(differ.sum())} of {differ.size} elements differ from ggml's"


def _check(ggml, options, arguments, length, dtype, parts=("cos", "sin"), n_dims=None):
    rope = dict(options.get("rope", {}))
    head = options["d_model"]
    n_dims = n_dims or int(head * rope.get("partial_rotary_factor", 1.0))
    for part in parts:
        mine = pe_cli.build(
            family="rope", variant="llama.cpp", seq_len=length, dtype=dtype, part=part, **options
        ).numpy()
        theirs = ggml.table(
            np.arange(length),
            head,
            n_dims,
            options["convention"],
            dtype=np.dtype(dtype).type,
            part=part,
            **arguments,
        )
        _same(mine, theirs)


# (name, pe-cli options, ggml_rope_ext's arguments as llama.cpp passes them, positions)
CASES = [
    (
        "qwen2",  # theta 1e6, NEOX
        {"d_model": 128, "base": 1e6, "convention": "half"},
        {"freq_base": 1e6},
        16384,
    ),
    (
        "llama2-norm",
        {"d_model": 128, "base": 10000.0, "convention": "interleaved"},
        {"freq_base": 10000.0},
        4096,
    ),
    (
        "partial-neox",  # n_dims 64 of head 128: the other 64 columns pass unrotated
        {
            "d_model": 128,
            "base": 10000.0,
            "convention": "half",
            "rope": {"partial_rotary_factor": 0.5},
        },
        {"freq_base": 10000.0},
        8192,
    ),
    (
        "partial-norm",
        {
            "d_model": 128,
            "base": 500000.0,
            "convention": "interleaved",
            "rope": {"partial_rotary_factor": 0.5},
        },
        {"freq_base": 500000.0},
        8192,
    ),
    (
        "linear",
        {
            "d_model": 64,
            "base": 10000.0,
            "convention": "half",
            "rope": {"rope_type": "linear", "factor": 4.0},
        },
        {"freq_base": 10000.0, "freq_scale": 0.25},
        16384,
    ),
    (
        # ggml's attn_factor is get_mscale(4) / (1 + 0.1 logf 4), exactly 1 in float32: ggml
        # multiplies by 1 + 0.1 logf(4) itself
        "yarn-qwen2.5",
        {"d_model": 128, "base": 1e6, "convention": "half", "rope": YARN},
        {"freq_base": 1e6, "freq_scale": 0.25, "ext_factor": 1.0, "n_ctx_orig": 32768},
        8192,
    ),
    (
        "yarn-partial-norm",
        {
            "d_model": 128,
            "base": 500000.0,
            "convention": "interleaved",
            "rope": {**YARN, "partial_rotary_factor": 0.5},
        },
        {"freq_base": 500000.0, "freq_scale": 0.25, "ext_factor": 1.0, "n_ctx_orig": 32768},
        8192,
    ),
    (
        "phi3.5-short",  # up to the original length: rope_factors_short
        {"d_model": 96, "base": 10000.0, "convention": "half", "rope": PHI35},
        {
            "freq_base": 10000.0,
            "attn_factor": float(F32(PHI_ATTENTION)),
            "freq_factors": PHI_SHORT,
        },
        4096,
    ),
    (
        "phi3.5-long",  # past it: rope_factors_long (llama.cpp's -c past 4096)
        {"d_model": 96, "base": 10000.0, "convention": "half", "rope": PHI35},
        {
            "freq_base": 10000.0,
            "attn_factor": float(F32(PHI_ATTENTION)),
            "freq_factors": PHI_LONG,
        },
        16384,
    ),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name, options, arguments, length", CASES, ids=[c[0] for c in CASES])
def test_variant_is_ggml_bit_for_bit(ggml, name, options, arguments, length, dtype):
    _check(ggml, options, arguments, length, dtype)


@pytest.fixture(scope="module")
def converter_factors(ggml):
    """rope_freqs as llama.cpp's own convert_hf_to_gguf computes it (LlamaModel's
    generate_extra_tensors, run from the sdist tools/build_ggml.sh unpacks), per (base, dim)."""
    source = ggml.SOURCE
    if not (source / "conversion" / "llama.py").is_file():
        pytest.skip(f"llama.cpp's converter is not unpacked in {source} (tools/build_ggml.sh)")
    script = """
import json, sys, types
sys.path.insert(0, sys.argv[1])
from conversion.llama import LlamaModel
rope = json.loads(sys.argv[2])
out = {}
for base, dim in ((500000.0, 128), (1000000.0, 128), (500000.0, 64)):
    model = types.SimpleNamespace(rope_parameters={**rope, "rope_theta": base},
                                  hparams={"head_dim": dim}, format_tensor_name=str)
    ((_, factors),) = LlamaModel.generate_extra_tensors(model)
    out[f"{base:g}/{dim}"] = factors.tolist()
print(json.dumps(out))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(source), json.dumps(LLAMA3)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_llama3_factors_are_the_converters(converter_factors):
    """Bit for bit, base 1e6 included, where numpy's float32 power differs from torch's."""
    for key, theirs in converter_factors.items():
        base, dim = key.split("/")
        mine = llama3_freq_factors(int(dim), float(base), LLAMA3)
        assert np.array_equal(np.float32(mine), np.float32(theirs)), key


@pytest.mark.parametrize(
    "dtype, length, convention",
    [
        ("float16", 8192, "interleaved"),
        ("float32", 131072, "interleaved"),
        ("float32", 8192, "half"),
    ],
)
def test_llama31_is_ggml_with_the_converters_rope_freqs(
    ggml, converter_factors, dtype, length, convention
):
    """Llama 3.1 (theta 500000, head 128, NORM in llama.cpp): its table is ggml's with the
    rope_freqs the converter writes, up to 131072 positions."""
    options = {"d_model": 128, "base": 500000.0, "convention": convention, "rope": LLAMA3}
    arguments = {"freq_base": 500000.0, "freq_factors": converter_factors["500000/128"]}
    _check(ggml, options, arguments, length, dtype)


def test_yarn_is_ggml_up_to_131072(ggml):
    options = {"d_model": 128, "base": 1e6, "convention": "half", "rope": YARN}
    arguments = {"freq_base": 1e6, "freq_scale": 0.25, "ext_factor": 1.0, "n_ctx_orig": 32768}
    _check(ggml, options, arguments, 131072, "float32")


def test_rotation_part_is_built_from_ggml_cos_and_sin(ggml):
    options = dict(family="rope", variant="llama.cpp", d_model=64, base=1e4, seq_len=64)
    options["convention"] = "interleaved"
    rotation = pe_cli.build(part="rotation", **options).numpy()
    cos, sin = (ggml.table(np.arange(64), 64, 64, "interleaved", part=p) for p in ("cos", "sin"))
    assert np.array_equal(rotation[:, 0::4], cos[:, 0::2])
    assert np.array_equal(rotation[:, 2::4], sin[:, 0::2])


# ---------------------------------------------------------------------------------------------
# Without ggml: the arguments, the exact float32 fma, the refusals


def test_yarn_arguments_are_llama_cpps():
    spec = pe_cli.TableSpec(family="rope", d_model=128, base=1e6, rope=YARN, variant="llama.cpp")
    found = ggml_arguments(spec)
    assert (found.freq_scale, found.ext_factor, found.n_ctx_orig) == (0.25, 1.0, 32768)
    # get_mscale(4) / (1 + 0.1 logf 4) is 1 in float32, as for every power of two to 64
    assert found.attn_factor == 1.0
    assert (found.beta_fast, found.beta_slow) == (32.0, 1.0)


def test_longrope_chooses_by_the_tables_length():
    short = pe_cli.TableSpec(family="rope", d_model=96, rope=PHI35, seq_len=4096)
    long = short.replace(seq_len=4097)
    assert ggml_arguments(short).freq_factors == tuple(float(F32(f)) for f in PHI_SHORT)
    assert ggml_arguments(long).freq_factors == tuple(float(F32(f)) for f in PHI_LONG)
    assert ggml_arguments(long).attn_factor == float(F32(PHI_ATTENTION))


def test_fma32_is_libms_fmaf():
    """Exact, near float32 rounding midpoints too, where rounding a float64 sum twice fails."""
    rng = np.random.default_rng(29)
    size = 100_000
    a = (rng.standard_normal(size) * 1e3).astype(F32)
    b = rng.standard_normal(size).astype(F32)
    c = (rng.standard_normal(size) * 1e3).astype(F32)
    # products about half an ulp of c: a*b + c lands next to a midpoint
    ties_c = rng.uniform(1, 2, size).astype(F32)
    steps = rng.integers(-8, 9, size).astype(np.float64)
    ties_a = (2.0**-24 * (1 + steps * 2.0**-20)).astype(F32)
    ties_b = (1 + rng.integers(-8, 9, size) * 2.0**-21).astype(F32)
    a, b, c = np.concatenate([a, ties_a]), np.concatenate([b, ties_b]), np.concatenate([c, ties_c])
    fmaf = c_libm().fmaf  # the C library's own, as the reference
    theirs = np.array([fmaf(*v) for v in zip(a.tolist(), b.tolist(), c.tolist())], dtype=F32)
    twice = (a.astype(np.float64) * b + c).astype(F32)
    assert (twice != theirs).any()  # the cases are the hard ones
    assert np.array_equal(fma(a, b, c), theirs)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"dtype": "bfloat16"}, "ggml's CPU rope takes F32 and F16"),
        (
            {"rope": {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 64}},
            "dynamic",
        ),
        ({"convention": "single"}, "interleaved or half convention"),
        ({"part": "inv_freq"}, "no inv_freq"),
        ({"rope": {"partial_rotary_factor": 0.3}}, "must be even"),
        ({"rope": {**YARN, "mscale": 1.0, "mscale_all_dim": 1.0}}, "does not model"),
    ],
)
def test_refusals_are_one_line(options, message):
    spec = dict(family="rope", variant="llama.cpp", d_model=64, seq_len=16)
    with pytest.raises(BadInput, match=message) as raised:
        pe_cli.build(**{**spec, **options})
    assert "\n" not in str(raised.value)


def test_cli_refusal_names_the_reason(cli):
    code, out, err = cli(
        "generate", "--family", "rope", "-d", "64", "-l", "8", "--variant", "llama.cpp",
        "--dtype", "bfloat16", "-o", "-",
    )  # fmt: skip
    assert code == 2 and out == b""
    assert err.count("\n") == 1 and "F32 and F16" in err


# ---------------------------------------------------------------------------------------------
# A GGUF as --rope-config: llama.cpp's metadata and rope tensors, written here with gguf's writer


def _from_gguf(cli, path, out, length, *more):
    code, _, err = cli("generate", "--rope-config", path, "-l", length, *more, "-o", out, "--force")
    assert code == 0, err
    return np.load(out)


def test_a_llama3_gguf_gives_ggmls_table(ggml, converter_factors, tmp_path, cli):
    """Llama 3.1's GGUF: rope_freqs and no scaling keys; llama is NORM in llama.cpp."""
    factors = converter_factors["500000/128"]
    path = write_gguf(
        tmp_path / "llama.gguf", "llama", base=500000.0, tensors={"rope_freqs": factors}
    )
    for part in ("cos", "sin"):
        mine = _from_gguf(
            cli, path, tmp_path / "t.npy", 8192, "--variant", "llama.cpp", "--part", part
        )
        theirs = ggml.table(
            np.arange(8192), 128, 128, "interleaved", part=part,
            freq_base=500000.0, freq_factors=factors,
        )  # fmt: skip
        _same(mine, theirs)


def test_a_yarn_gguf_gives_ggmls_table(ggml, tmp_path, cli):
    import gguf

    scaling = {"type": gguf.RopeScalingType.YARN, "factor": 4.0, "orig_ctx_len": 32768}
    path = write_gguf(tmp_path / "qwen.gguf", "qwen2", heads=40, base=1e6, scaling=scaling)
    mine = _from_gguf(cli, path, tmp_path / "t.npy", 40000, "--variant", "llama.cpp")
    theirs = ggml.table(
        np.arange(40000), 128, 128, "half",
        freq_base=1e6, freq_scale=0.25, ext_factor=1.0, n_ctx_orig=32768,
    )  # fmt: skip
    _same(mine, theirs)


def test_a_phi3_gguf_gives_ggmls_long_table_and_a_partial_one(ggml, tmp_path, cli):
    """Phi-3.5's shape: rope_factors_long and _short and an attention factor; the context
    (the table's length) past the original length takes the long factors."""
    attention = float(F32(PHI_ATTENTION))
    path = write_gguf(
        tmp_path / "phi3.gguf", "phi3", head=96,
        scaling={"attn_factors": attention, "orig_ctx_len": 4096},
        tensors={"rope_factors_long": PHI_LONG, "rope_factors_short": PHI_SHORT},
    )  # fmt: skip
    mine = _from_gguf(
        cli, path, tmp_path / "t.npy", 8192, "--variant", "llama.cpp", "--dtype", "float16"
    )
    theirs = ggml.table(
        np.arange(8192), 96, 96, "half", dtype=np.float16,
        freq_base=10000.0, attn_factor=attention, freq_factors=PHI_LONG,
    )  # fmt: skip
    _same(mine, theirs)
    partial = write_gguf(tmp_path / "partial.gguf", "stablelm", head=128, n_rot=32, base=10000.0)
    mine = _from_gguf(cli, partial, tmp_path / "p.npy", 4096, "--variant", "llama.cpp")
    _same(mine, ggml.table(np.arange(4096), 128, 32, "half", freq_base=10000.0))


def test_a_gguf_is_exact_by_default_and_names_llama_cpps_distance(tmp_path, cli):
    path = write_gguf(tmp_path / "llama.gguf", "llama", base=500000.0)
    code, _, err = cli("generate", "--rope-config", path, "-l", 1024, "-o", tmp_path / "t.npy")
    assert code == 0 and "exact/interleaved" in err
    assert "llama.cpp: its table (--variant llama.cpp) differs from this one by up to" in err
    exact = pe_cli.build(family="rope", d_model=128, base=500000.0, seq_len=1024)
    assert np.array_equal(np.load(tmp_path / "t.npy"), exact.numpy()[:, _interleaved(128)])


def _interleaved(n):  # the half layout's columns in interleaved order: both hold w_0, w_0, ...
    return np.repeat(np.arange(n // 2), 2)


def _truncated(path):
    whole = write_gguf(path, "llama", base=500000.0).read_bytes()
    path.write_bytes(whole[:100])
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        (_truncated, "not a readable GGUF file"),
        (lambda p: write_gguf(p, "qwen2vl"), "architecture 'qwen2vl' is not one llama.cpp"),
        (
            lambda p: write_gguf(
                p, "llama", scaling={"type": _scaling("none"), "attn_factors": 2.0}
            ),
            "without freq factors",
        ),
    ],
)
def test_gguf_refusals_are_one_line(tmp_path, cli, make, message):
    path = make(tmp_path / "model.gguf")
    code, out, err = cli("generate", "--rope-config", path, "-o", "-")
    assert code == 2 and out == b""
    assert err.count("\n") == 1 and message in err


def _scaling(name):
    import gguf

    return getattr(gguf.RopeScalingType, name.upper())
