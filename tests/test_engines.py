"""The inference engines' tables (--variant llama.cpp, --variant mlx) read back by compare: a
file holding one is named as that engine's table bit for bit, and the generate command compare
prints rebuilds the file byte for byte. The variants are held against the engines themselves in
test_llamacpp.py and test_mlx.py; here they stand for the engines' tables."""

import json
import math
import re
import shlex

import numpy as np
import pytest
import torch

import pe_cli
from pe_cli.families.rope.llamacpp import llama3_freq_factors

from .gguf_files import write_gguf
from .rope_models import LLAMA3, PHI35_LONG, PHI35_SHORT, YARN

MODELS = {
    "llama3.1": {"d_model": 128, "base": 500000.0, "rope": LLAMA3},
    "qwen2": {"d_model": 128, "base": 1e6},
    "qwen2.5-yarn": {"d_model": 128, "base": 1e6, "rope": YARN},
    "partial": {"d_model": 128, "base": 10000.0, "rope": {"partial_rotary_factor": 0.5}},
}
# (engine, model, pairing): each engine's every model, in both pairings between them
CASES = [
    ("llama.cpp", "llama3.1", "half"),
    ("llama.cpp", "qwen2", "interleaved"),
    ("llama.cpp", "qwen2.5-yarn", "half"),
    ("llama.cpp", "partial", "interleaved"),
    ("mlx", "llama3.1", "interleaved"),
    ("mlx", "qwen2", "half"),
    ("mlx", "qwen2.5-yarn", "interleaved"),
    ("mlx", "partial", "half"),
]


