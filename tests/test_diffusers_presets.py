"""diffusers' multi-axis RoPE presets (FLUX, FLUX.2, Wan, HunyuanVideo, HunyuanImage, CogVideoX,
CogView4, Cosmos, Lumina, QwenImage, Allegro, Z-Image, LTX-Video, ...): `--preset` tables against
diffusers' own modules and functions, bit for bit; the exact tables against mpmath; `compare
FILE` naming each; and the refusals."""

import json

import mpmath
import numpy as np
import pytest

import pe_cli
from tests.diffusers_modules import CASES, _exact_value, _flux, _lumina_next, _table, _wan
from tests.reference import round_to


@pytest.mark.parametrize(
    "preset, tokens, module", CASES, ids=[f"{c[0]}-{c[1]['grid']}" for c in CASES]
)
def test_diffusers_variant_is_the_module_bit_for_bit(preset, tokens, module):
    cos, sin = (t.reshape(-1, t.shape[-1]).numpy() for t in module())
    for part, expected in (("cos", cos), ("sin", sin)):
        assert np.array_equal(_table(preset, "diffusers", part, **tokens), expected), part


@pytest.mark.parametrize(
    "preset, tokens, module",
    [c for c in CASES if c[0] in ("flux", "flux2", "wan", "lumina2")][1::2],
)
def test_float64_presets_are_the_exact_table(preset, tokens, module):
    """FLUX, FLUX.2, Wan and Lumina2 compute in float64 and round once: their tables are the
    correctly rounded ones at these sizes (the exact table is checked against mpmath below)."""
    cos, sin = (t.reshape(-1, t.shape[-1]).numpy() for t in module())
    assert np.array_equal(_table(preset, "exact", "cos", **tokens), cos)
    assert np.array_equal(_table(preset, "exact", "sin", **tokens), sin)


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_exact_split_table_against_mpmath(part):
    """HunyuanVideo's layout (theta 256, axes 16, 56, 56, interleaved): every element of a
    few tokens, each axis at its own position."""
    table = _table("hunyuan-video", "exact", part, grid="3x7x9")
    for row in (0, 1, 9, 62, 188):
        t, h, w = row // 63, row // 9 % 7, row % 9
        c = 0
        for position, dim in ((t, 16), (h, 56), (w, 56)):
            for i in range(dim // 2):
                expected = _exact_value(position, 256, dim, i, part)
                assert table[row, c] == table[row, c + 1] == expected, (row, c)
                c += 2


def test_lumina_next_scaling_factors():
    """diffusers' linear_factor and ntk_factor: --rope rope_type=linear, factor, ntk_factor."""
    cos, sin = _lumina_next(12, 20, linear_factor=1.5, ntk_factor=2.0)
    rope = {"axes_dim": "36,36", "rope_type": "linear", "factor": 1.5, "ntk_factor": 2.0}
    for part, expected in (("cos", cos), ("sin", sin)):
        table = pe_cli.build(
            preset="lumina-next", grid="12x20", rope=rope, part=part, variant="diffusers"
        )
        assert np.array_equal(table.numpy(), expected.numpy())
    exact = pe_cli.build(preset="lumina-next", grid="12x20", rope=rope, part="cos").numpy()
    frequency = mpmath.power(20000, -mpmath.mpf(2 * 5) / 36) / mpmath.mpf(1.5)
    assert exact[21, 2 * 5] == round_to(
        mpmath.cos(1 * frequency), "float32"
    )  # row 1's h, frequency 5
    assert exact[21, 2 * 5 + 1] == round_to(mpmath.cos(1 * frequency), "float32")  # its w: column 1


COMPARED = [CASES[i] for i in (1, 3, 5, 6, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 33)]


@pytest.mark.parametrize("preset, tokens, module", COMPARED, ids=[c[0] for c in COMPARED])
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_compare_names_the_preset_and_its_tokens(cli, tmp_path, preset, tokens, module, part):
    table = module()[part == "sin"]
    table = table.reshape(-1, table.shape[-1]).numpy()
    np.save(tmp_path / "t.npy", table)
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0 and err == ""
    found = json.loads(out)
    assert found["explained"]
    identical = [c for c in found["candidates"] if c["differing"] == 0]
    assert identical and identical[0] == found["candidates"][0]
    names = [c["name"] for c in identical]
    assert "library diffusers" in names
    spec = next(c["spec"] for c in identical if c["name"] == "library diffusers")
    assert spec["grid"] == tokens["grid"] and spec["text_tokens"] == tokens.get("text_tokens", 0)
    args = ["--text-tokens", spec["text_tokens"]] if spec["text_tokens"] else []
    code, _, err = cli(
        "generate",
        "--preset",
        preset,
        "--grid",
        spec["grid"],
        *args,
        "--part",
        part,
        "--variant",
        "diffusers",
        "-o",
        tmp_path / "again.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "again.npy"), table)


def test_an_altered_flux_table_is_near_but_not_bit_for_bit(cli, tmp_path):
    table = _flux(8, 12, 16)[0].numpy()
    table[40, 30] = np.nextafter(table[40, 30], np.float32(2))
    np.save(tmp_path / "t.npy", table)
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    best = json.loads(out)["candidates"][0]
    assert code == 0 and best["name"].startswith("preset flux") and best["differing"] == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "flux", "--grid", "4x4", "--rope", "axes_dim=16,56,50"], "must add up to it"),
        (["--preset", "flux", "--grid", "4x4", "--rope", "axes_dim=16,55,57"], "even whole number"),
        (
            ["--family", "rope", "--text-tokens", "3"],
            "--text-tokens gives the tokens of a multi-axis table",
        ),
        (["--preset", "flux", "--grid", "4x4", "--variant", "hf-rope"], "--variant diffusers"),
        (["--preset", "flux", "--grid", "4x4", "--offset", "3"], "--offset"),
        (["--preset", "wan"], "needs its tokens"),
        (["--preset", "flux", "--grid", "2x2", "--ids", "ids.npy"], "drop --grid"),
        (
            [
                "--preset",
                "flux",
                "--grid",
                "4x4",
                "--rope",
                "rope_type=yarn",
                "--rope",
                "factor=2",
                "--rope",
                "original_max_position_embeddings=64",
            ],
            "rope_type default or linear",
        ),
        (["--family", "rope", "--freqs-dtype", "float64"], "--freqs-dtype"),
        (["--preset", "flux", "--rope-config", "x.json"], "choose one"),
        (
            [
                "--preset",
                "flux",
                "--grid",
                "4x4",
                "--rope",
                "axes_dim=16,56,56",
                "--rope",
                "fps=30",
            ],
            "LTX-Video's frame rate",
        ),
        (["--family", "rope", "-d", "128", "--rope", "axes_dim=16,56,56"], "needs a split layout"),
        (["--preset", "cogvideox", "--grid", "30"], "--grid needs both"),
    ],
)
def test_refusals(cli, args, message):
    code, _, err = cli("generate", *args)
    assert (
        code == 2
        and message in err
        and "Traceback" not in err
        and len(err.strip().splitlines()) == 1
    )


