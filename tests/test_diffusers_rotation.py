"""Rotation matrices and angles (--part rotation, --part angle): HiDream-I1, Kandinsky 5 and 6,
PRX, ERNIE-Image and Stable Audio 3 against their modules, the exact tables against mpmath, compare
naming them, and the refusals."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.diffusers_modules import _table
from tests.reference import round_to

# The 2x2 rotation-matrix tables (--part rotation): HiDream-I1 (FLUX's axes, image first, then
# text tokens at 0) and Kandinsky 5 (exp-form float32 frequencies, angles over its scale_factor)


def _hidream(rows, cols, text):
    """The HiDream-I1 transformer's table: image ids (0, row, column) then text ids at 0,
    (tokens, 64 pairs x 4) as [cos, -sin, sin, cos] per pair."""
    from diffusers.models.transformers.transformer_hidream_image import HiDreamImageEmbedND

    image = torch.zeros(rows, cols, 3)
    image[..., 1] += torch.arange(rows)[:, None]
    image[..., 2] += torch.arange(cols)[None, :]
    ids = torch.cat([image.reshape(-1, 3), torch.zeros(text, 3)])[None]
    return (
        HiDreamImageEmbedND(10000, [64, 32, 32])(ids)[0, :, 0]
        .reshape(rows * cols + text, -1)
        .numpy()
    )


def _kandinsky(frames, rows, cols, scale):
    from diffusers.models.transformers.transformer_kandinsky import Kandinsky5RoPE3D

    module = Kandinsky5RoPE3D((16, 24, 24))
    table = module(
        (1, frames, rows, cols),
        [torch.arange(frames), torch.arange(rows), torch.arange(cols)],
        scale,
    )
    return table.reshape(frames * rows * cols, -1).numpy()


def _kandinsky_text(count):
    from diffusers.models.transformers.transformer_kandinsky import Kandinsky5RoPE1D

    return Kandinsky5RoPE1D(64)(torch.arange(count)).reshape(count, -1).numpy()


ROTATIONS = [
    # HiDream at 1024 x 1024 (64 x 64 patches) with T5's and Llama's 128 tokens each (twice), and small
    ("hidream", dict(grid="64x64", text_tokens=384), lambda: _hidream(64, 64, 384)),
    ("hidream", dict(grid="8x6", text_tokens=5), lambda: _hidream(8, 6, 5)),
    # Kandinsky 5 at 480 x 832 (30 x 52 patches, scale_factor 1, 2, 2), at another size (1, 3.16,
    # 3.16), a 1024 x 1024 image (64 x 64, no scale) and its text tokens
    (
        "kandinsky5",
        dict(grid="2x30x52", rope={"axes_scale": "1,2,2"}),
        lambda: _kandinsky(2, 30, 52, (1, 2, 2)),
    ),
    (
        "kandinsky5",
        dict(grid="3x7x9", rope={"axes_scale": "1,3.16,3.16"}),
        lambda: _kandinsky(3, 7, 9, (1, 3.16, 3.16)),
    ),
    ("kandinsky5", dict(grid="1x64x64"), lambda: _kandinsky(1, 64, 64, (1.0, 1.0, 1.0))),
    ("kandinsky5-text", dict(grid="256"), lambda: _kandinsky_text(256)),
]


_ROTATION_IDS = [f"{c[0]}-{c[1]['grid']}" for c in ROTATIONS]


@pytest.mark.parametrize("preset, tokens, module", ROTATIONS, ids=_ROTATION_IDS)
def test_rotation_tables_are_the_modules_bit_for_bit(preset, tokens, module):
    expected = module()
    assert np.array_equal(_table(preset, "diffusers", "rotation", **tokens), expected)
    # each pair's [cos, -sin, sin, cos]: the cos and sin parts of the same preset, laid out
    cos, sin = (_table(preset, "diffusers", part, **tokens) for part in ("cos", "sin"))
    assert np.array_equal(expected[:, 0::4], cos[:, 0::2]) and np.array_equal(
        expected[:, 3::4], cos[:, 1::2]
    )
    assert np.array_equal(expected[:, 1::4], -sin[:, 0::2]) and np.array_equal(
        expected[:, 2::4], sin[:, 1::2]
    )


@pytest.mark.parametrize("preset, tokens, module", ROTATIONS[:2], ids=_ROTATION_IDS[:2])
def test_hidream_float64_angles_are_the_exact_table(preset, tokens, module):
    assert np.array_equal(_table(preset, "exact", "rotation", **tokens), module())


def test_exact_rotation_table_against_mpmath():
    """Kandinsky 5 at scale 3.16: row k of an axis at k / 3.16 exactly; every element of a few
    tokens, [cos, -sin, sin, cos] of theta^(-2i/dim) times the position."""
    table = _table(
        "kandinsky5", "exact", "rotation", grid="3x7x9", rope={"axes_scale": "1,3.16,3.16"}
    )
    for row in (0, 10, 100, 188):
        t, h, w = row // 63, row // 9 % 7, row % 9
        c = 0
        for position, dim in (
            (mpmath.mpf(t), 16),
            (mpmath.mpf(h) / mpmath.mpf("3.16"), 24),
            (mpmath.mpf(w) / mpmath.mpf("3.16"), 24),
        ):
            for i in range(dim // 2):
                angle = position * mpmath.power(10000, -mpmath.mpf(2 * i) / dim)
                cos, sin = (round_to(f(angle), "float32") for f in (mpmath.cos, mpmath.sin))
                assert list(table[row, c : c + 4]) == [cos, -sin, sin, cos], (row, c)
                c += 4


@pytest.mark.parametrize("preset, tokens, module", ROTATIONS[1:], ids=_ROTATION_IDS[1:])
def test_compare_names_rotation_tables(cli, tmp_path, preset, tokens, module):
    np.save(tmp_path / "t.npy", module())
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0 and err == ""
    best = json.loads(out)["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["part"] == "rotation"
    assert best["spec"]["grid"].endswith(tokens["grid"].removeprefix("1x"))
    assert best["spec"]["text_tokens"] == tokens.get("text_tokens", 0)
    scale = dict(best["spec"]["rope"]).get("axes_scale")
    expected = tokens.get("rope", {}).get("axes_scale")
    assert (scale is None and expected is None) or [float(s) for s in expected.split(",")] == list(
        scale
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--preset", "flux", "--grid", "4x4", "--part", "rotation", "--convention", "half"],
            "--convention interleaved",
        ),
        (
            ["--preset", "flux", "--grid", "4x4", "--rope", "axes_scale=1,2,2"],
            "Kandinsky 5's scale_factor",
        ),
        (
            ["--preset", "kandinsky5", "--grid", "2x4x4", "--rope", "axes_scale=2,2"],
            "2 values for 3 axes",
        ),
        (
            ["--preset", "kandinsky5", "--grid", "2x4x4", "--rope", "axes_scale=1,0,2"],
            "must be > 0",
        ),
    ],
)
def test_rotation_refusals(cli, args, message):
    code, _, err = cli("generate", *args)
    assert (
        code == 2
        and message in err
        and "Traceback" not in err
        and len(err.strip().splitlines()) == 1
    )


def _prx(rows, cols):
    from diffusers.models.transformers.transformer_prx import PRXEmbedND, get_image_ids

    return PRXEmbedND(64, 10000, [32, 32])(get_image_ids(1, 2 * rows, 2 * cols, 2, "cpu"))[
        0, 0
    ].reshape(rows * cols, -1)


def test_prx_rotation_is_the_module_and_named(cli, tmp_path):
    expected = _prx(16, 12).numpy()
    assert np.array_equal(_table("prx", "diffusers", "rotation", grid="16x12"), expected)
    assert np.array_equal(
        _table("prx", "exact", "rotation", grid="16x12"), expected
    )  # float64 angles
    np.save(tmp_path / "t.npy", expected)
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["grid"] == "16x12"
        and best["spec"]["part"] == "rotation"
    )


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_angle_part_is_correctly_rounded(dtype):
    """--part angle, exactly: p * w rounded once, against mpmath, on a 1-D table and on Allegro's
    axes (positions k / 2.2 and k / 2)."""
    rng = np.random.default_rng(3)
    table = (
        pe_cli.build(
            family="rope",
            d_model=64,
            seq_len=70000,
            offset=0,
            part="angle",
            dtype=dtype,
            base=500000,
        )
        .torch()
        .double()
        .numpy()
    )
    for p, j in zip(rng.integers(0, 70000, 300).tolist(), rng.integers(0, 32, 300).tolist()):
        w = mpmath.power(500000, -mpmath.mpf(2 * j) / 64)
        assert table[p, j] == table[p, j + 32] == round_to(p * w, dtype), (p, j)
    table = (
        pe_cli.build(preset="allegro", grid="9x6x7", part="angle", dtype=dtype)
        .torch()
        .double()
        .numpy()
    )
    for row, j in zip(rng.integers(0, 378, 200).tolist(), rng.integers(0, 16, 200).tolist()):
        t, h, w = row // 42, row // 7 % 6, row % 7
        for axis, (position, scale) in enumerate(((t, "2.2"), (h, 2), (w, 2))):
            angle = position / mpmath.mpf(scale) * mpmath.power(10000, -mpmath.mpf(2 * j) / 32)
            assert table[row, 32 * axis + j] == round_to(angle, dtype), (row, axis, j)


def test_angles_past_the_dtype_are_refused(cli, tmp_path):
    """An angle table whose angles pass float16's largest value (65504) is refused, not written
    with infinities; one within it is written."""
    code, _, err = cli(
        "generate",
        "--family",
        "rope",
        "--part",
        "angle",
        "--dtype",
        "float16",
        "-d",
        "8",
        "-l",
        "70000",
        "-o",
        tmp_path / "a.npy",
    )
    assert code == 2 and "angles reach 69999, past float16's largest value 65504" in err
    assert not (tmp_path / "a.npy").exists()
    code, _, err = cli(
        "generate",
        "--family",
        "rope",
        "--part",
        "angle",
        "--dtype",
        "float16",
        "-d",
        "8",
        "-l",
        "60000",
        "-o",
        tmp_path / "a.npy",
    )
    assert code == 0 and np.isfinite(np.load(tmp_path / "a.npy")).all()


def test_angle_tables_are_the_modules_and_named(cli, tmp_path):
    """ERNIE-Image's ErnieImageEmbedND3 (the image first at (N, row, column), then text (k, 0, 0))
    and Stable Audio 3's rotary embedding return angles: --part angle, bit for bit; compare names
    both."""
    from diffusers.models.transformers.transformer_ernie_image import ErnieImageEmbedND3
    from diffusers.models.transformers.transformer_stable_audio3 import StableAudio3RotaryEmbedding

    rows, cols, text = 6, 8, 20
    image = torch.cartesian_prod(torch.arange(rows), torch.arange(cols))
    ids = torch.cat(
        [
            torch.cat([torch.full((rows * cols, 1), text), image], dim=1),
            torch.cat([torch.arange(text)[:, None], torch.zeros(text, 2, dtype=torch.long)], dim=1),
        ]
    )
    ernie = ErnieImageEmbedND3(128, 256, (32, 48, 48))(ids.float()[None])[0, :, 0].numpy()
    built = pe_cli.build(
        preset="ernie-image",
        grid=f"{rows}x{cols}",
        text_tokens=text,
        part="angle",
        variant="diffusers",
    ).numpy()
    assert np.array_equal(built, ernie)
    audio = StableAudio3RotaryEmbedding(32)(300, "cpu").numpy()
    assert np.array_equal(
        pe_cli.build(
            family="rope",
            d_model=32,
            seq_len=300,
            part="angle",
            variant="hf-rope",
            convention="half",
        ).numpy(),
        audio,
    )
    for name, table, expected in (
        ("ernie", ernie, {"grid": f"{rows}x{cols}", "text_tokens": text}),
        ("audio", audio, {"seq_len": 300, "d_model": 32}),
    ):
        np.save(tmp_path / f"{name}.npy", table)
        best = json.loads(cli("compare", tmp_path / f"{name}.npy", "--json")[1])["candidates"][0]
        assert best["differing"] == 0 and best["spec"]["part"] == "angle", name
        assert {k: best["spec"][k] for k in expected} == expected


@pytest.mark.parametrize("scale", [(1.0, 2.0, 2.0), (1.0, 1.0, 1.0)])
def test_kandinsky6_is_the_module_bit_for_bit(cli, tmp_path, scale):
    from diffusers.models.transformers.transformer_kandinsky6 import (
        Kandinsky6RoPE1D,
        Kandinsky6RoPE3D,
    )

    frames, rows, cols = 3, 30, 52
    expected = Kandinsky6RoPE3D((32, 48, 48))(
        tuple(torch.arange(n) for n in (frames, rows, cols)), scale
    )
    expected = expected.reshape(frames * rows * cols, -1).numpy()
    rope = {"axes_scale": ",".join(map(str, scale))}
    table = _table("kandinsky6", "diffusers", "rotation", grid=f"{frames}x{rows}x{cols}", rope=rope)
    assert np.array_equal(table, expected)
    np.save(tmp_path / "t.npy", expected)
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["grid"].endswith(f"{rows}x{cols}")
    text = Kandinsky6RoPE1D(128)(torch.arange(300)).reshape(300, -1).numpy()
    assert np.array_equal(_table("kandinsky6-text", "diffusers", "rotation", grid="300"), text)


@pytest.mark.parametrize("scaling", [0.5, 0.37, 1.0])
def test_kandinsky6_audio_freqs_scaling_is_the_module_bit_for_bit(cli, tmp_path, scaling):
    """Kandinsky 6's audio RoPE1D(freqs_scaling): the float32 frequencies times it; compare reads
    the scaling back; the exact table against mpmath."""
    from diffusers.models.transformers.transformer_kandinsky6 import Kandinsky6RoPE1D

    expected = (
        Kandinsky6RoPE1D(64, freqs_scaling=scaling)(torch.arange(200)).reshape(200, -1).numpy()
    )
    table = pe_cli.build(
        preset="kandinsky6-text",
        d_model=64,
        grid="200",
        part="rotation",
        variant="diffusers",
        rope={"axes_dim": "64", "freqs_scaling": scaling},
    ).numpy()
    assert np.array_equal(table, expected)
    exact = pe_cli.build(
        preset="kandinsky6-text",
        d_model=64,
        grid="200",
        part="rotation",
        dtype="float64",
        rope={"axes_dim": "64", "freqs_scaling": scaling},
    ).numpy()
    for row, i in ((199, 0), (150, 5), (77, 31)):
        angle = row * mpmath.mpf(repr(scaling)) * mpmath.power(10000, -mpmath.mpf(i) / 32)
        assert exact[row, 4 * i + 2] == float(mpmath.sin(angle)) and exact[row, 4 * i] == float(
            mpmath.cos(angle)
        )
    np.save(tmp_path / "t.npy", expected)
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0 and dict(best["spec"]["rope"]).get("freqs_scaling", 1.0) == scaling
    )


def test_freqs_scaling_is_only_kandinskys(cli):
    code, _, err = cli(
        "generate", "--preset", "flux", "--grid", "2x2", "--rope", "freqs_scaling=0.5"
    )
    assert code == 2 and "freqs_scaling is Kandinsky 6's audio_freqs_scaling" in err