def _named_and_rebuilt(cli, tmp_path, table=None, name="table.npy", every=False, notes=None):
    """compare FILE's best candidate, after checking that its printed command rebuilds FILE
    (its table's bytes: a .safetensors file also holds the spec it was written with). FILE is
    `table` saved, or tmp_path / name written already. every: every candidate instead. notes:
    a list compare's notes are added to."""
    if table is not None:
        np.save(tmp_path / name, table)
    code, out, err = cli("compare", tmp_path / name)
    assert code == 0, err
    text = out.decode()
    assert text.count("rebuilt by:") == 1, text
    printed = text.split("rebuilt by:\n", 1)[1].split("\n")
    folded = printed[: next(k for k, line in enumerate(printed) if not line.endswith(" \\")) + 1]
    words = shlex.split(" ".join(line.removesuffix(" \\") for line in folded))
    assert words[:2] == ["pe-cli", "generate"]
    again = tmp_path / f"again.{name.rpartition('.')[2]}"
    code, _, err = cli(*words[1:], "-o", again)
    assert code == 0, err
    assert _data(again) == _data(tmp_path / name)
    code, out, err = cli("compare", tmp_path / name, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert shlex.split(found["command"]) == words
    if notes is not None:
        notes += found["notes"]
    return found["candidates"] if every else found["candidates"][0]


def _data(path) -> bytes:
    """A table file's data: a .npy file whole, a .safetensors file's tensor bytes."""
    if path.suffix == ".npy":
        return path.read_bytes()
    from safetensors import safe_open

    with safe_open(path, "pt") as f:
        (key,) = f.keys()
        tensor = f.get_tensor(key)
    return (
        str(tensor.dtype).encode()
        + tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes()
    )


@pytest.mark.parametrize("engine, model, pairing", CASES)
def test_engine_tables_are_named_and_rebuilt(cli, tmp_path, engine, model, pairing):
    options = {**MODELS[model], "convention": pairing}
    table = pe_cli.build(family="rope", variant=engine, seq_len=2048, **options).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == f"library {engine}" and best["confirmed"]
    assert best["spec"]["convention"] == pairing and best["spec"]["base"] == options["base"]
    # a partial table holds the rotated dims only: it reads as a whole rotary head that wide
    given, rope = dict(options.get("rope", {})), dict(best["spec"]["rope"])
    share = given.pop("partial_rotary_factor", 1.0)
    assert best["spec"]["d_model"] * rope.get("partial_rotary_factor", 1.0) == 128 * share
    assert {k: rope[k] for k in given} == given


# each engine's half dtypes (ggml's CPU rope takes F16, not BF16; vLLM's cache is cast to the
# model's dtype, MLX's is its float32 result rounded), every model, pairings in turn
HALF = [
    (engine, model, dtype, ("half", "interleaved")[k % 2])
    for engine, dtypes in (
        ("llama.cpp", ("float16",)),
        ("mlx", ("float16", "bfloat16")),
        ("vllm", ("float16", "bfloat16")),
    )
    for dtype in dtypes
    for k, model in enumerate(MODELS)
]


@pytest.mark.parametrize("engine, model, dtype, pairing", HALF)
def test_engine_half_tables_are_named_and_rebuilt(cli, tmp_path, engine, model, dtype, pairing):
    """A half table tells each frequency to a few 1e-3 at a time: compare reads it again
    further on until it is known to 2e-4, then the engine's table is named bit for bit, or
    one it ties with: vLLM's cache computes transformers' float32 operations, and a short
    bfloat16 table of MLX's can round to transformers' own."""
    options = {**MODELS[model], "convention": pairing}
    args = ["--family", "rope", "--variant", engine, "--dtype", dtype, "-l", 1024]
    args += ["-d", options["d_model"], "--base", options["base"], "--convention", pairing]
    for key, value in options.get("rope", {}).items():
        args += ["--rope", f"{key}={value}"]
    code, _, err = cli("generate", *args, "-o", tmp_path / "table.safetensors")
    assert code == 0, err
    found = _named_and_rebuilt(cli, tmp_path, name="table.safetensors", every=True)
    best = found[0]
    assert best["confirmed"] and best["differing"] == 0 and best["spec"]["dtype"] == dtype
    assert best["spec"]["convention"] == pairing and best["spec"]["base"] == options["base"]
    # the engine's own, or a table it ties with bit for bit (printed "the same table as")
    same = {c["name"] for c in found if c["confirmed"] and c["differing"] == 0}
    assert f"library {engine}" in same, same
    given = dict(options.get("rope", {}))
    given.pop("partial_rotary_factor", None)
    assert {k: dict(best["spec"]["rope"])[k] for k in given} == given


def test_a_long_engine_table_is_named_from_its_sample(cli, tmp_path):
    """32768 positions: scored on a sample, then confirmed over every row."""
    table = pe_cli.build(
        family="rope", variant="llama.cpp", seq_len=32768, **MODELS["llama3.1"]
    ).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library llama.cpp" and best["confirmed"]


def test_an_exact_table_is_rebuilt_by_its_command(cli, tmp_path):
    table = pe_cli.build(family="rope", d_model=64, seq_len=512, base=1e6).numpy()
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["variant"] == "exact"


# ---------------------------------------------------------------------------------------------
# compare --rope-config CFG: one model, every engine


def _config(tmp_path, rope_scaling, theta=500000.0, **more):
    config = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "rope_theta": theta,
        "max_position_embeddings": 131072,
        **more,
    }
    if rope_scaling:
        config["rope_scaling"] = rope_scaling
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path / "config.json"


def _engines(cli, config, length):
    code, out, err = cli("compare", "--rope-config", config, "-l", length, "--json")
    assert code == 0, err
    found = json.loads(out)
    return {e["engine"]: e for e in found["engines"]}, found["notes"]


def test_llama31_differs_from_exact_by_arithmetic_only_in_every_engine(cli, tmp_path):
    engines, notes = _engines(cli, _config(tmp_path, LLAMA3), 8192)
    assert set(engines) == {"transformers", "mlx", "llama.cpp", "vllm"} and not notes
    assert engines["transformers"]["bit_equal_to_transformers"] == 1.0
    assert engines["vllm"]["bit_equal_to_transformers"] == 1.0  # vLLM's op order is theirs
    for engine in engines.values():
        assert engine["verdict"] == "arithmetic", engine["why"]
        assert engine["versus_exact"]["max_abs"] < 16 * 8192 * 2.0**-23
        assert not any("scale factor" in w or "frequency table" in w for w in engine["why"])
    # ggml's theta, multiplied pair after pair, is further from transformers than MLX's
    assert (
        engines["llama.cpp"]["bit_equal_to_transformers"]
        < engines["mlx"]["bit_equal_to_transformers"]
    )