@pytest.mark.parametrize(
    "grid, base", [("24x50", (30, 45)), ("40x40", (30, 45)), ("7x9", (30, 45))]
)
def test_cropped_positions_against_fractions(grid, base):
    """CogVideoX 1.0's rows and columns at linspace(start, stop (G - 1)/G, G) over the crop
    region, computed here with fractions from the region's definition (the grid's aspect fitted
    into the base grid, centred), and the exact table's elements at them against mpmath."""
    from fractions import Fraction

    rows, cols = map(int, grid.split("x"))
    th, tw = base
    height, width = (
        (th, round(th * cols / rows)) if rows * tw > th * cols else (round(tw * rows / cols), tw)
    )
    top, left = round((th - height) / 2), round((tw - width) / 2)
    table = pe_cli.build(preset="cogvideox", grid=f"2x{grid}", part="cos").numpy()
    for row in (0, cols + 1, rows * cols - 1, rows * cols + 5):
        h, w = row // cols % rows, row % cols
        expected = []
        for start, size, k in ((top, rows, h), (left, cols, w)):
            end = Fraction((start + (height if size == rows else width)) * (size - 1), size)
            expected.append(start + k * (end - start) / (size - 1))
        c = 16
        for position in expected:
            for i in range(12):
                value = _exact_value(
                    mpmath.mpf(position.numerator) / position.denominator, 10000, 24, i, "cos"
                )
                assert table[row, c] == table[row, c + 1] == value, (row, c)
                c += 2


