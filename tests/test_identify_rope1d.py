"""Identification of one-axis RoPE tables (issue 30): an NTK-by-base table named bit for bit
with its law, float64 tables and inv_freq vectors named and rebuilt byte for byte, a rotary
dim other than the table's width said, and a true reason, with the nearest candidate's
distance, for tables nothing explains; each reason also checked absent where it must not be.

Bit for bit is held against the libraries themselves (transformers, diffusers), exactness
against mpmath (tests/reference.py), never against pe-cli's own arithmetic."""

import json
import shlex

import mpmath
import numpy as np
import pytest
import torch

import pe_cli

from . import reference as ref
from .libraries import hf_rotary
from .rope_models import GPT_OSS_YARN, LLAMA3, PHI35_LONG, PHI35_SHORT

NTK = 10000 * 8 ** (128 / 126)  # bloc97's NTK-aware base for a factor of 8 at head dim 128


def _identified(cli, path):
    """compare FILE's text and --json."""
    code, out, err = cli("compare", path)
    assert code == 0, err
    text = out.decode()
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    return text, json.loads(out)


def _rebuilt(cli, tmp_path, path, found):
    """The best candidate's printed command and --json spec each rebuild FILE byte for byte."""
    table = np.load(path)
    words = shlex.split(found["command"])
    assert words[:2] == ["pe-cli", "generate"]
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    again = np.load(tmp_path / "again.npy")
    assert again.dtype == table.dtype and again.tobytes() == table.tobytes()
    spec = dict(found["candidates"][0]["spec"], dtype=str(table.dtype))
    spec["rope"] = {k: tuple(v) if isinstance(v, list) else v for k, v in spec["rope"]}
    built = pe_cli.build(**spec).numpy().reshape(table.shape)
    assert built.dtype == table.dtype and built.tobytes() == table.tobytes()


def _save(path, values):
    np.save(path, np.ascontiguousarray(values))
    return path


# ---------------------------------------------------------------------------------------------
# NTK-by-base


