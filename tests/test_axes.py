"""Multi-axis RoPE: M-RoPE over (t, h, w) tokens of an image or video and the 2-D RoPE of
vision encoders. Each column's axis and frequency is written here from the models' published
recomposition rules, and every element is checked against mpmath (tests/reference.py); the
bit-for-bit match with transformers' modules is tests/test_transformers.py's."""

import json

import mpmath
import numpy as np
import pytest

from pe_cli import TableSpec, build
from pe_cli.core.errors import BadInput

from . import reference as ref


def _tokens(grid, merge=1, offset=0):
    """The model's token order: t, h, w row-major; patches in merge x merge blocks."""
    *frames, rows, cols = grid
    out = []
    for frame in np.ndindex(*frames) if frames else [()]:
        for br in range(rows // merge):
            for bc in range(cols // merge):
                for i in range(merge):
                    for j in range(merge):
                        out.append((*frame, br * merge + i, bc * merge + j))
    return np.array(out) + offset


def _mrope_axis(j, sections):  # Qwen2-VL: contiguous sections t | h | w
    edges = np.cumsum(sections)
    return int(np.searchsorted(edges, j, side="right"))


def _qwen3_axis(j, sections):  # Qwen3-VL: h at j % 3 == 1 below 3 s_h, w at j % 3 == 2 below 3 s_w
    if j % 3 == 1 and j < 3 * sections[1]:
        return 1
    if j % 3 == 2 and j < 3 * sections[2]:
        return 2
    return 0


CASES = {
    # name: (spec keywords, the (axis, frequency index) of column c, dim of the power law)
    "mrope": (
        dict(axes="mrope", grid="2x3x4", offset=5, rope={"mrope_section": "4,6,6"}, d_model=32),
        lambda c: (_mrope_axis(c % 16, [4, 6, 6]), c % 16),
        32,
    ),
    "mrope-interleaved": (
        dict(
            axes="mrope-interleaved",
            grid="2x2x3",
            offset=3,
            rope={"mrope_section": "6,5,5"},
            d_model=32,
        ),
        lambda c: (_qwen3_axis(c % 16, [6, 5, 5]), c % 16),
        32,
    ),
    "mrope-glm": (
        dict(
            axes="mrope-glm",
            grid="1x3x4",
            offset=9,
            rope={"mrope_section": "4,6,6"},
            d_model=32,
            convention="interleaved",
        ),
        lambda c: (_mrope_axis(c // 2, [4, 6, 6]), c // 2),
        32,
    ),
    # Qwen-VL encoders: cat((rows, columns, rows, columns)) over a power law of dim d/2
    "axial": (
        dict(axes="axial", grid="4x6", merge=2, rope={"rope_type": "axial"}, d_model=32),
        lambda c: ((c % 16) // 8, c % 8),
        16,
    ),
    # SAM: (columns, rows) each frequency twice
    "axial-sam": (
        dict(
            axes="axial-sam",
            grid="3x5",
            rope={"rope_type": "axial"},
            d_model=32,
            convention="interleaved",
        ),
        lambda c: (1 - (c // 2) // 8, (c // 2) % 8),
        16,
    ),
    # Pixtral: even frequencies of a dim-d power law on rows, odd on columns
    "axial-pixtral": (
        dict(axes="axial-pixtral", grid="3x4", rope={"rope_type": "axial"}, d_model=16),
        lambda c: ((c % 8) // 4, 2 * (c % 4) + (c % 8) // 4),
        16,
    ),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_every_element_is_correctly_rounded(name, part):
    keywords, column, dim = CASES[name]
    spec = TableSpec(family="rope", part=part, base=10000.0, **keywords)
    got = np.asarray(build(spec).values)
    grid = [int(x) for x in keywords["grid"].split("x")]
    tokens = _tokens(
        grid,
        keywords.get("merge", 1),
        keywords.get("offset", 0) if "t" in name or "mrope" in name else 0,
    )
    assert got.shape == (len(tokens), spec.cols)
    fn = mpmath.cos if part == "cos" else mpmath.sin
    for c in range(spec.cols):
        axis, i = column(c)
        w = mpmath.power(mpmath.mpf(10000), -mpmath.mpf(2 * i) / dim)
        for r, token in enumerate(tokens):
            assert got[r, c] == ref.round_to(fn(int(token[axis]) * w), "float32"), (name, r, c)


def test_text_tokens_of_an_mrope_model_are_the_plain_table():
    plain = TableSpec(family="rope", d_model=32, seq_len=20, offset=4)
    mrope = plain.replace(axes="mrope", rope=(("mrope_section", (4.0, 6.0, 6.0)),))
    assert np.array_equal(build(plain).values, build(mrope).values)


@pytest.mark.parametrize(
    "keywords, message",
    [
        (dict(grid="2x2"), "--grid is for multi-axis tables"),
        (dict(axes="axial", rope={"rope_type": "axial"}), "needs a --grid"),
        (dict(rope={"rope_type": "axial"}), "rope_type axial is a vision encoder's"),
        (dict(axes="mrope", grid="1x2x2"), "needs mrope_section"),
        (
            dict(axes="mrope", grid="1x2x2", rope={"mrope_section": "4,4,4"}),
            "must add up to the 16",
        ),
        (dict(axes="axial", grid="3x4", merge=2, rope={"rope_type": "axial"}), "multiples of 2"),
        (
            dict(axes="axial-sam", grid="4x4", rope={"rope_type": "axial"}, convention="half"),
            "pairs its columns interleaved",
        ),
    ],
)
def test_refusals(keywords, message):
    with pytest.raises(BadInput, match=message):
        TableSpec(family="rope", d_model=32, **keywords)


def test_from_a_vision_language_config(cli, tmp_path):
    """Qwen2-VL's config.json: its text model's M-RoPE over an image's tokens, and its vision
    encoder's 2-D RoPE over patches in 2x2 merge blocks, named by the config alone."""
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "qwen2_vl",
                "text_config": {
                    "model_type": "qwen2_vl_text",
                    "hidden_size": 1536,
                    "num_attention_heads": 12,
                    "rope_parameters": {
                        "rope_type": "default",
                        "rope_theta": 1e6,
                        "mrope_section": [16, 24, 24],
                    },
                },
                "vision_config": {
                    "model_type": "qwen2_vl_vision",
                    "embed_dim": 1280,
                    "num_heads": 16,
                    "spatial_merge_size": 2,
                },
            }
        )
    )
    out = tmp_path / "image.npy"
    code, _, err = cli(
        "generate",
        "--rope-config",
        path,
        "--grid",
        "1x4x6",
        "--offset",
        10,
        "--variant",
        "hf-rope",
        "-o",
        out,
    )
    assert code == 0, err
    assert np.load(out).shape == (24, 128)
    code, _, err = cli(
        "generate",
        "--rope-config",
        path,
        "--config-part",
        "vision_config",
        "--grid",
        "4x6",
        "-o",
        out,
        "--force",
    )
    assert code == 0, err
    table = np.load(out)
    assert table.shape == (24, 80)  # head dim 1280 / 16
    # token 4 opens the second 2x2 merge block: patch (0, 2), so row angles 0 and column angles 2 * w
    w = 10000.0 ** (-2 * np.arange(20) / 40)
    assert np.allclose(table[4], np.cos(np.concatenate([0 * w, 2 * w, 0 * w, 2 * w])), atol=1e-6)
    code, _, err = cli(
        "generate", "--rope-config", path, "--config-part", "vision_config", "-o", out, "--force"
    )
    assert code != 0 and "--grid" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "rope, d, columns",
    [
        # Gemma 4's proportional RoPE: frequencies base^(-2i/d) for i < int(p * d // 2), then 0
        (
            {"rope_type": "proportional", "partial_rotary_factor": "0.25"},
            32,
            lambda i: mpmath.power(10000, -mpmath.mpf(2 * i) / 32) if i < 4 else mpmath.mpf(0),
        ),
        # an odd rotary dim (GLM-4-MoE): int(42 * 0.5) = 21, frequencies base^(-2i/21), i < 11
        (
            {"partial_rotary_factor": "0.5"},
            42,
            lambda i: mpmath.power(10000, -mpmath.mpf(2 * i) / 21),
        ),
    ],
)
def test_proportional_and_odd_dims_are_correctly_rounded(rope, d, columns):
    for part, fn in (("cos", mpmath.cos), ("sin", mpmath.sin)):
        spec = TableSpec(family="rope", d_model=d, seq_len=40, offset=1000, rope=rope, part=part)
        got = np.asarray(build(spec).values)
        n = got.shape[1] // 2
        for r in range(40):
            for c in range(got.shape[1]):
                assert got[r, c] == ref.round_to(fn((1000 + r) * columns(c % n)), "float32"), (
                    part,
                    r,
                    c,
                )


@pytest.mark.parametrize("fps", ["29.97", "23.976", "30"])
def test_a_video_frame_rate_is_the_decimal_written(fps):
    """Cosmos's exact table puts frame k at k * 24 / fps for the rate as written (29.97 is
    2997/100, not the binary double nearest it): column 0 is sin(k * 24 / fps), checked against
    mpmath at every frame."""
    table = build(preset="cosmos", grid="7x1x1", part="sin", dtype="float64", rope={"fps": fps})
    for k, value in enumerate(table.numpy()[:, 0]):
        assert value == float(mpmath.sin(mpmath.mpf(24) * k / mpmath.mpf(fps))), (fps, k)


@pytest.mark.parametrize("preset", ["cosmos", "ltx-video", "ltx2"])
def test_a_frame_rate_too_far_for_exact_positions_is_one_line(cli, tmp_path, preset):
    """A rate whose frames land past 2^32 (or on a finer grid) is refused in one line, nothing
    written, not an OverflowError."""
    out = tmp_path / "t.npy"
    code, _, err = cli(
        "generate", "--preset", preset, "--grid", "64x2x2", "--rope", "fps=1e-12", "-o", out
    )
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and "too fine or too far for exact positions" in err


def test_a_vision_language_config_reads_tokens_positions_from_ids(cli, tmp_path):
    """--ids of three axes per token, inline or in a .npy, take the config's M-RoPE layout as
    --grid does (they needed --rope-axes); one axis per token stays a 1-D table."""
    text = {"model_type": "qwen2_vl_text", "hidden_size": 1536, "num_attention_heads": 12}
    rope = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]}
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"model_type": "qwen2_vl", "text_config": {**text, "rope_parameters": rope}})
    )
    ids = "0,0,0; 1,1:3,1:3; 5,5,5"
    np.save(tmp_path / "ids.npy", np.array([[0, 0, 0], [1, 2, 3], [4, 4, 4]], np.int64))
    tables = {}
    for name, extra in {
        "given": ["--ids", ids, "--rope-axes", "mrope"],
        "read": ["--ids", ids],
        "file": ["--ids", tmp_path / "ids.npy"],
        "file-given": ["--ids", tmp_path / "ids.npy", "--rope-axes", "mrope"],
        "line": ["--ids", "3*0; 0:5"],
    }.items():
        out = tmp_path / f"{name}.npy"
        code, _, err = cli("generate", "--rope-config", config, *extra, "-o", out)
        assert code == 0, err
        tables[name] = np.load(out)
    assert tables["read"].shape == (6, 128)
    assert np.array_equal(tables["read"], tables["given"])
    assert np.array_equal(tables["file"], tables["file-given"])
    assert tables["line"].shape == (8, 128)
