"""Cosmos 3's joint sequence (Qwen3-VL's interleaved M-RoPE): text, then a video's tokens with
its frame rate, then sound and action tokens, against its pipeline's own ids bit for bit, the
exact positions against mpmath, compare naming it, and the refusals."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli


@pytest.mark.parametrize("fps, frames", [(None, 1), (None, 3), (24.0, 5), (30.0, 4), (16.0, 3)])
def test_cosmos3_joint_sequence_is_the_module_bit_for_bit(cli, tmp_path, fps, frames):
    """Cosmos 3's text then vision tokens, with its pipeline's own ids (fps modulation for a
    video's frames): the cosmos3 preset, bit for bit; compare names it and its frame rate."""
    from diffusers.models.transformers.transformer_cosmos3 import Cosmos3VLTextRotaryEmbedding
    from diffusers.pipelines.cosmos.pipeline_cosmos3_omni import (
        get_3d_mrope_ids_text_tokens,
        get_3d_mrope_ids_vae_tokens,
    )

    module = Cosmos3VLTextRotaryEmbedding(128, 5000000.0, (24, 20, 20))
    text, offset = get_3d_mrope_ids_text_tokens(37, 0, use_float_positions=fps is not None)
    vision, _ = get_3d_mrope_ids_vae_tokens(frames, 4, 6, offset + 15000, fps=fps)
    cos, sin = module(
        torch.cat([text.float(), vision.float()], dim=1)[:, None, :], "cpu", torch.float32
    )
    rope = {} if fps is None else {"fps": fps}
    for part, expected in (("cos", cos[0]), ("sin", sin[0])):
        table = pe_cli.build(
            preset="cosmos3",
            grid=f"{frames}x4x6",
            text_tokens=37,
            part=part,
            variant="diffusers",
            rope=rope,
        ).numpy()
        assert np.array_equal(table, expected.numpy()), part
    np.save(tmp_path / "t.npy", sin[0].numpy())
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["axes"] == "cosmos3"
        and best["spec"]["text_tokens"] == 37
    )
    assert best["spec"]["grid"] == f"{frames}x4x6"


def test_cosmos3_exact_positions_against_mpmath():
    """The exact cosmos3 table: frame k of a 30 fps video at 37 + 15000 + 0.8 k, frequency i of
    5e6^(-i/64) on t, h or w as Qwen3-VL interleaves them."""
    table = pe_cli.build(
        preset="cosmos3",
        grid="4x3x5",
        text_tokens=37,
        part="sin",
        dtype="float64",
        rope={"fps": 30.0},
    ).numpy()
    for row, i in ((36, 0), (37 + 59, 1), (37 + 31, 2), (37 + 44, 63), (5, 59)):
        if row < 37:
            position = row
        else:
            t, h, w = (row - 37) // 15, (row - 37) // 5 % 3, (row - 37) % 5
            position = [37 + 15000 + mpmath.mpf(24) / 30 * t, h, w][
                1 if i % 3 == 1 and i < 60 else 2 if i % 3 == 2 and i < 60 else 0
            ]
        assert table[row, i] == float(
            mpmath.sin(position * mpmath.power(5000000, -mpmath.mpf(i) / 64))
        ), (row, i)


def test_cosmos3_mrope_ids_bit_for_bit(cli, tmp_path):
    """Cosmos 3's M-RoPE (Qwen3-VL's interleaved sections 24, 20, 20, theta 5e6): text token k at
    (k, k, k), then a video's patches at (L + 15000 + t, h, w), only t offset; given with --ids,
    --variant hf-rope is its table bit for bit."""
    from diffusers.models.transformers.transformer_cosmos3 import Cosmos3VLTextRotaryEmbedding

    text, frames, rows, cols = 9, 3, 4, 5
    t, h, w = torch.meshgrid(
        torch.arange(frames), torch.arange(rows), torch.arange(cols), indexing="ij"
    )
    ids = torch.cat(
        [
            torch.arange(text)[None].repeat(3, 1),
            torch.stack([t.reshape(-1) + text + 15000, h.reshape(-1), w.reshape(-1)]),
        ],
        1,
    )
    cos, sin = Cosmos3VLTextRotaryEmbedding(128, 5000000.0, (24, 20, 20))(
        ids[:, None, :], "cpu", torch.float32
    )
    np.save(tmp_path / "ids.npy", ids.T.numpy())
    for part, expected in (("cos", cos[0]), ("sin", sin[0])):
        code, _, err = cli(
            "generate",
            "--family",
            "rope",
            "-d",
            "128",
            "--base",
            "5000000",
            "--rope-axes",
            "mrope-interleaved",
            "--rope",
            "mrope_section=24,20,20",
            "--ids",
            tmp_path / "ids.npy",
            "--variant",
            "hf-rope",
            "--part",
            part,
            "-o",
            tmp_path / f"{part}.npy",
        )
        assert code == 0, err
        assert np.array_equal(np.load(tmp_path / f"{part}.npy"), expected.numpy())
    np.save(tmp_path / "half.npy", (ids.T.numpy() + 0.5))
    code, _, err = cli(
        "generate",
        "--family",
        "rope",
        "-d",
        "128",
        "--rope-axes",
        "mrope-interleaved",
        "--rope",
        "mrope_section=24,20,20",
        "--ids",
        tmp_path / "half.npy",
    )
    assert code == 2 and "takes whole positions" in err