@pytest.mark.parametrize(
    "name, build_table, grid, text",
    [
        ("flux 2048 px", lambda: _flux(128, 128, 512)[1], "128x128", 512),
        ("wan 480 x 832", lambda: _wan(21, 30, 52)[0], "21x30x52", 0),
    ],
)
def test_long_tables_are_named_from_a_sample(cli, tmp_path, name, build_table, grid, text):
    """Tables past 2^21 elements: the grid is found by reading the rows where each axis returns
    to its start (past the first rows, read from the file), then confirmed on every row."""
    table = build_table()
    np.save(tmp_path / "t.npy", table.reshape(-1, table.shape[-1]).numpy())
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    best = json.loads(out)["candidates"][0]
    assert code == 0 and best["differing"] == 0 and best["confirmed"]
    assert best["spec"]["grid"] == grid and best["spec"]["text_tokens"] == text


def test_frequency_laws_of_their_own_refuse_scaling(cli):
    for preset, grid in (("kandinsky5", "2x3x3"), ("ltx-video", "2x3x3")):
        code, _, err = cli("generate", "--preset", preset, "--grid", grid, "--rope", "ntk_factor=2")
        assert code == 2 and "do not apply" in err


@pytest.mark.parametrize("width", [1024, 2048, 4096, 128, 112])
def test_noise_as_wide_as_a_preset_is_no_crash(cli, tmp_path, width):
    """Noise past 1 is read as every preset of its width, angles included (an axis without
    columns once crashed the angle bound of ltx2-cross)."""
    np.save(
        tmp_path / "t.npy",
        np.random.default_rng(width).standard_normal((40, width)).astype(np.float32) * 3,
    )
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0 and err == "" and not json.loads(out)["explained"]
    angles = pe_cli.build(
        preset="ltx2-cross", grid="2x2x2", part="angle", convention="single"
    ).numpy()
    assert angles.shape == (8, 1024) and np.isfinite(angles).all()


@pytest.mark.parametrize(
    "preset, dtype", [("kandinsky5", "float64"), ("ltx-video", "float64"), ("cosmos3", "float64")]
)
def test_own_laws_refuse_another_freqs_dtype(cli, preset, dtype):
    code, _, err = cli(
        "generate",
        "--preset",
        preset,
        "--grid",
        "1x2x2",
        "--freqs-dtype",
        dtype,
        "--variant",
        "diffusers",
    )
    assert code == 2 and f"--freqs-dtype {dtype} does not apply to it" in err


@pytest.mark.parametrize(
    "preset, part", [("hidream", "cos"), ("hidream", "rotation"), ("ernie-image", "sin")]
)
def test_one_token_tables_of_text_after_layouts(cli, tmp_path, preset, part):
    """A single row of a layout whose text follows the grid has no tail to read text from: it is
    the grid's one token (it crashed compare). Its cos is all ones and its sin all zeros, which
    are said as such (nothing turns; many tables of position 0 are that row); its rotation
    rows are not one number, and are read."""
    np.save(tmp_path / "t.npy", _table(preset, "diffusers", part, grid="1x1"))
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0 and "Traceback" not in err
    found = json.loads(out)
    if part == "rotation":
        assert found["candidates"]
    else:
        assert not found["candidates"]
        assert found["notes"][-1].endswith("nothing turns, and no positional table is claimed")


@pytest.mark.parametrize("case", [CASES[1], CASES[6], CASES[18]], ids=lambda c: c[0])
def test_a_preset_says_how_far_diffusers_table_is(cli, tmp_path, case):
    """generate --preset writes the exact table, and says how far the model's own diffusers
    module's table is from it (run here), and which flag gives that one."""
    preset, tokens, module = case
    args = [f"--{k.replace('_', '-')}={v}" for k, v in tokens.items()]
    ours = _table(preset, "exact", "cos", **tokens)
    theirs = module()[0].reshape(-1, ours.shape[1]).numpy()
    gap = np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max()
    code, _, err = cli("generate", "--preset", preset, *args, "-o", tmp_path / "t.npy")
    assert code == 0, err
    line = err.splitlines()[-1]
    if gap == 0:
        assert line == (
            "diffusers: its table is this one bit for bit (--variant diffusers; over the whole "
            "table)"
        )
    else:
        assert line == (
            f"diffusers: its table (--variant diffusers) differs from this one by up to "
            f"{gap:.3g}: max |difference| over the whole table"
        )