def test_an_attention_factor_the_engines_do_not_read_is_another_scale_factor(cli, tmp_path):
    """attention_factor 1.0 in a YaRN config: transformers keeps it; MLX and llama.cpp read no
    attention_factor and multiply by YaRN's own 0.1 ln(factor) + 1."""
    yarn = {**YARN, "attention_factor": 1.0}
    engines, _ = _engines(cli, _config(tmp_path, yarn, theta=1e6), 4096)
    assert engines["transformers"]["verdict"] == "arithmetic"
    own = 0.1 * math.log(4.0) + 1
    for name in ("mlx", "llama.cpp"):
        assert engines[name]["verdict"] == "meaning"
        (line,) = engines[name]["why"]  # the scale alone: the frequencies are the config's
        assert line.startswith(f"another scale factor: every value times {own:.7g} ")


def test_mlx_lms_long_factors_at_a_short_length_are_another_frequency_table(cli, tmp_path):
    """Up to the original length transformers takes short_factor; mlx-lm's SuScaledRoPE
    always takes long_factor; llama.cpp chooses by the context length as transformers does."""
    longrope = {
        "type": "longrope",
        "long_factor": [1.0 + 0.5 * i for i in range(48)],
        "short_factor": [1.0 + 0.01 * i for i in range(48)],
    }
    config = _config(
        tmp_path,
        longrope,
        theta=10000.0,
        hidden_size=3072,
        original_max_position_embeddings=4096,
        architectures=["Phi3ForCausalLM"],
    )
    engines, _ = _engines(cli, config, 4096)
    assert engines["llama.cpp"]["verdict"] == "arithmetic"
    assert engines["mlx"]["verdict"] == "meaning"
    (line,) = engines["mlx"]["why"]
    assert line.startswith("another frequency table: ")
    # at a length past the original both take long_factor, and differ by arithmetic only
    engines, _ = _engines(cli, config, 8192)
    assert engines["mlx"]["verdict"] == "arithmetic"


def test_another_rotary_dim_is_said_and_not_measured():
    from pe_cli.analysis.engines import engine_view
    from pe_cli.spec import TableSpec

    defaults = {"family": "rope", "d_model": 128, "seq_len": 256, "base": 10000.0}
    narrower = TableSpec(**{**defaults, "d_model": 64, "variant": "hf-rope"})
    view = engine_view(defaults, [("narrower", narrower)], 1e-4)
    assert not view.rows
    assert view.notes == [
        "narrower: another rotary dim: 64 columns where the config's table has 128"
    ]


def test_a_correctly_rounded_table_is_identical_and_a_plain_table_gets_the_audit(cli):
    from pe_cli.analysis.engines import engine_view
    from pe_cli.spec import TableSpec

    defaults = {"family": "rope", "d_model": 64, "seq_len": 256, "base": 10000.0}
    rounded = TableSpec(**{**defaults, "dtype": "float32"})
    (row,) = engine_view(defaults, [("exact", rounded)], 1e-4).rows
    assert row.verdict.kind == "identical" and row.equal_exact == 1.0
    # without a model's config, compare --family rope is the family's audit
    code, out, err = cli("compare", "--family", "rope", "-d", 64, "-l", 256)
    assert code == 0, err
    assert "libraries and precision recipes vs the exact table" in out.decode()


# ---------------------------------------------------------------------------------------------
# compare GGUF CONFIG: the rope parameters that disagree


def _disagree(cli, gguf, config):
    code, out, err = cli("compare", gguf, config, "--json")
    found = json.loads(out)
    differ = [p["parameter"].split(" ")[0] for p in found["parameters"] if not p["agree"]]
    assert code == (1 if differ else 0), err
    return differ


def test_a_gguf_is_held_against_its_config(cli, tmp_path):
    config = _config(tmp_path, LLAMA3)
    # as the converter writes them (test_llamacpp.py holds these against llama.cpp's converter)
    factors = list(llama3_freq_factors(128, 500000.0, LLAMA3))
    good = write_gguf(
        tmp_path / "good.gguf", "llama", base=500000.0, tensors={"rope_freqs": factors}
    )
    assert _disagree(cli, good, config) == []
    assert _disagree(cli, config, good) == []  # either order
    dropped = write_gguf(tmp_path / "dropped.gguf", "llama", base=500000.0)
    assert _disagree(cli, dropped, config) == ["rope_freqs"]
    base = write_gguf(
        tmp_path / "base.gguf", "llama", base=10000.0, tensors={"rope_freqs": factors}
    )
    assert _disagree(cli, base, config) == ["rope.freq_base"]
    other = [*factors[:-1], factors[-1] * 2]
    changed = write_gguf(
        tmp_path / "changed.gguf", "llama", base=500000.0, tensors={"rope_freqs": other}
    )
    assert _disagree(cli, changed, config) == ["rope_freqs"]
    _, out, _ = cli("compare", changed, config, "--json")
    (row,) = [p for p in json.loads(out)["parameters"] if not p["agree"]]
    assert row["first"].startswith("1 of 64 factors differ (the first at pair 63")


