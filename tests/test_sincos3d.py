"""sincos3d, the 3-D sin-cos table of video transformers: exact against mpmath, positional-
encodings' PositionalEncoding3D bit for bit, and show, compare and identification through the
family interface."""

import io
import json
import math

import mpmath
import numpy as np
import pytest
import torch

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.spec import TableSpec

from . import reference as ref


def _truth(grid, d, base, row, column):
    """Column `column` of the row for grid point `row` (t slowest), from the layout's
    definition: [t | h | w] blocks of 2n columns, n = ceil(d/6), sin and cos interleaved."""
    _, height, width = grid
    coordinates = (row // (height * width), row // width % height, row % width)
    n = -(-d // 6)
    axis, k = divmod(column, 2 * n)
    w = mpmath.mpf(base) ** (-mpmath.mpf(k // 2) / n)
    return (mpmath.sin if k % 2 == 0 else mpmath.cos)(coordinates[axis] * w)


@pytest.mark.parametrize("d", [1, 2, 5, 6, 7, 12, 13, 20])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_exact_is_correctly_rounded(d, dtype):
    grid, base = (2, 3, 4), 500.0
    got = build(family="sincos3d", grid=grid, d_model=d, base=base, dtype=dtype).float64()
    assert got.shape == (24, d)
    for row in range(24):
        for column in range(d):
            assert got[row, column] == ref.round_to(_truth(grid, d, base, row, column), dtype), (
                row,
                column,
            )


def test_exact_at_large_coordinates_and_in_blocks():
    grid, d = (3, 70, 300), 7
    spec = TableSpec(family="sincos3d", grid=grid, d_model=d, dtype="float32")
    got = build(spec).float64()
    for row in (0, 299, 300, 20999, 21000, 62999):
        for column in range(d):
            assert got[row, column] == ref.round_to(
                _truth(grid, d, 10000.0, row, column), "float32"
            )
    from pe_cli.engine import blocks

    assert np.array_equal(np.concatenate(list(blocks(spec, rows=4099))), build(spec).values)


def _library(grid, d):
    encodings = pytest.importorskip(
        "positional_encodings.torch_encodings", reason="positional-encodings is not installed"
    )
    return encodings.PositionalEncoding3D(d)(torch.zeros(1, *grid, d))[0].reshape(
        math.prod(grid), d
    )


@pytest.mark.parametrize("grid", [(1, 1, 1), (2, 3, 4), (4, 7, 5), (8, 14, 14)])
@pytest.mark.parametrize("d", [1, 2, 3, 5, 6, 7, 8, 12, 13, 64, 96, 127, 128, 384])
def test_positional_encodings_3d_bit_for_bit(grid, d):
    ours = build(family="sincos3d", grid=grid, d_model=d, variant="positional-encodings").torch()
    theirs = _library(grid, d)
    assert ours.shape == theirs.shape and torch.equal(
        ours.view(torch.int32), theirs.contiguous().view(torch.int32)
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({}, "needs --grid TxHxW"),
        ({"grid": "4x4"}, "is not TxHxW"),
        ({"grid": "2x0x3"}, "each at least 1"),
        ({"grid": "2x3x4", "offset": 2}, "--offset does not apply"),
        (
            {"grid": "2x3x4", "variant": "positional-encodings", "base": 500.0},
            "hardcodes base 10000",
        ),
        ({"grid": "2x3x4", "cls_token": True}, "--cls-token belongs to --family sincos2d"),
        ({"grid": "2x3x4", "variant": "mae"}, "use --family sincos2d"),
    ],
)
def test_refusals(params, message):
    with pytest.raises(BadInput, match=message):
        TableSpec(family="sincos3d", **params)


def test_grid_belongs_to_the_grid_families():
    with pytest.raises(
        BadInput, match="--grid belongs to --family rope or sincos2d or sincos3d, not alibi"
    ):
        TableSpec(family="alibi", grid="2x2")


# ------------------------------------------------------------------- through the command line


def _generate(cli, path, *args):
    code, _, err = cli("generate", "--family", "sincos3d", *args, "-o", path)
    assert code == 0, err
    return path


def test_show_reads_frequencies_from_the_table(cli):
    args = ["--family", "sincos3d", "--grid", "2x2x2", "-d", "17", "--base", "300"]
    code, out, err = cli("show", *args, "--json")
    assert code == 0, err
    reported = json.loads(out)["frequencies"]
    code, out, _ = cli("generate", *args, "--dtype", "float64", "-o", "-")
    row = np.load(io.BytesIO(out))[7]  # (t, h, w) = (1, 1, 1)
    assert len(reported) == 3
    for f in reported:
        for axis in "thw":
            if f"cos {axis}" in f["columns"]:
                measured = math.atan2(
                    row[f["columns"][f"sin {axis}"]], row[f["columns"][f"cos {axis}"]]
                )
                assert math.isclose(f["frequency"], measured, rel_tol=1e-12), (f, axis)
    code, out, _ = cli("show", *args, "--rows", "3:5")
    assert code == 0 and "(0,1,1)" in out.decode() and "(1,0,0)" in out.decode()


@pytest.mark.parametrize("grid, d", [("4x6x5", 96), ("1x3x7", 13), ("5x1x4", 30), ("3x4x1", 8)])
def test_identification(cli, tmp_path, grid, d):
    exact = _generate(cli, tmp_path / "exact.npy", "--grid", grid, "-d", d)
    code, out, err = cli("compare", exact)
    text = " ".join(out.decode().split())
    assert code == 0, err
    # with d = 8 (2 frequencies per axis, no w columns) a 3x4x1 grid is also sincos2d's 3x4 'pairs'
    # table, value for value: either may be named first, the other as the same table
    assert f"sincos3d, grid {grid}" in text and "bit for bit" in text, text
    library = _generate(
        cli, tmp_path / "library.npy", "--grid", grid, "-d", d, "--variant", "positional-encodings"
    )
    text = " ".join(cli("compare", library)[1].decode().split())
    assert "matches library positional-encodings" in text and "bit for bit" in text, text


def test_identifies_the_library_table(cli, tmp_path):
    path = tmp_path / "video.npy"
    np.save(path, _library((4, 6, 5), 100).numpy())
    text = " ".join(cli("compare", path)[1].decode().split())
    assert "matches library positional-encodings" in text and "grid 4 x 6 x 5" in text


def test_compare_and_audit(cli, tmp_path):
    library = _generate(
        cli,
        tmp_path / "library.npy",
        "--grid",
        "3x5x5",
        "-d",
        "64",
        "--variant",
        "positional-encodings",
    )
    code, out, err = cli(
        "compare", library, "exact:float64", "--family", "sincos3d", "--grid", "3x5x5", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert 0 < result["max_abs"] < 1e-5 and result["differing"] > 0
    code, out, err = cli("compare", "--family", "sincos3d", "--grid", "3x5x5", "-d", "64", "--json")
    assert code == 0, err
    rows = {
        row["variant"]: row for row in json.loads(out)
    }  # each against its own layout's exact table
    assert rows["positional-encodings"]["max_abs"] == result["max_abs"]
    assert 0 < rows["diffusers"]["max_abs"] < 1e-5


# CogVideoX's layout: diffusers' get_3d_sincos_pos_embed and the CogVideoXPatchEmbed buffer


def _cogvideox_truth(spec_grid, d, spatial, temporal, text, row, column):
    """From the layout's definition: text rows of zeros, then [t | w | h], each [sin | cos] of
    10000**(-i/n) (n = d/8 for t, 3d/16 for w and h) at positions k / scale."""
    if row < text:
        return mpmath.mpf(0)
    _, height, width = spec_grid
    patch = row - text
    t, h, w = patch // (height * width), patch // width % height, patch % width
    blocks = [
        ("t", d // 4, mpmath.mpf(t) / mpmath.mpf(temporal)),
        ("w", 3 * d // 8, mpmath.mpf(w) / mpmath.mpf(spatial)),
        ("h", 3 * d // 8, mpmath.mpf(h) / mpmath.mpf(spatial)),
    ]
    for _, width_, position in blocks:
        if column < width_:
            n = width_ // 2
            fn, i = (mpmath.sin, column) if column < n else (mpmath.cos, column - n)
            return fn(position * mpmath.power(10000, -mpmath.mpf(i) / n))
        column -= width_
    raise AssertionError(column)


@pytest.mark.parametrize("spatial, temporal", [(1.875, 1.0), (1.5, 2.0), (1.0, 1.0)])
def test_cogvideox_exact_against_mpmath(spatial, temporal):
    grid, d, text = (3, 4, 5), 32, 2
    table = build(
        family="sincos3d",
        convention="cogvideox",
        grid="3x4x5",
        d_model=d,
        text_tokens=text,
        interpolation_scale=spatial,
        temporal_interpolation_scale=temporal,
    ).numpy()
    for row in (0, 1, 2, 3, 8, 23, 40, 61):
        for column in range(d):
            expected = ref.round_to(
                _cogvideox_truth(grid, d, spatial, temporal, text, row, column), "float32"
            )
            assert table[row, column] == expected, (row, column)


def test_cogvideox_patch_embed_buffer_bit_for_bit():
    """CogVideoX 2B: 480 x 720, 49 frames (13 x 30 x 45 patches), 226 text rows, width 1920,
    spatial interpolation 1.875: the buffer CogVideoXPatchEmbed adds to its tokens."""
    from diffusers.models.embeddings import CogVideoXPatchEmbed

    module = CogVideoXPatchEmbed(
        patch_size=2,
        embed_dim=1920,
        sample_width=90,
        sample_height=60,
        sample_frames=49,
        max_text_seq_length=226,
        spatial_interpolation_scale=1.875,
        use_learned_positional_embeddings=False,
    )
    expected = module.pos_embedding[0].float().numpy()
    table = build(
        family="sincos3d",
        convention="cogvideox",
        variant="diffusers",
        grid="13x30x45",
        d_model=1920,
        interpolation_scale=1.875,
        text_tokens=226,
    ).numpy()
    assert np.array_equal(table, expected)


@pytest.mark.parametrize(
    "grid, d, spatial, temporal",
    [((3, 4, 6), 64, 1.5, 2.0), ((1, 7, 5), 48, 1.0, 1.0), ((5, 2, 3), 16, 0.5, 3.0)],
)
def test_cogvideox_get_3d_sincos_pos_embed(grid, d, spatial, temporal):
    from diffusers.models.embeddings import get_3d_sincos_pos_embed

    frames, height, width = grid
    expected = (
        get_3d_sincos_pos_embed(d, (width, height), frames, spatial, temporal)
        .reshape(-1, d)
        .float()
    )
    table = build(
        family="sincos3d",
        convention="cogvideox",
        variant="diffusers",
        grid="x".join(map(str, grid)),
        d_model=d,
        interpolation_scale=spatial,
        temporal_interpolation_scale=temporal,
    )
    assert np.array_equal(table.numpy(), expected.numpy())


@pytest.mark.parametrize(
    "grid, text, spatial, temporal", [("13x30x45", 226, 1.875, 1.0), ("3x4x6", 0, 1.5, 2.0)]
)
def test_cogvideox_tables_are_identified_and_rebuilt(cli, tmp_path, grid, text, spatial, temporal):
    args = [
        "--family",
        "sincos3d",
        "--convention",
        "cogvideox",
        "--variant",
        "diffusers",
        "--grid",
        grid,
        "-d",
        1920,
        "--text-tokens",
        text,
        "--interpolation-scale",
        spatial,
        "--temporal-interpolation-scale",
        temporal,
    ]
    code, _, err = cli("generate", *args, "-o", tmp_path / "t.npy")
    assert code == 0, err
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    found = json.loads(out)
    best = found["candidates"][0]
    assert (
        code == 0
        and found["explained"]
        and best["name"] == "library diffusers"
        and best["differing"] == 0
    )
    assert (
        best["spec"]["grid"] == [int(x) for x in grid.split("x")]
        and best["spec"]["text_tokens"] == text
    )
    assert (
        best["spec"]["interpolation_scale"] == spatial
        and best["spec"]["temporal_interpolation_scale"] == temporal
    )


@pytest.mark.parametrize("grid", [(3, 1, 5), (2, 1, 1), (1, 5, 1), (3, 2, 1), (1, 1, 7)])
def test_cogvideox_grids_one_patch_wide_or_high_are_identified(cli, tmp_path, grid):
    """diffusers' own table of a grid one patch high (whose h block never moves) or one wide
    (its scale read down the column of patches), at CogVideoX's scales: named bit for bit."""
    from diffusers.models.embeddings import get_3d_sincos_pos_embed

    frames, height, width = grid
    table = get_3d_sincos_pos_embed(48, (width, height), frames, 1.875, 1.5).reshape(-1, 48)
    np.save(tmp_path / "t.npy", table.float().numpy())
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    best = json.loads(out)["candidates"][0]
    assert code == 0 and best["differing"] == 0, err
    assert best["spec"]["grid"] == list(grid)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "grid, text, spatial, temporal",
    [("2x3x4", 0, 1.0, 1.0), ("2x3x4", 0, 1.875, 1.0), ("5x7x9", 3, 1.875, 1.5)],
)
def test_cogvideox_half_tables_are_identified(cli, tmp_path, dtype, grid, text, spatial, temporal):
    """A half table tells each scale only to 1e-3 (float16) or 1e-2 (bfloat16) at position 1:
    the scales are read from the last patch and frame, and the shortest decimals near them
    tried (the cli fixture rebuilds the named table from its command and spec)."""
    args = ["--family", "sincos3d", "--variant", "diffusers", "--grid", grid, "-d", 48]
    args += ["--text-tokens", text, "--interpolation-scale", spatial]
    args += ["--temporal-interpolation-scale", temporal, "--dtype", dtype]
    code, _, err = cli("generate", *args, "-o", tmp_path / "t.safetensors")
    assert code == 0, err
    code, out, err = cli("compare", tmp_path / "t.safetensors", "--json")
    best = json.loads(out)["candidates"][0]
    assert code == 0 and best["differing"] == 0 and best["confirmed"], err
    spec = best["spec"]
    assert (spec["interpolation_scale"], spec["temporal_interpolation_scale"]) == (
        spatial,
        temporal,
    )
    assert (spec["text_tokens"], spec["dtype"]) == (text, dtype)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--convention", "cogvideox", "-d", "40"], "multiple of 16"),
        (["--interpolation-scale", "2"], "belongs to the cogvideox layout"),
        (["--text-tokens", "3"], "belongs to the cogvideox layout"),
        (
            ["--convention", "cogvideox", "-d", "32", "--temporal-interpolation-scale", "0"],
            "positive",
        ),
        (
            ["--convention", "cogvideox", "-d", "32", "--variant", "diffusers", "--base", "500"],
            "hardcodes base 10000",
        ),
    ],
)
def test_cogvideox_refusals(cli, args, message):
    code, _, err = cli("generate", "--family", "sincos3d", "--grid", "2x3x4", *args)
    assert code == 2 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "broken",
    [
        "column 0",  # t's sin at frequency 1: the frame scale is read from the next pair
        "column 48",  # w's: the patch scale too
        "row 2",  # a text row
        "row 100",  # a patch's row
    ],
)
def test_cogvideox_broken_in_a_column_or_row_is_named_with_it(broken):
    """CogVideoX's table with a column or a row overwritten (a text row among them) is read
    past it, interpolation scales and all, and named with it as the exception."""
    import pe_cli
    from pe_cli.analysis import identify as core

    spec = TableSpec(
        family="sincos3d",
        convention="cogvideox",
        grid="3x6x8",
        d_model=192,
        text_tokens=4,
        interpolation_scale=1.875,
        temporal_interpolation_scale=2.0,
    )
    table = build(spec).numpy().reshape(spec.rows, spec.cols).copy()
    axis, at = broken.split()
    if axis == "column":
        table[:, int(at)] = 0.5
    else:
        table[int(at)] = 0.25
    found = pe_cli.identify(table)
    best = found.candidates[0]
    assert best.spec.replace(dtype="float64") == spec.replace(dtype="float64"), best.name
    assert core.exceptions(best, found.target) == {f"{axis}s": [int(at)]}
