"""diffusers' timestep embeddings (get_timestep_embedding, the Timesteps module), against
diffusers itself: `--variant diffusers` writes them bit for bit, and `compare FILE` names them."""

import json

import mpmath
import numpy as np
import pytest
import torch
from diffusers.models.embeddings import Timesteps, get_timestep_embedding

import pe_cli
from tests.reference import round_to


def _named(cli, tmp_path, table, name="library diffusers") -> dict:
    """compare FILE of the table: explained, a bit-for-bit candidate first, and the candidate
    `name` among the bit-for-bit ones (returned)."""
    np.save(tmp_path / "t.npy", table)
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    found = json.loads(out)
    identical = [c for c in found["candidates"] if c["differing"] == 0]
    assert code == 0 and found["explained"] and identical and identical[0] == found["candidates"][0]
    return next(c for c in identical if c["name"] == name)


# (flip_sin_to_cos, downscale_freq_shift) -> pe-cli's convention
LAYOUTS = {
    (True, 0): "timestep",
    (True, 1): "musicgen",
    (False, 1): "tensor2tensor",
    (False, 0): "concat",
}


@pytest.mark.parametrize("flip, shift", LAYOUTS)
@pytest.mark.parametrize("d", [4, 7, 64, 128, 256, 320, 1280])
@pytest.mark.parametrize("first, count, max_period", [(0, 1000, 10000), (17, 50, 2000)])
def test_diffusers_variant_is_get_timestep_embedding_bit_for_bit(
    flip, shift, d, first, count, max_period
):
    convention = LAYOUTS[flip, shift]
    spec = dict(
        variant="diffusers",
        convention=convention,
        d_model=d,
        seq_len=count,
        offset=first,
        base=float(max_period),
    )
    if convention == "concat" and d % 2:
        with pytest.raises(pe_cli.PeError, match="zero column"):
            pe_cli.build(**spec)
        return
    expected = get_timestep_embedding(
        torch.arange(first, first + count), d, flip, shift, 1, max_period
    )
    assert np.array_equal(pe_cli.build(**spec).numpy(), expected.numpy())