def test_a_yarn_gguf_names_its_factor_and_a_partial_one_its_rotary_dim(cli, tmp_path):
    gguf = pytest.importorskip("gguf")
    config = _config(tmp_path, YARN, theta=1e6, num_attention_heads=40, hidden_size=5120)
    yarn = {"type": gguf.RopeScalingType.YARN, "factor": 4.0, "orig_ctx_len": 32768}
    good = write_gguf(tmp_path / "q.gguf", "qwen2", base=1e6, heads=40, scaling=yarn)
    assert _disagree(cli, good, config) == []
    wrong = write_gguf(
        tmp_path / "w.gguf", "qwen2", base=1e6, heads=40, scaling={**yarn, "factor": 2.0}
    )
    assert _disagree(cli, wrong, config) == ["rope.scaling.factor"]
    none = write_gguf(tmp_path / "n.gguf", "qwen2", base=1e6, heads=40)
    assert _disagree(cli, none, config) == ["rope.scaling.type"]
    partial = write_gguf(tmp_path / "p.gguf", "qwen2", base=1e6, heads=40, n_rot=64, scaling=yarn)
    assert _disagree(cli, partial, config) == ["rope.dimension_count"]


@pytest.mark.parametrize("variant", ["mlx", "llama.cpp", "vllm"])
def test_show_says_no_attention_factor_an_engine_may_not_read(cli, variant):
    """MLX's YaRN reads no attention_factor: show lists neither the model's attention factor
    nor its frequencies under an engine's variant (nor checks row norms by them), and
    transformers' table, which reads them, still has both."""
    yarn = ["--rope", "rope_type=yarn", "--rope", "factor=4", "--rope", "attention_factor=1.5"]
    args = ["show", "--family", "rope", "-d", "64", "-l", "256", *yarn]
    args += ["--rope", "original_max_position_embeddings=64"]
    code, out, err = cli(*args, "--variant", variant)
    assert code == 0, err
    text = out.decode()
    assert "attention factor" not in text and "wavelength" not in text and "expected" not in text
    code, out, _ = cli(*args, "--variant", "hf-rope")
    assert code == 0 and "attention factor  1.5" in out.decode() and "wavelength" in out.decode()
    code, _, err = cli(*args, "--variant", variant, "--plot", "w.png", "--plot-kind", "wavelengths")
    assert code == 2 and f"no frequencies of --variant {variant}'s rope tables" in err


def _served(cli, config, length, dtype):
    code, out, err = cli(
        "compare", "--rope-config", config, "-l", length, "--dtype", dtype, "--json"
    )
    assert code == 0, err
    found = json.loads(out)
    return {e["engine"]: e for e in found["engines"]}, found


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_llama31_served_in_a_half_dtype_is_arithmetic_and_a_cast(cli, tmp_path, dtype):
    """Every engine's table rounded to the serving dtype: off from exact by float32 angles and
    the cast, not by a scale factor (position 0 holds 1 rounded) nor other frequencies."""
    engines, found = _served(cli, _config(tmp_path, LLAMA3), 8192, dtype)
    assert found["dtype"] == dtype and found["positions"]["dtype"] == dtype
    expected = {"transformers", "mlx", "vllm"} | ({"llama.cpp"} if dtype == "float16" else set())
    assert set(engines) == expected
    if dtype == "bfloat16":  # ggml's CPU rope has no BF16: said, not built
        assert any(n.startswith("llama.cpp: ") and "bfloat16" in n for n in found["notes"])
    for engine in engines.values():
        assert engine["dtype"] == dtype
        assert engine["verdict"] == "arithmetic", engine["why"]
        (why,) = engine["why"]
        assert why.startswith(f"float32 arithmetic, then the cast to {dtype}:")
    assert engines["vllm"]["bit_equal_to_transformers"] == 1.0


