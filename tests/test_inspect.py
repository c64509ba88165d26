"""`show` and `compare`: seeing a table, diffing formulas, diagnosing and identifying tables."""

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

import pe_cli
from pe_cli.engine import build

from . import notebooks


def _json(cli, *args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


# ------------------------------------------------------------------------------------- show


def test_show_built_table(cli):
    code, out, err = cli("show", "-d", 16, "-l", 100, "--offset", 5)
    text = out.decode()
    assert code == 0 and err == ""
    assert "100 x 16" in text and "5 .. 104" in text
    assert "expected sqrt(d/2) = 2.82842712" in text
    assert "0.84147096" not in text.split("frequencies")[0]  # facts first, then the window
    assert "\x1b[" not in text
    # the window is labelled with positions (from the offset) and dimensions
    assert " 5 │" in text and "d0" in text and "wavelength" in text


def test_show_window_slices(cli):
    text = cli("show", "-d", 16, "-l", 50, "--rows", "10:12", "--cols", "2:4")[1].decode()
    window = text.split("table")[-1]
    assert "d2" in window and "d3" in window and "d4" not in window and "d1 " not in window
    assert "      10 │" in window and "      11 │" in window and "12 │" not in window


def test_show_files(cli, tmp_path):
    path = tmp_path / "pe.npy"
    np.save(path, build(d_model=8, seq_len=6).numpy())
    code, out, _ = cli("show", path)
    assert code == 0 and "6 x 8" in out.decode() and "0.84147096" in out.decode()
    st = tmp_path / "many.safetensors"
    save_file({"a": np.zeros((3, 4), np.float32), "b": np.ones((5, 4), np.float32)}, st)
    code, _, err = cli("show", st)
    assert code == 2 and "holds 2 tensors (a, b)" in err
    assert "5 x 4" in cli("show", f"{st}:b")[1].decode()


def test_show_json_facts(cli):
    report = _json(cli, "show", "-d", 8, "-l", 4, "--convention", "concat")
    assert report["shape"] == [4, 8] and report["dtype"] == "float32"
    assert report["row_norms"]["expected"] == 2.0 and report["row_norms"]["max_deviation"] < 1e-7
    freqs = report["frequencies"]
    assert [(f["sin_column"], f["cos_column"]) for f in freqs] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert freqs[1]["frequency"] == pytest.approx(0.1) and freqs[1]["wavelength"] == pytest.approx(
        62.83185307
    )


def test_show_reports_padding_rows(cli):
    report = _json(cli, "show", "-d", 8, "-l", 6, "--convention", "fairseq", "--padding-idx", "2")
    assert report["row_norms"]["zero_rows"] == [2]


# ------------------------------------------------------------------- show's row-norm check


def _norms(cli, *args):
    return _json(cli, "show", *args)["row_norms"]


def _mp_sin_cos_table(positions, d, dtype, layout="interleaved"):
    """sin and cos of p * 10000^(-2i/d) from mpmath, each rounded once to `dtype` (not pe-cli)."""
    import mpmath

    with mpmath.workprec(80):  # not mp.prec = 80: that would lower tests/reference.py's too
        angles = [
            [p * mpmath.power(10000, -mpmath.mpf(2 * i) / d) for i in range(d // 2)]
            for p in positions
        ]
        sin = np.array([[float(mpmath.sin(a)) for a in row] for row in angles])
        cos = np.array([[float(mpmath.cos(a)) for a in row] for row in angles])
    table = np.empty((len(positions), d))
    if layout == "interleaved":
        table[:, 0::2], table[:, 1::2] = sin, cos
    else:
        table[:, : d // 2], table[:, d // 2 :] = sin, cos
    return table.astype(dtype)


@pytest.mark.parametrize(
    "args",
    [
        ["-d", 64, "-l", 300],
        ["-d", 64, "-l", 300, "--convention", "concat", "--dtype", "bfloat16"],
        [
            "-d",
            64,
            "-l",
            300,
            "--convention",
            "fairseq",
            "--padding-idx",
            "1",
            "--dtype",
            "float16",
        ],
        ["--family", "sincos2d", "--grid", "6x7", "-d", 32, "--cls-token"],
        ["--family", "sincos3d", "--grid", "2x3x4", "-d", 32, "--convention", "cogvideox"],
        [
            "--family",
            "rope",
            "-d",
            32,
            "-l",
            200,
            "--part",
            "rotation",
            "--convention",
            "interleaved",
        ],
    ],
)
def test_row_norm_check_runs_where_the_columns_give_one(cli, tmp_path, args):
    """A table pe-cli built (or wrote with its parameters) whose columns are sin/cos pairs or
    2x2 rotations: every row is checked, and an exact table, in any dtype, passes (before,
    1645 rows of the bfloat16 table were 'off by > 1e-3')."""
    norms = _norms(cli, *args)
    assert norms["rows_off"] == 0 and norms["max_deviation"] <= norms["tolerance"]
    assert "assumed" not in norms
    path = tmp_path / "t.safetensors"
    assert cli("export", path, *args)[0] == 0  # the parameters travel in its metadata
    assert _norms(cli, path) == norms
    text = cli("show", *args)[1].decode()
    assert (
        f"expected {norms['formula']} = {norms['expected']:.9g} for {norms['because']}"
        in " ".join(text.split())
    )


def test_rotation_norm_carries_the_attention_factor(cli):
    """YaRN scales cos and sin by its attention factor 0.1 ln(factor) + 1: 2x2 rotations of
    d/4 frequencies then have norm sqrt(d/2) times that factor."""
    import math

    args = ["--family", "rope", "-d", 32, "-l", 200, "--part", "rotation"]
    args += ["--convention", "interleaved", "--rope", "rope_type=yarn", "--rope", "factor=4"]
    args += ["--rope", "original_max_position_embeddings=64"]
    norms = _norms(cli, *args)
    assert norms["expected"] == pytest.approx(
        math.sqrt(64 / 2) * (0.1 * math.log(4) + 1), rel=1e-12
    )
    assert norms["rows_off"] == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--family", "rope", "-d", 64, "-l", 300, "--part", "cos"],
        ["--family", "rope", "-d", 64, "-l", 300, "--part", "sin", "--convention", "interleaved"],
        ["--family", "rope", "-d", 64, "-l", 300, "--part", "angle"],
        ["--family", "rope", "-d", 64, "--part", "inv_freq"],
        ["--family", "alibi", "-l", 40],
        ["--family", "alibi", "--part", "slopes", "--heads", 16],
        ["-d", 1, "-l", 50],  # one column
        ["-d", 9, "-l", 50],  # an odd width: a sine without its cosine
    ],
)
def test_row_norm_check_is_absent_where_the_columns_give_none(cli, tmp_path, args):
    """No norm where the rows have none to have: cos or sin alone (before, a RoPE cos table
    got 'expected sqrt(d/2) = 8; 130761 rows off'), angles, frequencies, biases, slopes, odd
    widths; neither for the table pe-cli built, nor for the same values in a plain .npy."""
    assert "expected" not in _norms(cli, *args)
    path = tmp_path / "t.npy"
    assert cli("generate", *args, "-o", path)[0] == 0
    assert "expected" not in _norms(cli, path)
    text = " ".join(cli("show", path)[1].decode().split())
    assert "row norms" in text and "expected" not in text and "assum" not in text


@pytest.mark.parametrize(
    "layout, d, dtype, scale, assumed",
    [
        ("interleaved", 32, np.float32, 1 + 2**-20, "columns 2i and 2i+1"),  # 8 eps
        ("halves", 32, np.float16, 1 + 2**-7, "columns i and i+d/2"),
        ("interleaved", 64, np.float64, 1 + 2**-40, "columns 2i and 2i+1"),
    ],
)
def test_row_norm_of_a_foreign_file_says_what_it_assumed(
    cli, tmp_path, layout, d, dtype, scale, assumed
):
    """A file of unknown origin whose first rows are sin/cos pairs (made with mpmath, rounded
    once to its dtype) is checked, and the report names the layout it assumed; the tolerance
    is what that rounding allows: the true table passes, a row scaled by 8 ulps does not (in
    float64, by 2^-40: float64's own sum of squares may err by d/2 ulps)."""
    table = _mp_sin_cos_table(range(200), d, dtype, layout)
    table[150] *= dtype(scale)
    path = _save(tmp_path / "t.npy", table)
    norms = _norms(cli, path)
    assert norms["rows_off"] == 1 and norms["expected"] == pytest.approx((d / 2) ** 0.5)
    assert norms["assumed"].startswith(f"{assumed} are sin/cos pairs")
    text = " ".join(cli("show", path)[1].decode().split())
    assert (
        f"assuming {assumed} are sin/cos pairs, as they are in its first 16 non-zero rows" in text
    )
    assert "1 row off by more than" in text


def test_row_norm_of_a_foreign_file_without_pairs_is_not_checked(cli, tmp_path):
    """Nothing supports the assumption: one row of sin/cos pairs (it shows no layout), a cos
    table, a table whose first rows are broken."""
    one_row = _save(tmp_path / "one.npy", _mp_sin_cos_table([3], 16, np.float32))
    cos = np.cos(_mp_sin_cos_table(range(50), 16, np.float64)).astype(np.float32)
    broken = _mp_sin_cos_table(range(50), 16, np.float32)
    broken[:, 0] = 0.5
    for values in (one_row, _save(tmp_path / "cos.npy", cos), _save(tmp_path / "b.npy", broken)):
        assert "expected" not in _norms(cli, values)


def test_heatmap_plain_and_colour(cli):
    code, out, _ = cli("show", "-d", 64, "-l", 64, "--heatmap")
    text = out.decode()
    assert code == 0 and "\x1b[" not in text and "scale:" in text
    rows = [line for line in text.splitlines()[1:-1]]
    assert rows and all(len(r) == 64 for r in rows)  # every dimension across, one char each
    code, out, _ = cli(
        "show", "-d", 64, "-l", 64, "--heatmap", env={"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    )
    assert "\x1b[" in out.decode() and "▀" in out.decode()


# ----------------------------------------------------------------------------------- compare


def test_compare_seed_formulas_sorted_by_error(cli):
    rows = _json(cli, "compare", "-d", 64, "-l", 2048)
    assert sorted(r["variant"] for r in rows) == ["exp-div", "exp-log", "neg-pow", "pow", "stack"]
    errors = [r["max_abs"] for r in rows]
    assert errors == sorted(errors, reverse=True)
    assert all(1e-6 < e < 1e-3 for e in errors)  # float32 arithmetic: visible but small
    assert all(r["bands"][0][2] == 0 for r in rows)  # position 0 is exact in every recipe
    text = cli("compare", "-d", 64, "-l", 2048)[1].decode()
    assert "max |err| by position band" in text and "exp-log" in text


def test_compare_bfloat16_is_unusable_at_long_positions(cli):
    rows = _json(cli, "compare", "-d", 64, "-l", 4096, "--compute-dtype", "bfloat16")
    for row in rows:
        assert row["max_abs"] > 0.5
        assert row["first_over"] is not None and row["first_over"] < 16


def test_pow_and_exp_log_differ(cli):
    result = _json(cli, "compare", "pow", "exp-log", "-d", 512, "-l", 1024)
    assert result["differing"] > 0 and result["max_abs"] > 1e-6


def test_seed000_as_written_is_diagnosed(cli, tmp_path):
    """Nothing names the buggy seed's table: compare FILE exact will not guess which exact
    table it is (it used the default options' one); exact:vaswani says."""
    path = tmp_path / "seed000.npy"
    np.save(path, notebooks.seed000_as_written(64, 100).numpy())
    code, out, err = cli("compare", path, "exact")
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert "will not guess" in err and "exact:vaswani" in err
    code, out, err = cli("compare", path, "exact:vaswani")
    text = out.decode()
    assert code == 0, err
    assert "the first at position 1, dimension 1; position 0 is bit for bit equal" in " ".join(
        text.split()
    )


def _save(path, values):
    np.save(path, np.asarray(values))
    return path


@pytest.mark.parametrize(
    "a_args,b_args,finding",
    [
        ({"convention": "concat"}, {}, "another column order"),
        ({"offset": 3}, {}, "rows shifted by 3"),
        (
            {"convention": "fairseq", "padding_idx": 2},
            {"convention": "tensor2tensor"},
            "position 2 is all zeros",
        ),
        ({"base": 500000.0}, {}, "another base"),
        ({"convention": "tensor2tensor"}, {}, "another frequency family"),
    ],
)
def test_diagnosis(cli, tmp_path, a_args, b_args, finding):
    a = _save(tmp_path / "a.npy", build(d_model=16, seq_len=40, **a_args).numpy())
    b = _save(tmp_path / "b.npy", build(d_model=16, seq_len=40, **b_args).numpy())
    result = _json(cli, "compare", a, b)
    assert any(finding in f for f in result["findings"]), result["findings"]


def test_batch_axis_and_transpose_are_read_through(cli, tmp_path):
    table = build(d_model=16, seq_len=40).numpy()
    a = _save(tmp_path / "a.npy", table[None])  # batch-first
    b = _save(tmp_path / "b.npy", table.T.copy())  # transposed
    result = _json(cli, "compare", a, b)
    assert result["differing"] == 0
    assert any("batch-first" in f for f in result["notes"])
    text = cli("compare", a, b)[1].decode()
    assert "bit for bit identical" in text and "batch-first" in text and "transposed" in text


def test_tolerance_exit_codes(cli, tmp_path):
    a = _save(tmp_path / "a.npy", build(d_model=32, seq_len=500, variant="exp-log").numpy())
    assert cli("compare", a, "exact", "--atol", "1e-3")[0] == 0
    assert cli("compare", a, "exact", "--atol", "1e-7")[0] == 1
    assert cli("compare", a, "exact", "--rtol", "1e-9")[0] == 1
    assert cli("compare", "-d", 32, "-l", 64, "--atol", "1e-2")[0] == 0
    assert (
        cli("compare", "-d", 32, "-l", 4096, "--compute-dtype", "bfloat16", "--atol", "1e-2")[0]
        == 1
    )
    assert cli("compare", a, "--atol", "1e-3")[0] == 0  # identification: the best match


# ---------------------------------------------------------------------------- identification


def _numpy_tensor2tensor(d, length, base=10000.0):
    # tensor2tensor's timing signal written with plain numpy in float32, not by pe-cli
    n = d // 2
    inv = np.exp(np.arange(n, dtype=np.float32) * np.float32(-np.log(base) / max(n - 1, 1)))
    angle = np.arange(length, dtype=np.float32)[:, None] * inv[None, :]
    table = np.concatenate([np.sin(angle), np.cos(angle)], axis=1)
    return np.pad(table, [[0, 0], [0, d % 2]])


IDENTIFY = [
    (
        "export",
        {"d_model": 64, "seq_len": 200},
        "vaswani",
        "base 10000, first position 0, bit for bit",
    ),
    (
        "export",
        {"d_model": 48, "seq_len": 120, "convention": "concat", "offset": 37},
        "concat",
        "first position 37, bit for bit",
    ),
    (
        "export",
        {"d_model": 40, "seq_len": 100, "convention": "fairseq", "padding_idx": 1},
        "fairseq (padding_idx=1)",
        "bit for bit",
    ),
    (
        "export",
        {"d_model": 32, "seq_len": 300, "convention": "whisper", "base": 500000},
        "tensor2tensor (the same table as whisper, fairseq)",
        "base 500000",
    ),
    (
        "export",
        {"d_model": 64, "seq_len": 128, "convention": "fairseq", "padding_idx": 3, "offset": 2},
        "fairseq (padding_idx=3)",
        "first position 2, bit for bit",
    ),
    (
        "export",
        {"d_model": 64, "seq_len": 128, "convention": "tensor2tensor", "offset": 1000},
        "tensor2tensor",
        "first position 1000, bit for bit",
    ),
    ("numpy", {"d_model": 33, "seq_len": 90}, "tensor2tensor", "ulp of float32"),
]


@pytest.mark.parametrize("writer,params,name,detail", IDENTIFY)
def test_identify_conventions_from_files(cli, tmp_path, writer, params, name, detail):
    path = tmp_path / "unknown.safetensors"
    if writer == "export":
        args = [f"--{k.replace('_', '-')}={v}" for k, v in params.items()]
        assert cli("export", path, *args)[0] == 0
    else:
        save_file({"pos": _numpy_tensor2tensor(params["d_model"], params["seq_len"])}, path)
    text = " ".join(cli("compare", path)[1].decode().split())
    assert f"matches {name}" in text and detail in text, text


def test_identify_annotated_transformer_buffer(cli, tmp_path):
    path = _save(tmp_path / "buffer.npy", notebooks.seed003(512, 1024).numpy())
    text = " ".join(cli("compare", path)[1].decode().split())
    assert (
        "matches library annotated (the same table as library pytorch-tutorial, seed variant exp-log in float32)"
        in text
    )
    assert "bit for bit" in text


def test_identify_json(cli, tmp_path):
    path = _save(tmp_path / "t.npy", build(d_model=16, seq_len=50, offset=9).numpy())
    report = _json(cli, "compare", path)
    best = report["candidates"][0]
    assert best["name"] == "vaswani" and best["spec"]["offset"] == 9 and best["differing"] == 0


def test_a_familys_note_is_said_only_where_its_reading_matters(cli, tmp_path):
    """The rope fit's note on a scaling it cannot name is not said of a table another family
    names bit for bit (MAE's grid with its class row read as RoPE frequencies), and is said
    where nothing names the table (RoPE frequencies divided by a ramp no rope_type has)."""
    mae = pe_cli.build(
        family="sincos2d", grid=(14, 14), d_model=768, variant="mae", cls_token=True
    ).numpy()
    got = _json(cli, "compare", _save(tmp_path / "mae.npy", mae))
    assert got["explained"] and got["candidates"][0]["differing"] == 0
    assert not any("rotary frequencies" in note for note in got["notes"]), got["notes"]
    n, positions = 32, np.arange(2048)[:, None]
    w = 10000.0 ** (-np.arange(n) / n) / np.where(np.arange(n) < n // 2, 1, np.linspace(1, 3, n))
    cos = np.cos(positions * w)
    ramp = _save(tmp_path / "ramp.npy", np.concatenate([cos, cos], axis=1).astype(np.float32))
    got = _json(cli, "compare", ramp)
    assert not got["explained"]
    assert any("a frequency-dependent scaling" in note for note in got["notes"]), got["notes"]


# ---------------------------------------------------------------------------------- bad input


def _bad_files(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.zeros((4, 4), np.float32))
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes(good.read_bytes()[:-7])
    pickled = tmp_path / "pickled.npy"
    np.save(pickled, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    lying = tmp_path / "lying.safetensors"
    lying.write_bytes((10**6).to_bytes(8, "little") + b"{}")
    offsets = tmp_path / "offsets.safetensors"
    header = b'{"pe":{"dtype":"F32","shape":[4,4],"data_offsets":[0,64]}}'
    offsets.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 10)
    cube = tmp_path / "cube.npy"
    np.save(cube, np.zeros((2, 3, 4), np.float32))
    ints = tmp_path / "ints.npy"
    np.save(ints, np.zeros((3, 3), np.int64))
    garbage = tmp_path / "garbage.npy"
    garbage.write_bytes(b"not a numpy file at all")
    return [
        (tmp_path / "missing.npy", "no such file"),
        (truncated, "truncated"),
        (pickled, "never unpickles"),
        (lying, "header length"),
        (offsets, "data offsets"),
        (f"{good.parent / 'lying.safetensors'}:nope", "header length"),
        (cube, "no obvious 2-D"),
        (ints, "not a floating-point table"),
        (garbage, "not a .npy"),
    ]


def test_bad_files_are_one_line_exit_2(cli, tmp_path):
    st = tmp_path / "named.safetensors"
    save_file({"pe": np.zeros((2, 2), np.float32)}, st)
    cases = _bad_files(tmp_path) + [(f"{st}:other", "no tensor 'other'")]
    for source, message in cases:
        for command in (["show", source], ["compare", source], ["compare", source, "exact"]):
            code, out, err = cli(*command)
            assert code == 2, (command, err)
            assert err.startswith("Error: ") and err.count("\n") == 1 and message in err, (
                command,
                err,
            )
            assert out == b""


def test_shapes_that_cannot_be_compared(cli, tmp_path):
    a = _save(tmp_path / "a.npy", np.zeros((10, 8), np.float32))
    b = _save(tmp_path / "b.npy", np.zeros((10, 6), np.float32))
    code, _, err = cli("compare", a, b)
    assert code == 2 and "widths differ" in err