# Timesteps as pipelines build them: DDPM's UNet (128, False, 1), Stable Diffusion's (320, True,
# 0), DiT and PixArt's (256, True, 1), and (64, False, 0)
@pytest.mark.parametrize(
    "channels, flip, shift", [(128, False, 1), (320, True, 0), (256, True, 1), (64, False, 0)]
)
def test_timesteps_tables_are_identified_and_rebuilt(cli, tmp_path, channels, flip, shift):
    table = Timesteps(channels, flip, shift)(torch.arange(1000)).numpy()
    spec = _named(cli, tmp_path, table)["spec"]
    assert spec["convention"] == LAYOUTS[flip, shift] and spec["base"] == 10000
    code, _, err = cli(
        "generate",
        "--variant",
        "diffusers",
        "--convention",
        spec["convention"],
        "--d-model",
        channels,
        "--seq-len",
        1000,
        "-o",
        tmp_path / "again.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "again.npy"), table)


def test_diffusers_refuses_a_zero_divisor():
    with pytest.raises(pe_cli.PeError, match="divides by d//2 - downscale_freq_shift"):
        pe_cli.build(variant="diffusers", convention="tensor2tensor", d_model=3, seq_len=4)


@pytest.mark.parametrize("scale", [1000.0, 0.5, 3.0])
@pytest.mark.parametrize("flip, shift", [(True, 0), (False, 1)])
def test_timestep_scale_is_diffusers_scale(scale, flip, shift):
    """QwenImage's Timesteps(256, True, 0, scale=1000), and other scales."""
    expected = Timesteps(256, flip, shift, scale=scale)(torch.arange(1000)).numpy()
    got = pe_cli.build(
        variant="diffusers",
        convention=LAYOUTS[flip, shift],
        d_model=256,
        seq_len=1000,
        timestep_scale=scale,
    ).numpy()
    assert np.array_equal(got, expected)


def _true(p: int, j: int, d: int, shift: int, flip: bool, scale: float):
    """Column j at timestep p of get_timestep_embedding's formula, in mpmath."""
    import mpmath

    n = d // 2
    if j >= 2 * n:
        return mpmath.mpf(0)
    i = j % n
    w = mpmath.mpf(scale) * mpmath.power(10000, -mpmath.mpf(i) / (n - shift))
    first, second = (mpmath.cos, mpmath.sin) if flip else (mpmath.sin, mpmath.cos)
    return (first if j < n else second)(p * w)


@pytest.mark.parametrize("flip, shift", LAYOUTS)
@pytest.mark.parametrize("scale", [1.0, 1000.0])
def test_exact_timestep_tables_are_correctly_rounded(flip, shift, scale):
    from tests import reference

    convention, d = LAYOUTS[flip, shift], 21 if LAYOUTS[flip, shift] != "concat" else 20
    table = pe_cli.build(
        convention=convention, d_model=d, seq_len=5000, timestep_scale=scale
    ).numpy()
    for p in (0, 1, 2, 99, 1000, 4095, 4999):
        for j in range(d):
            truth = _true(p, j, d, shift, flip, scale)
            assert float(table[p, j]) == reference.round_to(truth, "float32"), (p, j)


@pytest.mark.parametrize(
    "dim, count, theta", [(64, 300, 10000.0), (128, 4096, 500000.0), (56, 1000, 10000.0)]
)
@pytest.mark.parametrize("interleaved", [True, False])
def test_1d_rotary_tables_are_identified_bit_for_bit(cli, tmp_path, dim, count, theta, interleaved):
    """get_1d_rotary_pos_embed(use_real=True) in float32 frequencies: both its layouts are
    transformers' arithmetic (hf-rope), named from the file and rebuilt by the command named."""
    from diffusers.models.embeddings import get_1d_rotary_pos_embed

    cos, sin = get_1d_rotary_pos_embed(
        dim,
        count,
        theta=theta,
        use_real=True,
        repeat_interleave_real=interleaved,
        freqs_dtype=torch.float32,
    )
    for part, table in (("cos", cos.numpy()), ("sin", sin.numpy())):
        np.save(tmp_path / "t.npy", table)
        found = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])
        best = found["candidates"][0]
        assert found["explained"] and best["differing"] == 0
        spec = best["spec"]
        assert (spec["family"], spec["part"], spec["base"], spec["d_model"]) == (
            "rope",
            part,
            theta,
            dim,
        )
        assert spec["convention"] == ("interleaved" if interleaved else "half")
        rebuilt = pe_cli.build(
            pe_cli.TableSpec(**{**spec, "dtype": "float32", "shape": "2d"})
        ).numpy()
        assert np.array_equal(rebuilt, table)


# get_2d_sincos_pos_embed as PatchEmbed calls it: PixArt-alpha 1024 (interpolation_scale 2), SD3,
# DiT, and non-square grids at fractions (positions k * base_size / G / interpolation_scale)
GRIDS = [
    (1152, (64, 64), 64, 2.0),
    (1536, (64, 64), 64, 1.0),
    (1152, (32, 32), 32, 1.0),
    (768, (32, 32), 16, 1.0),
    (64, (12, 20), 16, 0.5),
    (32, (5, 7), 8, 1.5),
]


@pytest.mark.parametrize("d, grid, base_size, interpolation", GRIDS)
@pytest.mark.parametrize("cls_token", [False, True])
def test_diffusers_2d_table_is_get_2d_sincos_pos_embed(
    d, grid, base_size, interpolation, cls_token
):
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    expected = get_2d_sincos_pos_embed(
        d,
        grid,
        cls_token=cls_token,
        extra_tokens=int(cls_token),
        interpolation_scale=interpolation,
        base_size=base_size,
        output_type="pt",
    )
    got = pe_cli.build(
        family="sincos2d",
        variant="diffusers",
        grid=grid,
        d_model=d,
        base_size=base_size,
        interpolation_scale=interpolation,
        cls_token=cls_token,
    )
    assert np.array_equal(got.numpy(), expected.float().numpy())  # the modules keep it in float32