def test_a_rounded_attention_factor_is_no_scale_factor_but_a_dropped_one_is(cli, tmp_path):
    """YaRN's attention factor 1.1386 is 1.140625 in bfloat16 in every table that keeps it:
    rounding, not another scale. MLX and llama.cpp read no attention_factor 1.0 and multiply
    by 1.1386 anyway: another scale factor in bfloat16 too."""
    yarn = {**YARN, "attention_factor": 1.0}
    engines, _ = _served(cli, _config(tmp_path, YARN, theta=1e6), 4096, "bfloat16")
    for engine in engines.values():
        assert not any("scale factor" in w for w in engine["why"]), engine
    engines, _ = _served(cli, _config(tmp_path, yarn, theta=1e6), 4096, "bfloat16")
    assert engines["transformers"]["verdict"] == "arithmetic"
    assert engines["mlx"]["verdict"] == "meaning"
    assert engines["mlx"]["why"][0].startswith("another scale factor: every value times")


@pytest.mark.parametrize("engine", ["mlx", "llama.cpp"])
@pytest.mark.parametrize("length", [4096, 8192])
def test_engine_longrope_tables_are_named_and_rebuilt(cli, tmp_path, engine, length):
    """Phi-3.5-mini's LongRoPE in MLX's and llama.cpp's arithmetic, short (4096 positions:
    llama.cpp takes short_factor, mlx-lm long_factor at every length) and long: its factors
    read column by column in the engine's own arithmetic, each the config's float32."""
    rope = {
        "rope_type": "longrope",
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
        "long_factor": PHI35_LONG,
        "short_factor": PHI35_SHORT,
    }
    table = pe_cli.build(
        family="rope", variant=engine, d_model=96, seq_len=length, base=10000.0, rope=rope
    ).numpy()
    notes = []
    best = _named_and_rebuilt(cli, tmp_path, table, notes=notes)
    assert best["name"] == f"library {engine}" and best["confirmed"]
    assert best["spec"]["base"] == 10000.0
    assert not any("LongRoPE factors only to a range" in note for note in notes), notes
    found = dict(best["spec"]["rope"])
    used = "long_factor" if length > 4096 or engine == "mlx" else "short_factor"
    read = np.float32(found[used])
    given = np.float32(PHI35_LONG if used == "long_factor" else PHI35_SHORT)
    # the config's own float32, or one an ulp off that makes the same table (MLX rounds each
    # factor times base**(2i/d) to float32: the shorter decimal 7.7 gives 7.7000003's period)
    assert np.all(np.abs(read - given) <= np.spacing(given)), (read, given)


def _phi35(tmp_path):
    config = {
        "architectures": ["Phi3ForCausalLM"],
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "rope_theta": 10000.0,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {
            "type": "longrope",
            "long_factor": PHI35_LONG,
            "short_factor": PHI35_SHORT,
        },
    }
    (tmp_path / "phi35.json").write_text(json.dumps(config))
    return tmp_path / "phi35.json"


@pytest.mark.parametrize(
    "engine, dtype",
    [
        ("mlx", "float16"),
        ("mlx", "bfloat16"),
        ("vllm", "float16"),
        ("vllm", "bfloat16"),
        ("llama.cpp", "float16"),
    ],
)
@pytest.mark.parametrize("length", [4096, 8192])
def test_a_half_longrope_table_is_named_with_the_factors_its_columns_tell(
    cli, tmp_path, engine, dtype, length
):
    """Phi-3.5-mini's table as each engine computes it in its half dtypes (vLLM's cache is
    transformers' own cast; mlx-lm scales in the dtype, so its values are rounded twice), short
    and long: named bit for bit and rebuilt, its factors told only to a range: the note gives
    every frequency's (or says it never turns), and the config's factors and those given are
    both within it."""
    args = ["--rope-config", _phi35(tmp_path), "--variant", engine, "--dtype", dtype]
    code, _, err = cli("generate", *args, "-l", length, "-o", tmp_path / "table.safetensors")
    assert code == 0, err
    notes = []
    best = _named_and_rebuilt(cli, tmp_path, name="table.safetensors", notes=notes)
    assert best["confirmed"] and best["differing"] == 0 and best["spec"]["dtype"] == dtype
    rope = dict(best["spec"]["rope"])
    assert rope["rope_type"] == "longrope"
    (note,) = [n for n in notes if "tells its LongRoPE factors" in n]
    assert note.startswith(f"a {dtype} table"), note
    within = {}  # frequency: the relative half-width the note gives (None: not at all)
    runs = r"(\d+(?: \.\. \d+)?(?:, \d+(?: \.\. \d+)?)*) (?:to within ±([\d.]+)%|not at all)"
    for group, percent in re.findall(runs, note.split("frequencies ", 1)[1]):
        for run in group.split(", "):
            first, _, last = run.partition(" .. ")
            for i in range(int(first), int(last or first) + 1):
                within[i] = float(percent) / 100 if percent else None
    used = "long_factor" if length > 4096 or engine == "mlx" else "short_factor"
    given = np.float64(np.float32(PHI35_LONG if used == "long_factor" else PHI35_SHORT))
    read = np.float64(np.float32(rope[used]))
    assert sorted(within) == list(range(len(given))), note
    for i, width in within.items():  # both within the range read: 2 half-widths apart at most
        if width is not None:
            assert abs(read[i] - given[i]) <= 2 * width * given[i] + np.spacing(given[i]), i


