"""LTX-Video and LTX-2: their frequency law at positions in [-1, 1], the exact tables against
mpmath, LTX-2's video, audio, split and cross-attention tables against its module bit for bit, and
the refusals."""

import json

import mpmath
import numpy as np
import pytest

import pe_cli
from tests.diffusers_modules import _table
from tests.reference import round_to


def test_ltx_exact_against_mpmath():
    """LTX-Video's exact table: (pi/2) 10000^(j/340) at 2p - 1, p = k * (8/25) / 20 (frames), k / 64
    (rows, columns); two padding columns (cos 1, sin 0) first."""
    table = pe_cli.build(preset="ltx-video", grid="3x4x5", part="sin").numpy()
    n = 2048 // 6
    for row in (0, 7, 33, 59):
        t, h, w = row // 20, row // 5 % 4, row % 5
        positions = [
            2 * mpmath.mpf(t) * 8 / 25 / 20 - 1,
            2 * mpmath.mpf(h) / 64 - 1,
            2 * mpmath.mpf(w) / 64 - 1,
        ]
        assert table[row, 0] == table[row, 1] == 0
        _ltx_sines(table, row, positions, n, 2, (0, 1, 170, 340))


def _ltx_sines(table, row, positions, n, padding, frequencies):
    """Row `row` of an LTX sin table against mpmath at frequencies j: (pi/2) 10000^(j/(n-1)) at
    each axis's position, in columns padding + 6j + 2 axis and the next."""
    for j in frequencies:
        frequency = mpmath.pi / 2 * mpmath.power(10000, mpmath.mpf(j) / (n - 1))
        for axis in range(3):
            column = padding + 6 * j + 2 * axis
            expected = round_to(mpmath.sin(positions[axis] * frequency), "float32")
            assert table[row, column] == table[row, column + 1] == expected, (row, j, axis)


def test_an_angle_at_a_multiple_of_pi_gives_exactly_zero():
    """LTX-Video's frequency (pi/2) 10000^(170/340) = 50 pi at position -1: sin is 0 exactly, in
    float64 too (the kernel's own value is some 1e-35 off; such elements are recomputed)."""
    for dtype in ("float32", "float64"):
        table = pe_cli.build(preset="ltx-video", grid="1x2x2", part="sin", dtype=dtype).numpy()
        assert table[0, 2 + 6 * 170] == 0.0 and table[0, 2 + 6 * 170 + 2] == 0.0
        cos = pe_cli.build(preset="ltx-video", grid="1x2x2", part="cos", dtype=dtype).numpy()
        assert cos[0, 2 + 6 * 170] == 1.0


@pytest.mark.parametrize("frames, rows, cols, fps", [(3, 8, 12, 24.0), (4, 5, 7, 30.0)])
def test_ltx2_video_is_the_module_bit_for_bit(cli, tmp_path, frames, rows, cols, fps):
    """LTX-2's video table (4096 wide, double precision, patch midpoints with the causal offset),
    with the coordinates its transformer makes; compare names it with its frame rate."""
    from diffusers.models.transformers.transformer_ltx2 import LTX2AudioVideoRotaryPosEmbed

    module = LTX2AudioVideoRotaryPosEmbed(4096, theta=10000.0)
    cos, sin = module(module.prepare_video_coords(1, frames, rows, cols, "cpu", fps=fps))
    rope = {} if fps == 24.0 else {"fps": fps}
    grid = f"{frames}x{rows}x{cols}"
    for part, expected in (("cos", cos[0]), ("sin", sin[0])):
        assert np.array_equal(
            _table("ltx2", "diffusers", part, grid=grid, rope=rope), expected.numpy()
        )
    np.save(tmp_path / "t.npy", sin[0].numpy())
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["grid"] == grid
        and dict(best["spec"]["rope"]).get("fps") == rope.get("fps")
    )


def test_ltx2_exact_positions_against_fractions():
    """LTX-2's exact table at rows and columns (2k + 1)/64 - 1 and frames 2((8k - 3)/24)/20 - 1
    (the first (1/2)/24), against mpmath: (pi/2) 10000^(j/681) at those positions."""
    table = pe_cli.build(preset="ltx2", grid="3x2x2", part="sin").numpy()
    n = 4096 // 6
    for row in (0, 5, 11):
        t, h, w = row // 4, row // 2 % 2, row % 2
        frame = mpmath.mpf(1) / 2 if t == 0 else mpmath.mpf(8 * t - 3)
        positions = [
            2 * frame / 24 / 20 - 1,
            mpmath.mpf(2 * h + 1) / 64 - 1,
            mpmath.mpf(2 * w + 1) / 64 - 1,
        ]
        _ltx_sines(table, row, positions, n, 4, (0, 1, 340, 681))


@pytest.mark.parametrize("frames", [7, 126])
def test_ltx2_audio_is_the_module_bit_for_bit(frames):
    """LTX-2's audio table: one axis of latent frames (5 s at 16 kHz: 126), 2048 wide."""
    from diffusers.models.transformers.transformer_ltx2 import LTX2AudioVideoRotaryPosEmbed

    module = LTX2AudioVideoRotaryPosEmbed(2048, theta=10000.0, modality="audio", scale_factors=[4])
    cos, sin = module(module.prepare_audio_coords(1, frames, "cpu"))
    for part, expected in (("cos", cos[0]), ("sin", sin[0])):
        assert np.array_equal(
            _table("ltx2-audio", "diffusers", part, grid=str(frames)), expected.numpy()
        ), part


