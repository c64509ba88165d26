"""Pooled history tables (--rope pool): FramePack's, Helios's and AnyFlow-FAR's cos and sin
averaged over blocks, against their modules bit for bit and against mpmath, renormalised
(pool_unit) or not, compare naming them, and the refusals."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.diffusers_modules import _table
from tests.reference import round_to


def _framepack_history(frames, rows, cols, kernel):
    """FramePack's history table as its transformer pools it: HunyuanVideoFramepackRotaryPosEmbed
    over the frames, then its _pad_rotary_emb (replicate padding, avg_pool3d)."""
    from diffusers.models.transformers.transformer_hunyuan_video_framepack import (
        HunyuanVideoFramepackRotaryPosEmbed,
        HunyuanVideoFramepackTransformer3DModel,
    )

    rope = HunyuanVideoFramepackRotaryPosEmbed(2, 1, [16, 56, 56], 256.0)
    unpooled = rope(
        torch.tensor(list(frames)), rows * 2, cols * 2, "cpu"
    )  # it takes pixels of 2x2 patches
    return HunyuanVideoFramepackTransformer3DModel._pad_rotary_emb(
        None, unpooled, rows, cols, kernel
    )


@pytest.mark.parametrize(
    "frames, rows, cols, k",
    [
        (range(17, 19), 15, 26, 2),
        (range(19, 35), 15, 26, 4),
        (range(3, 6), 7, 9, 2),
        (range(0, 1), 6, 5, 4),
    ],
)
def test_framepack_history_is_the_module_bit_for_bit(cli, tmp_path, frames, rows, cols, k):
    """FramePack's 2x and 4x history tables (480 x 832 latents: 15 x 26 patches, padded to blocks
    of 4), and odd sizes, one frame among them; compare names each with its grid and blocks."""
    ids = f"{frames[0]}:{frames[-1] + 1},0:{rows},0:{cols}"
    for part, expected in zip(("cos", "sin"), _framepack_history(frames, rows, cols, (k, k, k))):
        table = _table("hunyuan-video", "diffusers", part, ids=ids, rope={"pool": f"{k},{k},{k}"})
        assert np.array_equal(table, expected.numpy()), part
        np.save(tmp_path / "t.npy", expected.numpy())
        best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
        assert best["differing"] == 0 and dict(best["spec"]["rope"])["pool"] == [k, k, k], part
        assert best["spec"]["axes"] == "split" and (
            best["spec"]["ids"] == ids or len(frames) == 1
        ), part


@pytest.mark.parametrize(
    "frames, rows, cols, k", [(range(3, 5), 11, 9, 2), (range(5, 21), 13, 10, 4)]
)
def test_helios_history_is_the_module_bit_for_bit(frames, rows, cols, k):
    """Helios's mid and long history: its [cos | sin] table, padded and pooled by its transformer's
    pad_for_3d_conv and center_down_sample_3d."""
    from diffusers.models.transformers.transformer_helios import (
        HeliosRotaryPosEmbed,
        center_down_sample_3d,
        pad_for_3d_conv,
    )

    table = HeliosRotaryPosEmbed((44, 42, 42), 10000.0)(
        torch.tensor([list(frames)]), rows, cols, "cpu"
    )
    pooled = (
        center_down_sample_3d(pad_for_3d_conv(table, (k, k, k)), (k, k, k))
        .flatten(2)
        .transpose(1, 2)[0]
    )
    ids = f"{frames[0]}:{frames[-1] + 1},0:{rows},0:{cols}"
    for part, expected in (("cos", pooled[:, :128]), ("sin", pooled[:, 128:])):
        built = _table("helios", "diffusers", part, ids=ids, rope={"pool": f"{k},{k},{k}"})
        assert np.array_equal(built, expected.numpy()), part


@pytest.mark.parametrize("ids, k", [("7:12,0:9,0:6", 4), ("1048570:1048573,3:8,0:4", 2)])
def test_pooled_exact_table_against_mpmath(ids, k):
    """Every element of an exact pooled table is the correctly rounded mean of mpmath's sin (or
    cos) over its block: positions of the grid from the block's first, its last repeated past
    the grid's end; axes t, h, w over 16, 56, 56 columns of theta 256, pairs interleaved."""
    grid = [range(int(a), int(b)) for a, b in (axis.split(":") for axis in ids.split(","))]
    counts = [-(-len(g) // k) for g in grid]
    for dtype in ("float64", "float32", "bfloat16"):
        for part, function in (("sin", mpmath.sin), ("cos", mpmath.cos)):
            table = (
                pe_cli.build(
                    preset="hunyuan-video",
                    ids=ids,
                    rope={"pool": f"{k},{k},{k}"},
                    part=part,
                    dtype=dtype,
                )
                .torch()
                .double()
                .numpy()
            )
            assert table.shape == (np.prod(counts), 128)
            for row in range(table.shape[0]):
                index = np.unravel_index(row, counts)
                for column in range(0, 128, 5 if dtype == "float64" else 9):
                    axis, within = (0, column) if column < 16 else divmod(column - 16, 56)
                    axis, dim = (0, 16) if column < 16 else (axis + 1, 56)
                    frequency = mpmath.power(256, -mpmath.mpf(2 * (within // 2)) / dim)
                    g = grid[axis]
                    block = [g[min(index[axis] * k + j, len(g) - 1)] for j in range(k)]
                    mean = mpmath.fsum(function(p * frequency) for p in block) / k
                    assert table[row, column] == round_to(mean, dtype), (dtype, part, row, column)


def test_a_pooled_sum_that_cancels_is_exactly_zero():
    """LTX-Video's frequencies are rational multiples of pi: pooled over rows and columns, some
    cos and sin means cancel to 0 exactly, which the double-double sums miss by some 1e-30.
    Such means are decided exactly: 0, never a value that small."""
    for part in ("cos", "sin"):
        table = pe_cli.build(
            preset="ltx-video", grid="1x4x4", rope={"pool": "1,2,2"}, part=part, dtype="float64"
        ).numpy()
        assert np.sum(table == 0) >= 8 and not np.any((np.abs(table) < 1e-15) & (table != 0)), part


@pytest.mark.parametrize(
    "args, message",
    [
        (
            [
                "--preset",
                "hunyuan-video",
                "--grid",
                "2x4x4",
                "--text-tokens",
                "3",
                "--rope",
                "pool=2,2,2",
            ],
            "must make one row-major grid",
        ),
        (
            ["--preset", "hunyuan-video", "--ids", "0,0,0;1,1,1", "--rope", "pool=2,2,2"],
            "must make one row-major grid",
        ),
        (
            [
                "--preset",
                "hunyuan-video",
                "--grid",
                "2x4x4",
                "--rope",
                "pool=2,2,2",
                "--part",
                "angle",
            ],
            "averages cos and sin tables",
        ),
        (
            ["--preset", "hunyuan-video", "--grid", "2x4x4", "--rope", "pool=2,0.5,2"],
            "a whole number of tokens",
        ),
        (
            ["--preset", "hunyuan-video", "--grid", "2x4x4", "--rope", "pool=2,2"],
            "2 block sizes for 3 axes",
        ),
        (["--preset", "flux2", "--grid", "2x4", "--rope", "pool=2,2,2,2"], "1 to 3 axes"),
        (["--family", "rope", "-d", "64", "--rope", "pool=2"], "needs a split layout"),
    ],
)
def test_pooling_refuses_what_it_cannot_average(cli, args, message):
    code, _, err = cli("generate", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_pooled_means_on_torch_are_numpys():
    """The path --device cuda takes for pooled means (torch arrays, renormalised too), run on the
    CPU, in blocks of 5 rows: every element the same as numpy's, in 4 dtypes."""
    from pe_cli.core.dtypes import host_bits
    from pe_cli.engine import _kernel_blocks

    for dtype in ("float64", "float32", "float16", "bfloat16"):
        for preset, rope, width in (
            ("ltx-video", {"pool": "2,2,2"}, 2048),
            ("wan-complex", {"pool": "2,2,2", "pool_unit": True}, 64),
        ):
            spec = pe_cli.build(
                preset=preset, grid="3x6x5", rope=rope, part="sin", dtype=dtype
            ).spec
            by_numpy = np.concatenate([host_bits(b) for b in _kernel_blocks(spec, "cpu", rows=5)])
            by_torch = np.concatenate(
                [host_bits(b) for b in _kernel_blocks(spec, "cpu", rows=5, use_torch=True)]
            )
            assert by_numpy.shape == (18, width) and np.array_equal(by_numpy, by_torch), (
                preset,
                dtype,
            )


@pytest.mark.parametrize("frames, rows, cols", [(3, 5, 7), (4, 15, 26)])
def test_anyflow_far_compressed_frames_are_the_module_bit_for_bit(
    cli, tmp_path, frames, rows, cols
):
    """AnyFlow-FAR's compressed frames (patch (1, 2, 2) of (1, 4, 4): blocks 1 x 2 x 2 of its
    complex128 table, each axis pooled alone and renormalised); compare names each part with its
    grid, blocks and renormalisation."""
    from diffusers.models.transformers.transformer_anyflow_far import AnyFlowCausalRotaryPosEmbed

    rope = AnyFlowCausalRotaryPosEmbed(128, (1, 2, 2), (1, 4, 4), 1024)
    table = rope._forward_compressed_frame(frames, rows, cols, torch.device("cpu")).reshape(
        frames * rows * cols, -1
    )
    ids = f"0:{frames},0:{2 * rows},0:{2 * cols}"
    for part, expected in (("cos", table.real), ("sin", table.imag)):
        built = pe_cli.build(
            preset="wan-complex",
            ids=ids,
            rope={"pool": "1,2,2", "pool_unit": True},
            part=part,
            variant="diffusers",
            dtype="float64",
        ).numpy()
        assert np.array_equal(built, expected.numpy()), part
        np.save(tmp_path / "t.npy", expected.numpy())
        best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
        rope_found = dict(best["spec"]["rope"])
        assert best["differing"] == 0 and best["spec"]["ids"] == ids, part
        assert rope_found["pool"] == [1, 2, 2] and rope_found["pool_unit"] is True, part


def test_renormalised_pooled_table_against_mpmath():
    """pool_unit: each element the correctly rounded cos (or sin) mean over its block divided by
    the length of the (cos, sin) mean, from mpmath; blocks of 3 and 2 with the last padded."""
    ids, sizes = "2:7,0:5,0:3", (3, 2, 2)
    grid = [range(int(a), int(b)) for a, b in (axis.split(":") for axis in ids.split(","))]
    counts = [-(-len(g) // size) for g, size in zip(grid, sizes)]
    for dtype in ("float64", "float32"):
        for part in ("cos", "sin"):
            table = (
                pe_cli.build(
                    preset="wan-complex",
                    ids=ids,
                    rope={"pool": "3,2,2", "pool_unit": True},
                    part=part,
                    dtype=dtype,
                )
                .numpy()
                .astype(np.float64)
            )
            assert table.shape == (np.prod(counts), 64)
            for row in range(table.shape[0]):
                index = np.unravel_index(row, counts)
                for column in range(0, 64, 3):
                    axis, dim, i = (
                        (0, 44, column)
                        if column < 22
                        else (1 + (column - 22) // 21, 42, (column - 22) % 21)
                    )
                    frequency = mpmath.power(10000, -mpmath.mpf(2 * i) / dim)
                    g, k = grid[axis], sizes[axis]
                    block = [g[min(index[axis] * k + j, len(g) - 1)] for j in range(k)]
                    cos, sin = (
                        mpmath.fsum(f(p * frequency) for p in block) / k
                        for f in (mpmath.cos, mpmath.sin)
                    )
                    true = (cos if part == "cos" else sin) / mpmath.sqrt(cos**2 + sin**2)
                    assert table[row, column] == round_to(true, dtype), (dtype, part, row, column)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--preset", "wan-complex", "--grid", "2x4x4", "--rope", "pool_unit=true"],
            "give their sizes with pool",
        ),
        (
            [
                "--preset",
                "wan",
                "--grid",
                "2x4x4",
                "--rope",
                "pool=1,2,2",
                "--rope",
                "pool_unit=true",
            ],
            "it needs a complex layout, --convention single",
        ),
        (
            [
                "--preset",
                "ltx2",
                "--grid",
                "2x4x4",
                "--convention",
                "single",
                "--rope",
                "pool=1,2,2",
                "--rope",
                "pool_unit=true",
            ],
            "it needs a complex layout",
        ),
    ],
)
def test_renormalised_pooling_refuses_what_it_cannot_build(cli, args, message):
    code, _, err = cli("generate", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