@pytest.mark.parametrize(
    "rope, base, rows",
    [
        ({}, NTK, 512),
        # dynamic NTK past max_position_embeddings: 2 * 1152 / 256 - 1 = 8, grown in the forward
        ({"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 256}, 1e4, 1152),
    ],
    ids=["base", "dynamic"],
)
def test_an_ntk_by_base_table_is_named_bit_for_bit_with_its_law(cli, tmp_path, rope, base, rows):
    """transformers' table at base 10000 * 8^(128/126) (NTK-aware scaling by the base, given
    as the base or grown by dynamic NTK) is its hf-rope table at that base, rotary dim 128: the
    claim says the law, which is that base to every digit, no candidate reads it as rotary dim
    127, and no reason for a table nothing explains is said."""
    cos, _, _, _ = hf_rotary(rope, 128, base, list(range(rows)))
    path = _save(tmp_path / "ntk.npy", cos.numpy())
    text, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["confirmed"] and best["spec"]["variant"] == "hf-rope"
    assert best["spec"]["base"] == NTK and best["spec"]["d_model"] == 128
    assert "NTK-by-base 10000 * 8^(128/126)" in best["name"]
    # the law as printed is the base to its last bit
    with mpmath.workprec(200):
        law = mpmath.mpf(10000) * mpmath.power(8, mpmath.mpf(128) / 126)
        assert abs(law / mpmath.mpf(NTK) - 1) < 2.0**-52
    said = " ".join(text.split())  # as a person reads it, across the terminal's line breaks
    assert "bit for bit" in said and "NTK-by-base 10000 * 8^(128/126)" in said
    assert all(c["spec"]["d_model"] == 128 for c in found["candidates"])
    assert "rotary dim" not in text
    assert not any(reason in text for reason in REASONS if reason != "NTK-by-base"), text
    _rebuilt(cli, tmp_path, path, found)


@pytest.mark.parametrize("base", [500000.0, 82684.6])
def test_a_base_that_is_no_ntk_law_is_not_called_one(cli, tmp_path, base):
    """A round base, and a base near the NTK one but not it (2.7e-7 off, nearer than a fit
    reads: the NTK law is proposed, and scored not the table): no NTK claim, and the table is
    named bit for bit at its own base."""
    cos, _, _, _ = hf_rotary({}, 128, base, list(range(512)))
    path = _save(tmp_path / "plain.npy", cos.numpy())
    text, found = _identified(cli, path)
    assert "NTK" not in text.split("\ncandidates")[0]  # the claim
    assert not any("NTK" in c["name"] for c in found["candidates"] if c["differing"] == 0)
    best = found["candidates"][0]
    assert (
        best["differing"] == 0 and best["spec"]["d_model"] == 128 and best["spec"]["base"] == base
    )
    _rebuilt(cli, tmp_path, path, found)


# ---------------------------------------------------------------------------------------------
# the rotary dim


def test_an_odd_rotary_dim_is_said_in_the_verdict(cli, tmp_path):
    """GLM-4-MoE's int(42 * 0.5) = 21: 11 frequencies 10000^(-2i/21) in 22 columns. Its
    correctly rounded table (mpmath) is named at rotary dim 21, and the verdict says so."""
    n, rows = 11, 64
    table = np.empty((rows, 2 * n), np.float32)
    for p in range(rows):
        for i in range(n):
            w = mpmath.power(10000, -mpmath.mpf(2 * i) / 21)
            table[p, i] = table[p, i + n] = ref.round_to(mpmath.cos(p * w), "float32")
    path = _save(tmp_path / "odd.npy", table)
    text, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["d_model"] == 21 and best["spec"]["base"] == 1e4
    assert "rotary dim 21 for 11 frequencies" in text.split("candidates")[0]
    _rebuilt(cli, tmp_path, path, found)


# ---------------------------------------------------------------------------------------------
# exact LongRoPE


@pytest.mark.parametrize("rows, used", [(4096, "short_factor"), (8192, "long_factor")])
def test_an_exact_longrope_table_is_named_with_its_config_factors(cli, tmp_path, rows, used):
    """Phi-3.5-mini's LongRoPE correctly rounded (rows checked against mpmath), at its
    original length and past it: named bit for bit with the config's factors (the decimals
    its config.json holds; its slow columns' factors found by building the table), and
    rebuilt."""
    decimals = {
        "long_factor": [float(str(np.float32(f))) for f in PHI35_LONG],
        "short_factor": [float(str(np.float32(f))) for f in PHI35_SHORT],
    }
    rope = {
        "rope_type": "longrope",
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
        **decimals,
    }
    table = pe_cli.build(family="rope", d_model=96, seq_len=rows, rope=rope).numpy()
    ws, attention = ref.rope_frequencies(96, 10000.0, rope, rows)
    for p in (1, rows // 3, rows - 1):
        for i in (0, 20, 47):
            truth = attention * mpmath.cos(p * ws[i])
            assert table[p, i] == ref.round_to(truth, "float32"), (p, i)
    path = _save(tmp_path / "phi35.npy", table)
    _, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["variant"] == "exact"
    assert list(dict(best["spec"]["rope"])[used]) == decimals[used]
    _rebuilt(cli, tmp_path, path, found)


# ---------------------------------------------------------------------------------------------
# float64 tables


def test_an_exact_float64_table_is_named(cli, tmp_path):
    """cos(p * 10000^(-2i/64)) correctly rounded to float64 by mpmath: the exact table."""
    n, rows = 32, 40
    table = np.empty((rows, 2 * n), np.float64)
    for p in range(rows):
        for i in range(n):
            value = mpmath.cos(p * mpmath.power(10000, -mpmath.mpf(2 * i) / 64))
            table[p, i] = table[p, i + n] = ref.round_to(value, "float64")
    path = _save(tmp_path / "exact64.npy", table)
    _, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["variant"] == "exact"
    _rebuilt(cli, tmp_path, path, found)


@pytest.mark.parametrize("use_real", [False, True])
def test_diffusers_float64_frequencies_are_named(cli, tmp_path, use_real):
    """get_1d_rotary_pos_embed with freqs_dtype float64: complex128 kept (use_real=False: its
    real part, float64 computed and kept), or cos in float64 cast to float32 (use_real=True),
    here written as float64."""
    from diffusers.models.embeddings import get_1d_rotary_pos_embed

    made = get_1d_rotary_pos_embed(
        64, 300, theta=10000.0, use_real=use_real, freqs_dtype=torch.float64
    )
    table = (made[0] if use_real else made.real).to(torch.float64).numpy()
    path = _save(tmp_path / "diffusers64.npy", table)
    _, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["variant"] == "diffusers"
    assert best["spec"]["freqs_dtype"] == "float64"
    _rebuilt(cli, tmp_path, path, found)


# ---------------------------------------------------------------------------------------------
# inv_freq vectors


@pytest.mark.parametrize(
    "rope, base",
    [
        ({}, 10000.0),
        ({}, 500000.0),
        ({"rope_type": "linear", "factor": 4.0}, 10000.0),
        (
            {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
            500000.0,
        ),
    ],
)
def test_transformers_inv_freq_is_named_and_rebuilt(cli, tmp_path, rope, base):
    """transformers' inv_freq buffer, written as a vector: hf-rope's inv_freq bit for bit."""
    _, _, inv_freq, _ = hf_rotary(rope, 128, base, [0])
    path = _save(tmp_path / "inv_freq.npy", inv_freq.numpy())
    text, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["part"] == "inv_freq"
    assert best["spec"]["variant"] == "hf-rope" and best["spec"]["base"] == base
    # a vector of frequencies has no positions (said on one line or wrapped)
    assert "positions none" in " ".join(text.split())
    _rebuilt(cli, tmp_path, path, found)


def test_inv_freq_cast_to_bfloat16_is_the_recipe(cli, tmp_path):
    """model.to(bfloat16) casts transformers' inv_freq buffer; forward widens it to float32:
    the recipe rope-inv-freq at --compute-dtype bfloat16."""
    _, _, inv_freq, _ = hf_rotary({}, 128, 10000.0, [0])
    path = _save(tmp_path / "bf16.npy", inv_freq.to(torch.bfloat16).float().numpy())
    _, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["variant"] == "rope-inv-freq"
    assert best["spec"]["compute_dtype"] == "bfloat16"
    _rebuilt(cli, tmp_path, path, found)


def test_exact_inv_freq_is_named(cli, tmp_path):
    """10000^(-2i/96), i < 48, correctly rounded to float32 by mpmath: the exact vector."""
    w = [ref.round_to(mpmath.power(10000, -mpmath.mpf(2 * i) / 96), "float32") for i in range(48)]
    path = _save(tmp_path / "w.npy", np.array(w, np.float32))
    _, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["variant"] == "exact"
    assert best["spec"]["d_model"] == 96
    _rebuilt(cli, tmp_path, path, found)


# ---------------------------------------------------------------------------------------------
# a port's precision slips (the recipes: one stage of transformers' arithmetic in a half dtype)


def _llama_cos(d, base, positions, buffer_dtype=None, x_dtype=torch.float32):
    """transformers' Llama rotary cos, its inv_freq buffer cast as model.to(dtype) casts it
    (forward widens it to float32), for a hidden state of x_dtype (cos comes back in it)."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rope = {"rope_type": "default", "rope_theta": base}
    config = transformers.LlamaConfig(
        hidden_size=4 * d, num_attention_heads=4, head_dim=d, rope_parameters=rope
    )
    module = LlamaRotaryEmbedding(config)
    if buffer_dtype is not None:
        module.to(buffer_dtype)
    cos, _ = module(torch.zeros(1, dtype=x_dtype), torch.as_tensor(positions)[None, :])
    return cos[0]


def _save_tensor(path, table):
    """A torch table as .npy, or .safetensors for bfloat16 (numpy has none)."""
    if table.dtype == torch.bfloat16:
        from safetensors.torch import save_file

        save_file({"cos": table.contiguous()}, path.with_suffix(".safetensors"))
        return path.with_suffix(".safetensors")
    return _save(path.with_suffix(".npy"), table.numpy())


@pytest.mark.parametrize(
    "buffer, positions, x_dtype, recipe",
    [
        (torch.bfloat16, torch.arange(300), torch.float32, "rope-inv-freq"),
        (torch.float16, torch.arange(300), torch.float32, "rope-inv-freq"),
        (torch.bfloat16, torch.arange(300), torch.bfloat16, "rope-inv-freq"),
        (None, torch.arange(3000).to(torch.bfloat16), torch.float32, "rope-positions"),
        (None, torch.arange(3000).to(torch.float16), torch.float32, "rope-positions"),
    ],
    ids=["inv_freq bf16", "inv_freq fp16", "inv_freq bf16 out", "ids bf16", "ids fp16"],
)
def test_a_precision_slip_of_transformers_is_named(
    cli, tmp_path, buffer, positions, x_dtype, recipe
):
    """transformers' own table with its inv_freq buffer cast to a half dtype (model.to(dtype)),
    or its position ids held in one: named as the recipe at that --compute-dtype, bit for bit,
    with no note of a scaling it seemed to have (the cli fixture rebuilds it)."""
    low = str(buffer or positions.dtype).removeprefix("torch.")
    path = _save_tensor(tmp_path / "slip", _llama_cos(64, 10000.0, positions, buffer, x_dtype))
    text, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["confirmed"], text
    assert (best["spec"]["variant"], best["spec"]["compute_dtype"]) == (recipe, low)
    assert f"recipe {recipe} ({low})" in " ".join(text.split())
    assert not any("scaling" in note or "power law" in note for note in found["notes"])


@pytest.mark.parametrize(
    "low, dtype",
    [("bfloat16", "float32"), ("float16", "float32"), ("bfloat16", "bfloat16"),
     ("float16", "float16"), ("bfloat16", "float16")],
)  # fmt: skip
def test_angles_and_cos_in_a_half_dtype_are_the_table_recipe(cli, tmp_path, low, dtype):
    """rope-table (the angles and cos/sin computed in --compute-dtype, as under autocast): its
    values lie on the half dtype's grid (in a wider file, or its own), which tells frequencies
    only to 1e-2; the round bases near the fit are tried, linearly scaled where the first
    frequency is not 1. (float16 arithmetic in a bfloat16 file shows neither grid.)"""
    for rope in ({}, {"rope_type": "linear", "factor": 4.0}):
        made = pe_cli.build(
            family="rope", variant="rope-table", compute_dtype=low, d_model=32, seq_len=200,
            base=500000.0, rope=rope, dtype=dtype,
        )  # fmt: skip
        path = _save_tensor(tmp_path / f"table{len(rope)}", made.torch())
        _, found = _identified(cli, path)
        best = found["candidates"][0]
        assert best["differing"] == 0 and best["confirmed"], best["name"]
        assert (best["spec"]["variant"], best["spec"]["compute_dtype"]) == ("rope-table", low)


# ---------------------------------------------------------------------------------------------
# an honest no-match


def _pairs(plane):
    """A half-pairing table of one plane (cos or sin, one column per frequency)."""
    return np.concatenate([plane, plane], axis=1).astype(np.float32)


POSITIONS = np.arange(256)[:, None]
GEOMETRIC = 10000.0 ** (-np.arange(32) / 32)

# (the table, what its reason says, what it must not say)
DEFEATING = {
    "noise": (
        lambda: np.random.default_rng(3).standard_normal((256, 64)).astype(np.float32),
        ["64 of its 64 columns are not sinusoids of the position"],
    ),
    "offset": (
        lambda: _pairs(np.cos((POSITIONS + 100) * GEOMETRIC)),
        ["its columns are sinusoids of the position, each turning at a steady rate"],
    ),
    "one column": (
        lambda: np.cos(POSITIONS * 0.123456789).astype(np.float32) * np.float32(0.7),
        ["its cos columns start at 0.7, not 1: an attention factor, which"],
    ),
    "one row": (  # nothing reads it as one row: it is read as one column, (64, 1)
        lambda: np.random.default_rng(4).standard_normal((1, 64)).astype(np.float32),
        ["read as transposed (64, 1)", "1 of its 1 columns is not a sinusoid of the position"],
    ),
    "one row not falling": (  # read as one column, (4, 1)
        lambda: np.array([[1.0, 0.5, 0.6, 0.1]], np.float32),
        ["1 of its 1 columns is not a sinusoid of the position"],
    ),
    "two rows": (
        lambda: _pairs(np.cos(np.arange(2)[:, None] * GEOMETRIC)),
        ["it has 2 rows: a 1-D RoPE table's frequencies are read from 3"],
    ),
    "constant": (
        lambda: np.full((256, 64), 0.5, np.float32),
        ["every one of its 16,384 values is 0.5: nothing turns", "no positional table is claimed"],
    ),
    "constant columns": (
        lambda: _pairs(np.where(np.arange(32) == 5, 1.0, np.cos(POSITIONS * GEOMETRIC))),
        ["1 of its 32 frequency columns (5) holds one value at every position"],
    ),
    "linear law": (
        lambda: _pairs(np.cos(POSITIONS * np.linspace(1, 0.01, 32))),
        ["follow no power law", "run from 0.238 to 0.968"],
    ),
    "inverse squares": (
        lambda: _pairs(np.cos(POSITIONS / (1.0 + np.arange(32)) ** 2)),
        ["follow no power law"],
    ),
}

REASONS = (
    "no positional table is claimed",
    "are not sinusoids of the position",
    "is not a sinusoid of the position",
    "sinusoids of the position, each turning",
    "does not fall from a positive first value",
    "rows: a 1-D RoPE table's frequencies are read from 3",
    "every column holds one value",
    "hold one value at every position",
    "holds one value at every position",
    "follow no power law",
    "an attention factor, which",
    "NTK-by-base",
    "rotary dim",
)


@pytest.mark.parametrize("name", sorted(DEFEATING))
def test_an_unexplained_table_gets_a_true_reason(cli, tmp_path, name):
    """Each table built to defeat a reader: not explained, its reason (the rope reading's
    measurement) said, none of the others, the nearest candidate with its distance where one
    is offered, and never a base outside real models' (100 to 1e8)."""
    make, said = DEFEATING[name]
    path = _save(tmp_path / "t.npy", make())
    text, found = _identified(cli, path)
    notes = " ".join(found["notes"]) + " " + text
    for reason in said:
        assert reason in notes, (name, notes)
    for reason in REASONS:
        if not any(reason in s or s in reason for s in said):
            assert reason not in " ".join(found["notes"]), (name, reason, found["notes"])
    assert not found["explained"], (name, text)
    rope = [c for c in found["candidates"] if c["spec"]["family"] == "rope"]
    for c in rope:
        assert 100 <= c["spec"]["base"] <= 1e8, (name, c["name"], c["spec"]["base"])
    flat = " ".join(text.split())  # the verdict, unwrapped
    if name in ("linear law", "inverse squares"):
        assert rope and "the nearest is rope" in flat and "off by up to" in flat
    if name == "constant columns":  # the plain table but for frequency 5's two columns
        assert found["exceptions"] == {"columns": [5, 37]}
        assert "rope cos, half pairing, base 10000" in flat
        assert "bit for bit (float32) except columns 5, 37" in flat


@pytest.mark.parametrize(
    "made",
    [
        dict(d_model=64, seq_len=300, part="sin", convention="interleaved"),
        dict(d_model=64, seq_len=300, part="inv_freq", variant="hf-rope"),
        dict(d_model=96, seq_len=400, base=500000.0, variant="hf-rope", dtype="float16"),
    ],
)
def test_no_reason_is_said_of_a_table_that_is_named(cli, tmp_path, made):
    """Tables pe-cli names bit for bit: none of the no-match reasons, no NTK or rotary dim
    claim, whatever the reader measured."""
    path = _save(tmp_path / "named.npy", pe_cli.build(family="rope", **made).numpy())
    text, found = _identified(cli, path)
    assert found["candidates"][0]["differing"] == 0 and found["explained"]
    for reason in REASONS:
        assert reason not in text and reason not in " ".join(found["notes"]), reason


def test_the_nearest_of_a_scaled_table_nothing_names_is_its_plain_law(cli, tmp_path):
    """A YaRN table in a precision recipe nothing reads (its plain law is right but for the
    slowest columns, off by 2 there): the nearest is that law, of least RMS error, before
    tables wrong in every element whose largest error is smaller; the verdict gives both
    errors. A table that matches a candidate (MLX's proportional rope, linear scaling within
    an ulp) is ordered by its largest error, with no RMS said."""
    rope = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    made = pe_cli.build(family="rope", variant="rope-inv-freq", d_model=16, seq_len=4104, rope=rope)
    text, found = _identified(cli, _save(tmp_path / "yarn.npy", made.numpy()))
    flat = " ".join(text.split())
    assert not found["explained"]
    best = found["candidates"][0]
    assert best["spec"]["family"] == "rope" and not best["spec"]["rope"]  # no scaling
    assert best["name"].startswith("rope cos") and f"the nearest is {best['name']}" in flat
    far = [c for c in found["candidates"] if c["differing"]]
    assert min(c["rms"] for c in far) == best["rms"] < max(c["rms"] for c in far)
    assert any(c["max_abs"] < best["max_abs"] for c in far), "no candidate it was put before"
    assert "off by up to " in flat and " RMS), more than float32 arithmetic" in flat
    close = pe_cli.build(
        family="rope",
        variant="mlx",
        d_model=16,
        seq_len=24,
        rope={"rope_type": "proportional", "factor": 4.0},
    )
    text, found = _identified(cli, _save(tmp_path / "close.npy", close.numpy()))
    assert (
        found["explained"]
        and found["candidates"][0]["differing"]
        and "RMS" not in text.split("candidates")[0]
    )


def test_candidates_of_one_name_print_bases_that_differ(capsys):
    """Two rope candidates of one name, bases 500000 and 500000.0896, were both printed
    '500000': each base is printed to the digits that part them (500000.1), no more where none
    need it."""
    from pe_cli import render
    from pe_cli.analysis.compare import Identification
    from pe_cli.analysis.identify import Candidate
    from pe_cli.analysis.metrics import difference
    from pe_cli.analysis.tables import from_spec
    from pe_cli.spec import spec_from_keywords

    def candidate(base):
        spec = spec_from_keywords(family="rope", d_model=8, seq_len=4, base=base)
        values = np.zeros((4, 8))
        return Candidate(
            "rope cos, half pairing", spec, difference(values, values + 0.5, "float32")
        )

    target = from_spec(spec_from_keywords(family="rope", d_model=8, seq_len=4), "t")
    render.identification(Identification(target, [candidate(500000.0), candidate(500000.0896)]))
    rows = [line for line in capsys.readouterr().out.splitlines() if "half pairing │" in line]
    assert [row.split("│")[1].strip() for row in rows] == ["500000", "500000.1"]
    render.identification(Identification(target, [candidate(500000.0), candidate(10000.0)]))
    rows = [line for line in capsys.readouterr().out.splitlines() if "half pairing │" in line]
    assert [row.split("│")[1].strip() for row in rows] == ["500000", "10000"]


def test_compare_file_exact_is_the_exact_table_of_what_the_file_is(cli, tmp_path):
    """`compare FILE exact` set a RoPE file against the sinusoidal table ('differ by up to 2')
    one command after `compare FILE` named it: with no option choosing the kind of table,
    exact is the exact table of what the file is named; an option that chooses keeps it."""
    rope = tmp_path / "rope.npy"
    np.save(rope, pe_cli.build(family="rope", d_model=64, seq_len=128).numpy())
    code, out, err = cli("compare", rope, "exact", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["max_abs"] == 0 and "rope half" in found["b"]
    code, out, err = cli("compare", rope, "exact")
    assert "bit for bit identical" in " ".join(out.decode().split())
    code, out, err = cli("compare", rope, "exact", "--family", "sinusoidal", "--json")
    assert code == 0 and json.loads(out)["max_abs"] > 1  # the kind asked for
    concat = tmp_path / "concat.npy"
    np.save(concat, pe_cli.build(d_model=64, seq_len=128, convention="concat", base=1000).numpy())
    code, out, err = cli("compare", concat, "exact", "--json")
    assert json.loads(out)["max_abs"] == 0


# ---------------------------------------------------------------------------------------------
# vLLM's cos_sin_cache: [cos | sin], one column per frequency each


def test_a_cos_sin_cache_from_transformers_module_is_named(cli, tmp_path):
    """vLLM's cos_sin_cache as vLLM holds it: transformers' float32 cos and sin (Llama 3.1's
    rope), each rotary dim / 2 columns, side by side. Named bit for bit as --part cos-sin,
    with the command that rebuilds it (it was 'matches timestep ... within 5148 ulp')."""
    cos, sin, _, _ = hf_rotary(LLAMA3, 128, 500000.0, list(range(2048)))
    cache = torch.cat([cos[:, :64], sin[:, :64]], dim=-1).numpy()
    path = _save(tmp_path / "cos_sin_cache.npy", cache)
    text, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["part"] == "cos-sin", best["name"]
    assert best["spec"]["variant"] in ("hf-rope", "vllm")
    assert dict(best["spec"]["rope"])["rope_type"] == "llama3"
    assert "bit for bit" in text and "timestep" not in text.split("candidates")[0]
    _rebuilt(cli, tmp_path, path, found)


def test_a_cos_sin_table_is_its_cos_and_sin_side_by_side(cli, tmp_path):
    parts = {}
    for part, convention in (("cos", "single"), ("sin", "single"), ("cos-sin", "single")):
        out = tmp_path / f"{part}.npy"
        code, _, err = cli(
            "generate", "--family", "rope", "-d", 64, "-l", 100, "--base", 10000,
            "--part", part, "--convention", convention, "--variant", "vllm", "-o", out,
        )  # fmt: skip
        assert code == 0, err
        parts[part] = np.load(out)
    assert parts["cos-sin"].shape == (100, 64)
    assert np.array_equal(parts["cos-sin"], np.concatenate([parts["cos"], parts["sin"]], axis=1))
    # at base 10000 a sinusoidal timestep library's float32 table is the same bits: named too
    text, found = _identified(cli, tmp_path / "cos-sin.npy")
    named = [c for c in found["candidates"] if c["differing"] == 0 and c["confirmed"]]
    assert any(c["spec"].get("part") == "cos-sin" for c in named), text


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_a_cos_sin_table_is_one_column_per_frequency(cli, convention):
    code, out, err = cli(
        "generate", "--family", "rope", "-d", 64, "-l", 10, "--part", "cos-sin",
        "--convention", convention,
    )  # fmt: skip
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert "--part cos-sin is vLLM's cos_sin_cache" in err and f"not {convention}" in err


# ---------------------------------------------------------------------------------------------
# a known table broken in a few columns (a buffer overwritten): named, with them listed


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_transformers_table_with_broken_columns_is_named_with_them(cli, tmp_path, part):
    """transformers' own float32 table of Llama 3.1 (its rotary module's cos or sin) with
    columns 37 and 50 overwritten: library hf-rope, bit for bit except those columns, read from
    their half-pairing twins (101, 114); its command rebuilds every other column."""
    cos, sin, _, _ = hf_rotary(LLAMA3, 128, 500000.0, list(range(2048)))
    table = (cos if part == "cos" else sin).numpy().copy()
    table[:, [37, 50]] = 0.5
    path = _save(tmp_path / "broken.npy", table)
    text, found = _identified(cli, path)
    best = found["candidates"][0]
    assert best["spec"]["variant"] in ("hf-rope", "vllm") and best["differing"] == 2 * 2048
    assert dict(best["spec"]["rope"])["rope_type"] == "llama3", best["name"]
    assert found["exceptions"] == {"columns": [37, 50]}
    assert "bit for bit (float32) except columns 37, 50" in " ".join(text.split())
    assert "(37 from 101, 50 from 114)" in " ".join(text.split())
    code, _, err = cli(*shlex.split(best["command"])[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    rebuilt = np.load(tmp_path / "again.npy")
    differ = np.flatnonzero((rebuilt != table).any(axis=0)).tolist()
    assert differ == [37, 50]


def test_a_whole_table_is_not_said_to_be_mended(cli, tmp_path):
    cos, _, _, _ = hf_rotary(LLAMA3, 128, 500000.0, list(range(512)))
    text, found = _identified(cli, _save(tmp_path / "whole.npy", cos.numpy()))
    assert found["candidates"][0]["differing"] == 0 and found["exceptions"] is None
    assert "pair twin" not in text and "made from the frequencies" not in text


def test_a_pair_broken_in_both_columns_is_made_from_its_neighbours(cli, tmp_path):
    """Both columns of a frequency overwritten: no twin holds it and nothing is read from one;
    both are made from the frequencies beside them, and the table is named bit for bit except
    those two columns (it was 'no built-in convention explains this table')."""
    table = pe_cli.build(family="rope", d_model=64, seq_len=256, part="cos").numpy()
    table[:, [5, 37]] = 0.5
    text, found = _identified(cli, _save(tmp_path / "pair.npy", table))
    said = " ".join(text.split())
    assert "pair twin" not in said and "columns 5, 37 made from the frequencies" in said
    assert not any(c["differing"] == 0 for c in found["candidates"])
    assert found["exceptions"] == {"columns": [5, 37]}
    assert "rope cos, half pairing, base 10000" in said
    assert "bit for bit (float32) except columns 5, 37" in said


@pytest.mark.parametrize("part", ["cos", "sin"])
@pytest.mark.parametrize("column", [0, 5, 20])
def test_a_table_of_one_column_per_pair_broken_in_one_is_named_with_it(cli, tmp_path, part, column):
    """gpt-oss's YaRN table as transformers computes it, one column per frequency (no pair
    twin to mend from), with one column overwritten (the fastest, one in YaRN's ramp, whose
    frequency no power law through its neighbours gives, a slower one): the column is made
    from its neighbours' frequencies and left out of the fit, and the table is named bit for
    bit except it. Its command rebuilds every other column."""
    table = pe_cli.build(
        family="rope", d_model=64, seq_len=300, base=150000.0, rope=GPT_OSS_YARN,
        variant="hf-rope", part=part, convention="single",
    ).numpy()  # fmt: skip
    table[:, column] = 0.5
    text, found = _identified(cli, _save(tmp_path / "broken.npy", table))
    said = " ".join(text.split())
    best = found["candidates"][0]
    assert found["exceptions"] == {"columns": [column]}
    assert best["spec"]["variant"] == "hf-rope" and best["differing"] == 300
    assert dict(best["spec"]["rope"]) == GPT_OSS_YARN
    assert f"bit for bit (float32) except column {column} " in said
    assert f"read with column {column} made from the frequencies of the columns beside it" in said
    code, _, err = cli(*shlex.split(best["command"])[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    differ = np.flatnonzero((np.load(tmp_path / "again.npy") != table).any(axis=0)).tolist()
    assert differ == [column]


def test_a_table_of_one_column_per_pair_broken_in_many_is_not_named(cli, tmp_path):
    """Where more than a few columns are overwritten none is made up, and nothing is called
    the table."""
    table = pe_cli.build(family="rope", d_model=64, seq_len=300, part="cos", convention="single")
    table = table.numpy()
    table[:, 2:20:2] = 0.5  # 9 of 32 columns
    text, found = _identified(cli, _save(tmp_path / "many.npy", table))
    assert "made from the frequencies" not in text and found["exceptions"] is None
    assert "bit for bit" not in " ".join(text.split())