def test_a_half_longrope_table_no_factors_make_says_why(cli, tmp_path):
    """A float16 LongRoPE table with one value of a slow column pair a step off (no factor
    makes that column): unexplained, with the reason, not a wrong name; the table as
    llama.cpp made it is named."""
    args = ["--rope-config", _phi35(tmp_path), "--variant", "llama.cpp", "--dtype", "float16"]
    code, _, err = cli("generate", *args, "-l", 8192, "-o", tmp_path / "table.npy")
    assert code == 0, err
    table = np.load(tmp_path / "table.npy")
    for column in (40, 40 + 48):  # a pair, so the table still reads as rotary pairs
        table[7000, column] = np.nextafter(table[7000, column], np.float16(0))
    np.save(tmp_path / "tampered.npy", table)
    code, out, err = cli("compare", tmp_path / "tampered.npy")
    text = " ".join(out.decode().split())
    assert code == 0, err
    assert "no built-in convention explains this table" in text
    assert "nor LongRoPE factors read in any library's arithmetic (no factors within the" in text
    code, out, err = cli("compare", tmp_path / "table.npy")
    assert code == 0 and "matches library llama.cpp" in " ".join(out.decode().split()), err


def test_a_llama31_gguf_is_read_as_its_llama3_scaling_in_every_engine(cli, tmp_path):
    """A GGUF's rope_freqs that are Llama 3.1's llama3 factors bit for bit (as the converter
    writes them) are read as that scaling: the view's header says llama3, and every engine is
    in it (none told to drop a --convention it was not given)."""
    pytest.importorskip("gguf")
    from pe_cli.families.rope.gguf_config import LLAMA3
    from pe_cli.families.rope.llamacpp import llama3_freq_factors

    from .gguf_files import write_gguf

    factors = llama3_freq_factors(128, 500000.0, LLAMA3[0])
    path = write_gguf(
        tmp_path / "llama.gguf", "llama", base=500000.0, tensors={"rope_freqs": factors}
    )
    code, out, err = cli("compare", "--rope-config", path, "-l", 256, "--json")
    assert code == 0, err
    view = json.loads(out)
    assert "rope_type=llama3" in view["title"] and "longrope" not in view["title"]
    assert [e["engine"] for e in view["engines"]] == ["transformers", "mlx", "llama.cpp", "vllm"]
    assert not any("drop --convention" in note for note in view["notes"])
    assert all(e["verdict"] == "arithmetic" for e in view["engines"])
    other = write_gguf(tmp_path / "other.gguf", "llama", base=500000.0,
                       tensors={"rope_freqs": [1.0 + i / 64 for i in range(64)]})  # fmt: skip
    code, out, err = cli("compare", "--rope-config", other, "-l", 256, "--json")
    assert code == 0, err and "rope_type=longrope" in json.loads(out)["title"]