def _cosmos3_joint(text, frames, fps, sound, action):
    """Cosmos 3's joint ids and its table's cos and sin, by its pipeline's own functions: text,
    a 4 x 5 video, then sound and action tokens (fps modulation on where fps is given, sound at
    its config's 25 latent frames a second, actions at the video's rate)."""
    from diffusers.models.transformers.transformer_cosmos3 import Cosmos3VLTextRotaryEmbedding
    from diffusers.pipelines.cosmos.pipeline_cosmos3_omni import (
        get_3d_mrope_ids_text_tokens,
        get_3d_mrope_ids_vae_tokens,
    )

    ids, offset = get_3d_mrope_ids_text_tokens(text, 0, use_float_positions=fps is not None)
    parts = [
        ids.float(),
        get_3d_mrope_ids_vae_tokens(frames, 4, 5, offset + 15000, fps=fps)[0].float(),
    ]
    if sound:
        parts.append(
            get_3d_mrope_ids_vae_tokens(
                sound,
                1,
                1,
                offset + 15000,
                fps=25.0 if fps else None,
                temporal_compression_factor=1,
            )[0].float()
        )
    if action:
        parts.append(
            get_3d_mrope_ids_vae_tokens(
                action,
                1,
                1,
                offset + 15000,
                fps=fps,
                temporal_compression_factor=1,
                base_temporal_compression_factor=4,
                start_frame_offset=1,
            )[0].float()
        )
    cos, sin = Cosmos3VLTextRotaryEmbedding(128, 5000000.0, (24, 20, 20))(
        torch.cat(parts, 1)[:, None, :], "cpu", torch.float32
    )
    return cos[0], sin[0]


@pytest.mark.parametrize(
    "fps, sound, action",
    [
        (30.0, 6, 5),
        (24.0, 40, 0),
        (16.0, 0, 7),
        (30.0, 1, 1),
        (None, 6, 0),
        (None, 0, 6),
        (None, 6, 5),
    ],
)
def test_cosmos3_sound_and_action_tokens_are_the_pipeline_bit_for_bit(
    cli, tmp_path, fps, sound, action
):
    """Cosmos 3's joint sequence with sound and action tokens after the video, fps-modulated
    (sound at k * 24/25, actions at (k + 1) * 6/fps, in its pipeline's float32 arithmetic) or
    not: --rope sound_tokens and action_tokens build it bit for bit, and compare names it with
    its grid, text, frame rates and both counts."""
    cos, sin = _cosmos3_joint(9, 3, fps, sound, action)
    rope = {
        k: v for k, v in (("fps", fps), ("sound_tokens", sound), ("action_tokens", action)) if v
    }
    for part, expected in (("cos", cos), ("sin", sin)):
        table = pe_cli.build(
            preset="cosmos3", grid="3x4x5", text_tokens=9, rope=rope, part=part, variant="diffusers"
        ).numpy()
        assert np.array_equal(table, expected.numpy()), part
        np.save(tmp_path / "t.npy", expected.numpy())
        best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
        found = dict(best["spec"]["rope"])
        assert (
            best["differing"] == 0
            and best["spec"]["grid"] == "3x4x5"
            and best["spec"]["text_tokens"] == 9
        ), part
        assert (found.get("fps"), found.get("sound_tokens", 0), found.get("action_tokens", 0)) == (
            fps,
            sound,
            action,
        )
        assert found.get("sound_fps") == (25.0 if fps and sound > 1 else None)


def test_cosmos3_sound_and_action_exact_positions_against_mpmath():
    """The exact table's sound and action rows: sound token k at 9 + 15000 + 24k/25, action token
    k at 9 + 15000 + 6(k + 1)/30 (exact fractions), on t alone; frequency i of 5e6^(-i/64)."""
    from fractions import Fraction

    table = pe_cli.build(
        preset="cosmos3",
        grid="3x4x5",
        text_tokens=9,
        part="cos",
        dtype="float64",
        rope={"fps": 30.0, "sound_tokens": 7, "action_tokens": 4},
    ).numpy()
    assert table.shape == (9 + 60 + 7 + 4, 128)
    for k, position in [
        *((k, 15009 + Fraction(24 * k, 25)) for k in range(7)),
        *((7 + k, 15009 + Fraction(6 * (k + 1), 30)) for k in range(4)),
    ]:
        t = mpmath.mpf(position.numerator) / position.denominator
        for i in (0, 3, 21, 60, 63):  # the t axis's frequencies (rows and columns at 0 give cos 1)
            assert table[69 + k, i] == float(
                mpmath.cos(t * mpmath.power(5000000, -mpmath.mpf(i) / 64))
            ), (k, i)
        assert table[69 + k, 1] == table[69 + k, 2] == 1.0


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--preset", "cosmos3", "--ids", "2*0:2,0:2,0:2", "--rope", "sound_tokens=4"],
            "follow a video",
        ),
        (
            ["--preset", "flux", "--grid", "4x4", "--rope", "action_tokens=4"],
            "rope parameter action_tokens is Cosmos 3's",
        ),
        (
            [
                "--preset",
                "cosmos3",
                "--grid",
                "2x4x4",
                "--rope",
                "sound_tokens=4",
                "--rope",
                "sound_fps=25",
            ],
            "it needs sound_tokens and fps",
        ),
        (["--preset", "cosmos3", "--grid", "2x4x4", "--rope", "sound_tokens=0"], "each at least 1"),
        (
            [
                "--preset",
                "cosmos3",
                "--grid",
                "3x2x2",
                "--rope",
                "fps=3.14159265",
                "--rope",
                "sound_tokens=4",
            ],
            "fractions too fine for exact positions",
        ),
    ],
)
def test_cosmos3_segments_refuse_what_they_cannot_build(cli, args, message):
    code, _, err = cli("generate", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