@pytest.mark.parametrize(
    "grid, base_size, interpolation", [((12, 20), 16, 0.5), ((5, 7), 8, 1.5), ((6, 6), None, 2.0)]
)
def test_exact_2d_table_at_fractional_positions_is_correctly_rounded(
    grid, base_size, interpolation
):
    import mpmath

    from tests import reference

    d, (rows, columns) = 16, grid
    table = pe_cli.build(
        family="sincos2d",
        grid=grid,
        d_model=d,
        base_size=base_size,
        interpolation_scale=interpolation,
    ).numpy()
    n = d // 4

    def position(k: int, size: int):
        return (
            mpmath.mpf(k)
            * (base_size if base_size is not None else size)
            / size
            / mpmath.mpf(interpolation)
        )

    for patch in range(rows * columns):
        y, x = position(patch // columns, rows), position(patch % columns, columns)
        for j in range(d):
            block, i = divmod(j, n)  # mae: [sin x | cos x | sin y | cos y]
            angle = (x if block < 2 else y) * mpmath.power(10000, -mpmath.mpf(i) / n)
            truth = (mpmath.sin if block % 2 == 0 else mpmath.cos)(angle)
            assert float(table[patch, j]) == reference.round_to(truth, "float32"), (patch, j)


# Timesteps a scheduler hands the model: DDIM's 50 of 1000 (a range), and a flow-matching
# schedule's fractional sigma * 1000 (a file)


@pytest.mark.parametrize("flip, shift", [(True, 0), (False, 1)])
def test_timesteps_range_is_a_schedule(flip, shift):
    expected = Timesteps(320, flip, shift)(torch.arange(999, -1, -20)).numpy()
    table = pe_cli.build(
        variant="diffusers", convention=LAYOUTS[flip, shift], d_model=320, timesteps="999:-1:-20"
    )
    assert np.array_equal(table.numpy(), expected)


def test_fractional_timesteps_from_a_file(tmp_path):
    sigmas = np.linspace(1, 1 / 28, 28, dtype=np.float32) * np.float32(1000)
    np.save(tmp_path / "t.npy", sigmas)
    expected = Timesteps(256, True, 0, scale=1.0)(torch.from_numpy(sigmas)).numpy()
    library = pe_cli.build(
        variant="diffusers", convention="timestep", d_model=256, timesteps=str(tmp_path / "t.npy")
    )
    assert np.array_equal(library.numpy(), expected)
    exact = pe_cli.build(
        convention="timestep", d_model=256, timesteps=str(tmp_path / "t.npy")
    ).numpy()
    n = 128
    for row in (0, 5, 27):
        t = mpmath.mpf(float(sigmas[row]))  # the float32 value the file holds, exactly
        for i in (0, 1, 40, 127):
            w = mpmath.exp(-mpmath.log(10000) * i / n)
            assert exact[row, i] == round_to(mpmath.cos(t * w), "float32")
            assert exact[row, n + i] == round_to(mpmath.sin(t * w), "float32")


def test_timesteps_refusals(cli, tmp_path):
    for args, message in (
        (["--timesteps", "5:1"], "non-empty range"),
        (["--timesteps", "1:2.5"], "whole numbers"),
        (["--timesteps", "0:9", "--offset", "3"], "drop --offset"),
        (
            ["--timesteps", "0:9", "--variant", "fairseq", "--convention", "fairseq"],
            "consecutive positions only",
        ),
        (["--timesteps", str(tmp_path / "none.npy")], "not a readable .npy"),
    ):
        code, _, err = cli("generate", *args)
        assert code == 2 and message in err and "Traceback" not in err, (args, err)


@pytest.mark.parametrize(
    "channels, flip, shift", [(128, False, 1), (320, True, 0), (256, True, 1), (64, False, 0)]
)
@pytest.mark.parametrize("schedule", [(999, -1, -20), (0, 1000, 37)])
def test_schedule_tables_are_identified_and_rebuilt(cli, tmp_path, channels, flip, shift, schedule):
    """Timesteps at a scheduler's timesteps: compare FILE reads them back as a range."""
    table = Timesteps(channels, flip, shift)(torch.arange(*schedule)).numpy()
    best = _named(cli, tmp_path, table)
    assert best["spec"]["convention"] == LAYOUTS[flip, shift] and best["spec"]["base"] == 10000
    code, _, err = cli(
        "generate",
        "--variant",
        "diffusers",
        "--convention",
        best["spec"]["convention"],
        "--d-model",
        channels,
        "--timesteps",
        best["spec"]["timesteps"],
        "-o",
        tmp_path / "again.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "again.npy"), table)


def _flow_matching_timesteps(steps, shift):
    """A flow-matching schedule's float32 timesteps: sigmas from 1 down, shifted, times 1000
    (FlowMatchEulerDiscreteScheduler's form): fractional, not a range."""
    sigmas = torch.linspace(1, 1 / steps, steps, dtype=torch.float32)
    return (shift * sigmas / (1 + (shift - 1) * sigmas) * 1000).float()


@pytest.mark.parametrize(
    "timesteps, channels, flip, shift",
    [
        (torch.tensor([999, 500, 3, 7, 40]), 256, True, 0),  # whole, scattered
        (_flow_matching_timesteps(28, 3.0), 256, True, 0),  # SD3's 28 steps
        (_flow_matching_timesteps(50, 1.0), 320, False, 1),
    ],
)
def test_timesteps_that_are_not_a_range_are_named(cli, tmp_path, timesteps, channels, flip, shift):
    """compare FILE reads every row's t back (for fractional ones, the float32 that diffusers'
    own float32 arithmetic makes the row with) and names them as a --timesteps list; generate
    rebuilds the table from it."""
    table = Timesteps(channels, flip, shift)(timesteps).numpy()
    best = _named(cli, tmp_path, table)
    assert best["spec"]["convention"] == LAYOUTS[flip, shift]
    listed = np.array([float(t) for t in best["spec"]["timesteps"].split(",")])
    assert np.array_equal(listed, timesteps.double().numpy())
    code, _, err = cli(
        "generate",
        "--variant",
        "diffusers",
        "--convention",
        best["spec"]["convention"],
        "--d-model",
        channels,
        "--timesteps",
        best["spec"]["timesteps"],
        "-o",
        tmp_path / "again.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "again.npy"), table)


def test_timesteps_list_against_mpmath():
    """--timesteps t1,t2,...: each t as written (987.6012573242188 is a float32's exact value)."""
    table = pe_cli.build(
        d_model=16, convention="timestep", timesteps="987.6012573242188,3,0.5"
    ).numpy()
    half = 8
    for row, t in enumerate((mpmath.mpf("987.6012573242188"), mpmath.mpf(3), mpmath.mpf("0.5"))):
        for i in range(half):
            angle = t * mpmath.exp(-mpmath.log(10000) * i / half)
            assert table[row, i] == round_to(mpmath.cos(angle), "float32")  # flip: [cos | sin]
            assert table[row, half + i] == round_to(mpmath.sin(angle), "float32")


# SD3's cropped_pos_embed (the centre of a pos_embed_max_size grid) and CogView3Plus's table
# (text rows of zeros, then the top-left of its 128 x 128 grid)


@pytest.mark.parametrize("rows, cols", [(64, 64), (48, 80), (96, 96), (7, 192)])
def test_sd3_cropped_pos_embed_bit_for_bit(rows, cols):
    from diffusers.models.embeddings import PatchEmbed

    module = PatchEmbed(
        height=128, width=128, patch_size=2, in_channels=16, embed_dim=1536, pos_embed_max_size=192
    )
    expected = module.cropped_pos_embed(2 * rows, 2 * cols)[0].numpy()
    table = pe_cli.build(
        family="sincos2d",
        variant="diffusers",
        grid=(rows, cols),
        d_model=1536,
        base_size=64,
        pos_embed_max_size=192,
    )
    assert np.array_equal(table.numpy(), expected)


def test_sd3_crop_exact_against_mpmath():
    """Patch (i, j) of a 6 x 10 crop of a 16 x 16 grid, base_size 8: at ((5 + i) / 2, (3 + j) / 2)."""
    d = 16
    table = pe_cli.build(
        family="sincos2d", grid=(6, 10), d_model=d, base_size=8, pos_embed_max_size=16
    ).numpy()
    n = d // 4
    for patch in (0, 1, 13, 59):
        y, x = mpmath.mpf(5 + patch // 10) / 2, mpmath.mpf(3 + patch % 10) / 2
        for j in range(d):
            block, i = divmod(j, n)
            angle = (x if block < 2 else y) * mpmath.power(10000, -mpmath.mpf(i) / n)
            assert table[patch, j] == round_to(
                (mpmath.sin if block % 2 == 0 else mpmath.cos)(angle), "float32"
            )


def test_cogview3_plus_table_bit_for_bit():
    from diffusers.models.embeddings import CogView3PlusPatchEmbed

    module = CogView3PlusPatchEmbed(
        in_channels=16,
        hidden_size=2560,
        patch_size=2,
        text_hidden_size=4096,
        pos_embed_max_size=128,
    )
    rows, cols, text = 64, 48, 224
    expected = torch.cat(
        [torch.zeros(text, 2560), module.pos_embed[:rows, :cols].reshape(rows * cols, -1)]
    )
    table = pe_cli.build(
        family="sincos2d", variant="diffusers", grid=(rows, cols), d_model=2560, text_tokens=text
    )
    assert np.array_equal(table.numpy(), expected.numpy())


def _sd3(rows, cols):
    from diffusers.models.embeddings import PatchEmbed

    module = PatchEmbed(
        height=128, width=128, patch_size=2, in_channels=16, embed_dim=256, pos_embed_max_size=192
    )
    return module.cropped_pos_embed(2 * rows, 2 * cols)[0].numpy()


def _cogview3(rows, cols, text):
    from diffusers.models.embeddings import CogView3PlusPatchEmbed

    module = CogView3PlusPatchEmbed(
        in_channels=16, hidden_size=256, patch_size=2, text_hidden_size=64, pos_embed_max_size=128
    )
    return torch.cat(
        [torch.zeros(text, 256), module.pos_embed[:rows, :cols].reshape(rows * cols, -1)]
    ).numpy()


def _get_2d(grid, **keywords):
    from diffusers.models.embeddings import get_2d_sincos_pos_embed

    return get_2d_sincos_pos_embed(256, grid, **keywords).float().numpy()


@pytest.mark.parametrize(
    "name, table, expected",
    [
        (
            "sd3 crop",
            lambda: _sd3(48, 80),
            dict(grid=[48, 80], pos_embed_max_size=192, base_size=64),
        ),
        ("pixart", lambda: _get_2d(32, base_size=32, interpolation_scale=2.0), dict(grid=[32, 32])),
        ("non-square", lambda: _get_2d((24, 40), base_size=16), dict(grid=[24, 40], base_size=16)),
        ("cogview3", lambda: _cogview3(24, 16, 20), dict(grid=[24, 16], text_tokens=20)),
    ],
)
def test_fractional_and_cropped_2d_tables_are_identified(cli, tmp_path, name, table, expected):
    values = table()
    library = _named(cli, tmp_path, values)
    assert all(library["spec"][k] == v for k, v in expected.items()), library["spec"]
    rebuilt = pe_cli.build(
        pe_cli.TableSpec(**{**library["spec"], "dtype": "float32", "shape": "2d"})
    ).numpy()
    assert np.array_equal(rebuilt, values)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--grid", "20x20", "--pos-embed-max-size", "16"], "larger than --pos-embed-max-size"),
        (["--grid", "4x4", "--cls-token", "--text-tokens", "3"], "give one"),
        (["--grid", "4x4", "--text-tokens", "3", "--variant", "mae"], "has no text rows"),
        (["--grid", "4x4", "--pos-embed-max-size", "8", "--variant", "mae"], "has no cropped grid"),
    ],
)
def test_2d_refusals(cli, args, message):
    code, _, err = cli("generate", "--family", "sincos2d", "-d", "16", *args)
    assert code == 2 and message in err and "Traceback" not in err, err


# get_1d_sincos_pos_embed_from_grid: Latte's temporal table, SkyReels-V2's timesteps, and its
# float32 arithmetic (dtype=float32, what it uses on MPS)


@pytest.mark.parametrize("d", [6, 256, 1152])
@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize(
    "variant, dtype", [("diffusers-grid", None), ("diffusers-grid-mps", torch.float32)]
)
def test_get_1d_sincos_pos_embed_from_grid_bit_for_bit(d, flip, variant, dtype):
    from diffusers.models.embeddings import get_1d_sincos_pos_embed_from_grid

    convention = "timestep" if flip else "concat"
    expected = get_1d_sincos_pos_embed_from_grid(
        d, torch.arange(7, 307).float(), flip_sin_to_cos=flip, dtype=dtype
    )
    table = pe_cli.build(variant=variant, convention=convention, d_model=d, seq_len=300, offset=7)
    assert np.array_equal(table.numpy(), expected.float().numpy())
    schedule = get_1d_sincos_pos_embed_from_grid(
        d, torch.arange(999, -1, -20).float(), flip_sin_to_cos=flip, dtype=dtype
    )
    table = pe_cli.build(variant=variant, convention=convention, d_model=d, timesteps="999:-1:-20")
    assert np.array_equal(table.numpy(), schedule.float().numpy())


@pytest.mark.parametrize(
    "name, make, variant",
    [
        ("latte", lambda g: g(1152, torch.arange(0, 16).unsqueeze(1)), "diffusers-grid"),
        (
            "skyreels",
            lambda g: g(256, torch.arange(999, -1, -20).float(), flip_sin_to_cos=True),
            "diffusers-grid",
        ),
        (
            "mps",
            lambda g: g(256, torch.arange(0, 300).float(), dtype=torch.float32),
            "diffusers-grid-mps",
        ),
    ],
)
def test_get_1d_sincos_tables_are_named(cli, tmp_path, name, make, variant):
    from diffusers.models.embeddings import get_1d_sincos_pos_embed_from_grid

    _named(
        cli, tmp_path, make(get_1d_sincos_pos_embed_from_grid).float().numpy(), f"library {variant}"
    )


def test_sinusoidal_positional_embedding_is_the_annotated_table(cli, tmp_path):
    from diffusers.models.embeddings import SinusoidalPositionalEmbedding

    table = SinusoidalPositionalEmbedding(512, max_seq_length=1024).pe[0].numpy()
    assert np.array_equal(
        pe_cli.build(variant="annotated", d_model=512, seq_len=1024).numpy().reshape(1024, 512),
        table,
    )
    _named(cli, tmp_path, table, "library annotated")


@pytest.mark.parametrize(
    "scale, schedule",
    [
        (1000.0, (0, 25)),
        (100.0, (0, 200, 5)),
        (1000.0, (0, 1000)),
        (1000.0, (0, 1000, 37)),
        (100.0, (999, -1, -50)),
    ],
)
def test_scaled_timestep_tables_are_named(cli, tmp_path, scale, schedule):
    """Timesteps with a scale (QwenImage's 1000): read back as scale * t, named with the scale;
    past pi over the lowest frequency (scale * t up to 999,000: 17 whole turns of it) too."""
    table = Timesteps(256, True, 0, scale=scale)(torch.arange(*schedule)).numpy()
    spec = _named(cli, tmp_path, table)["spec"]
    assert spec["timestep_scale"] == scale and range(
        *map(int, spec["timesteps"].split(":"))
    ) == range(*schedule)


def test_qwenimage_sigma_timesteps_are_named(cli, tmp_path):
    """QwenImage's and AuraFlow's Timesteps(256, True, 0, scale=1000) at the pipeline's t / 1000:
    a flow-matching schedule's float32 sigmas, named with scale 1000 and every sigma."""
    sigmas = (
        torch.from_numpy(np.linspace(1, 1 / 28, 28, dtype=np.float32) * np.float32(1000)) / 1000
    )
    table = Timesteps(256, True, 0, scale=1000)(sigmas).numpy()
    spec = _named(cli, tmp_path, table)["spec"]
    assert spec["timestep_scale"] == 1000 and spec["variant"] == "diffusers"
    assert np.array_equal(np.array(spec["timesteps"].split(","), dtype=np.float32), sigmas.numpy())


def test_cosmos_video_frame_rates_are_read_back(cli, tmp_path):
    from diffusers.models.transformers.transformer_cosmos import CosmosRotaryPosEmbed

    module = CosmosRotaryPosEmbed(128, (128, 240, 240), (1, 2, 2), 24, (2.0, 1.0, 1.0))
    for fps in (30, 16):
        table = module(torch.empty(1, 16, 5, 10, 15), fps=fps)[1].numpy()
        spec = _named(cli, tmp_path, table)["spec"]
        assert dict(spec["rope"])["fps"] == fps and spec["grid"] == "5x5x7"