@pytest.mark.parametrize("modality, grid", [("video", "3x4x5"), ("audio", "9")])
def test_ltx2_split_is_the_module_bit_for_bit(cli, tmp_path, modality, grid):
    """LTX-2's rope_type "split": each angle once, (heads, tokens, dim / 2 / heads) from the module,
    the (tokens, dim / 2) table of --convention single; compare names it."""
    from diffusers.models.transformers.transformer_ltx2 import LTX2AudioVideoRotaryPosEmbed

    if modality == "video":
        module = LTX2AudioVideoRotaryPosEmbed(
            4096, theta=10000.0, rope_type="split", num_attention_heads=32
        )
        coords = module.prepare_video_coords(1, 3, 4, 5, "cpu", fps=24)
    else:
        module = LTX2AudioVideoRotaryPosEmbed(
            2048,
            theta=10000.0,
            modality="audio",
            scale_factors=[4],
            rope_type="split",
            num_attention_heads=32,
        )
        coords = module.prepare_audio_coords(1, 9, "cpu")
    preset = "ltx2" if modality == "video" else "ltx2-audio"
    for part, heads in zip(("cos", "sin"), module(coords)):
        expected = heads[0].transpose(0, 1).reshape(heads.shape[2], -1).numpy()
        table = pe_cli.build(
            preset=preset, grid=grid, part=part, variant="diffusers", convention="single"
        ).numpy()
        assert np.array_equal(table, expected), part
    np.save(tmp_path / "t.npy", expected)
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["convention"] == "single"
        and best["spec"]["grid"] == grid
    )


@pytest.mark.parametrize("rope_type", ["interleaved", "split"])
def test_ltx2_cross_attention_tables_are_the_modules(cli, tmp_path, rope_type):
    """LTX-2's audio-video cross-attention ropes as its transformer builds them: the video side
    over each token's frame time only (ltx2-cross: a grid of frames x rows x columns reads back
    as frames x 1 x rows*columns, the same table); the audio side is ltx2-audio's table."""
    from diffusers.models.transformers.transformer_ltx2 import LTX2AudioVideoRotaryPosEmbed

    heads = dict(rope_type=rope_type, num_attention_heads=32)
    video = LTX2AudioVideoRotaryPosEmbed(4096, theta=10000.0, **heads)
    cross = LTX2AudioVideoRotaryPosEmbed(2048, theta=10000.0, base_num_frames=20, **heads)
    audio = LTX2AudioVideoRotaryPosEmbed(
        2048, theta=10000.0, modality="audio", scale_factors=[4], **heads
    )
    cross_audio = LTX2AudioVideoRotaryPosEmbed(
        2048, theta=10000.0, modality="audio", base_num_frames=20, **heads
    )
    coords, sound = (
        video.prepare_video_coords(1, 3, 4, 5, "cpu", fps=24),
        audio.prepare_audio_coords(1, 9, "cpu"),
    )
    convention = "interleaved" if rope_type == "interleaved" else "single"

    def flat(table):  # the split layout's (heads, tokens, dim) as (tokens, heads * dim)
        return (
            table[0] if rope_type == "interleaved" else table[0].transpose(0, 1).flatten(1)
        ).numpy()

    for preset, grid, module, at in (
        ("ltx2-cross", "3x4x5", cross, coords[:, 0:1]),
        ("ltx2-audio", "9", cross_audio, sound),
    ):
        for part, expected in zip(("cos", "sin"), module(at)):
            table = pe_cli.build(
                preset=preset, grid=grid, part=part, variant="diffusers", convention=convention
            ).numpy()
            assert np.array_equal(table, flat(expected)), (preset, part)
    np.save(tmp_path / "t.npy", flat(cross(coords[:, 0:1])[1]))
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["grid"] == "3x1x20"
    assert dict(best["spec"]["rope"])["axes_dim"] == [2048.0, 0.0, 0.0]


def test_an_axis_without_columns_is_ltx_only(cli):
    code, _, err = cli(
        "generate", "--preset", "flux", "--grid", "2x2", "--rope", "axes_dim=128,0,0"
    )
    assert code == 2 and "an axis that takes no columns, is for LTX-2's cross-attention" in err


def test_ltx2_without_double_precision_is_freqs_dtype_float32(cli, tmp_path):
    """LTX2AudioVideoRotaryPosEmbed(double_precision=False): its law in float32, --freqs-dtype
    float32; compare names it so."""
    from diffusers.models.transformers.transformer_ltx2 import LTX2AudioVideoRotaryPosEmbed

    module = LTX2AudioVideoRotaryPosEmbed(4096, theta=10000.0, double_precision=False)
    cos, sin = module(module.prepare_video_coords(1, 3, 4, 5, "cpu", fps=24))
    for part, expected in (("cos", cos[0]), ("sin", sin[0])):
        table = pe_cli.build(
            preset="ltx2", grid="3x4x5", part=part, variant="diffusers", freqs_dtype="float32"
        )
        assert np.array_equal(table.numpy(), expected.numpy()), part
    double = pe_cli.build(preset="ltx2", grid="3x4x5", part="sin", variant="diffusers").numpy()
    assert not np.array_equal(double, sin[0].numpy())  # the default is its double precision
    np.save(tmp_path / "t.npy", sin[0].numpy())
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["freqs_dtype"] == "float32"
        and best["spec"]["grid"] == "3x4x5"
    )


def test_ltx2_convention_half_is_refused(cli):
    code, _, err = cli("generate", "--preset", "ltx2", "--grid", "1x1x1", "--convention", "half")
    assert code == 2 and "interleaved (or once each: --convention single), not half" in err