def test_a_model_of_several_tables_gets_a_view_per_treatment(cli, tmp_path):
    from .published import PUBLISHED

    path = tmp_path / "gemma3.json"
    path.write_text(json.dumps(PUBLISHED["gemma-3-4b-it"]))
    code, out, err = cli("compare", "--rope-config", path, "-l", 64, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert set(found["treatments"]) == {"sliding_attention", "full_attention"}
    assert "factor=8.0, rope_type=linear" in found["treatments"]["full_attention"]["title"]
    assert "linear" not in found["treatments"]["sliding_attention"]["title"]
    assert found["notes"] == []


@pytest.mark.parametrize(
    "name, said",
    [
        (
            "smollm3-3b",
            "layers 3, 7, ..., 35, every 4th (9 of 36): no rotation (NoPE: no_rope_layers[i] = 0)",
        ),
        ("devstral-small-2-24b-instruct", "every layer: queries multiplied by a llama4-beta scale"),
        ("llama-3.1-8b", None),
    ],
)
def test_the_view_says_what_the_tables_do_not_show(cli, tmp_path, name, said):
    from .published import PUBLISHED

    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED[name]))
    code, out, err = cli("compare", "--rope-config", path, "-l", 64, "--json")
    assert code == 0, err
    notes = [n for n in json.loads(out)["notes"] if not n.startswith(("mlx", "llama.cpp", "vllm"))]
    assert (notes == []) if said is None else any(n.startswith(said) for n in notes), notes


def test_an_engine_that_pairs_otherwise_is_compared_frequency_by_frequency(cli, tmp_path):
    """Phi-3's LongRoPE GGUF is NORM-paired in llama.cpp's table; mlx-lm's SuScaledRoPE pairs
    half only: its table is compared with the others column for column of one frequency."""
    pytest.importorskip("gguf")
    from .gguf_files import write_gguf

    factors = {"rope_freqs": [1.0 + i / 64 for i in range(64)]}
    path = write_gguf(tmp_path / "llama.gguf", "llama", base=10000.0, tensors=factors)
    code, out, err = cli("compare", "--rope-config", path, "-l", 256, "--json")
    assert code == 0, err
    view = json.loads(out)
    assert "mlx" in [e["engine"] for e in view["engines"]]
    assert any(n.startswith("mlx: pairs the dims half") for n in view["notes"])
    mlx = next(e for e in view["engines"] if e["engine"] == "mlx")
    assert mlx["verdict"] == "arithmetic"


@pytest.mark.parametrize(
    "config, said",
    [
        # SmolLM3 with NoPE every 3rd layer, which llama.cpp's hard-coded step of 4 cannot say
        ({"model_type": "smollm3", "num_hidden_layers": 6, "no_rope_layers": [1, 1, 0, 1, 1, 0]},
         "llama.cpp hard-codes every 4th layer as SmolLM3's NoPE layers"),
        ({"model_type": "smollm3", "num_hidden_layers": 8}, None),
        ({"model_type": "cohere2", "num_hidden_layers": 6, "sliding_window_pattern": 3},
         "llama.cpp takes Cohere2's sliding layers"),
        ({"model_type": "cohere2", "num_hidden_layers": 8}, None),
        ({"model_type": "llama4_text", "num_hidden_layers": 8, "floor_scale": 4096},
         "llama.cpp hard-codes Llama 4's query temperature as floor_scale 8192"),
    ],
)  # fmt: skip
def test_the_engines_that_cannot_express_a_schedule_are_named(cli, tmp_path, config, said):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("show", "--rope-config", path, "--json")
    assert code == 0, err
    engines = json.loads(out)["model"]["engines"]
    llama_cpp = [line for line in engines if line.startswith("llama.cpp")]
    assert (llama_cpp == []) if said is None else any(n.startswith(said) for n in llama_cpp)


@pytest.mark.parametrize("variant", ["exact", "hf-rope", "mlx", "vllm", "llama.cpp"])
def test_a_longrope_list_of_the_wrong_length_is_one_refusal(cli, variant):
    """LongRoPE's factor-length check is its rope type's, not each engine's: every variant
    refuses a list that does not give one factor per frequency with the same line."""
    code, out, err = cli(
        "generate", "--family", "rope", "-d", 8, "-l", 10, "--variant", variant,
        "--rope", "rope_type=longrope", "--rope", "original_max_position_embeddings=4",
        "--rope", "max_position_embeddings=16", "--rope", "factor=4",
        "--rope", "short_factor=1,1,1,1", "--rope", "long_factor=1,1,1",
    )  # fmt: skip
    assert code == 2 and not out
    assert err == "Error: longrope's long_factor must have rotary dim / 2 = 4 entries, got 3\n"
