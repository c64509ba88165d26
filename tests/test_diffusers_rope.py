"""diffusers' multi-axis RoPE (FLUX, FLUX.2, Wan, HunyuanVideo, HunyuanImage, CogVideoX 1.5):
`--preset` tables against diffusers' own modules and functions, bit for bit; the exact tables
against mpmath; `compare FILE` naming each; and the refusals."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.reference import round_to


def _flux(rows, cols, text):
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline

    ids = torch.cat(
        [
            torch.zeros(text, 3, dtype=torch.bfloat16),
            FluxPipeline._prepare_latent_image_ids(1, rows, cols, "cpu", torch.bfloat16),
        ]
    )
    return FluxPosEmbed(theta=10000, axes_dim=[16, 56, 56])(ids)


def _flux2(rows, cols, text):
    from diffusers.models.transformers.transformer_flux2 import Flux2PosEmbed
    from diffusers.pipelines.flux2.pipeline_flux2 import Flux2Pipeline

    module = Flux2PosEmbed(theta=2000, axes_dim=[32, 32, 32, 32])
    words = module(Flux2Pipeline._prepare_text_ids(torch.zeros(1, text, 1))[0])
    image = module(Flux2Pipeline._prepare_latent_ids(torch.zeros(1, 1, rows, cols))[0])
    return tuple(torch.cat([w, i]) for w, i in zip(words, image))


def _wan(frames, rows, cols):
    from diffusers.models.transformers.transformer_wan import WanRotaryPosEmbed

    return WanRotaryPosEmbed(128, (1, 2, 2), 1024)(torch.empty(1, 16, frames, 2 * rows, 2 * cols))


def _hunyuan_video(frames, rows, cols):
    from diffusers.models.transformers.transformer_hunyuan_video import HunyuanVideoRotaryPosEmbed

    return HunyuanVideoRotaryPosEmbed(2, 1, [16, 56, 56], 256.0)(
        torch.empty(1, 16, frames, 2 * rows, 2 * cols)
    )


def _hunyuan_image(rows, cols):
    from diffusers.models.transformers.transformer_hunyuanimage import HunyuanImageRotaryPosEmbed

    return HunyuanImageRotaryPosEmbed((1, 1), (64, 64), 256.0)(torch.empty(1, 64, rows, cols))


def _cogvideox_15(frames, rows, cols):
    from diffusers.models.embeddings import get_3d_rotary_pos_embed

    return get_3d_rotary_pos_embed(
        64, None, grid_size=(rows, cols), temporal_size=frames, grid_type="slice", max_size=(48, 85)
    )


def _cogview4(rows, cols):
    from diffusers.models.transformers.transformer_cogview4 import CogView4RotaryPosEmbed

    return CogView4RotaryPosEmbed(128, 2, (256, 256))(torch.empty(1, 16, 2 * rows, 2 * cols))


def _glm_image(rows, cols):
    from diffusers.models.transformers.transformer_glm_image import GlmImageRotaryPosEmbed

    return GlmImageRotaryPosEmbed(128, 2)(torch.empty(1, 16, 2 * rows, 2 * cols))


def _cosmos(frames, rows, cols):
    from diffusers.models.transformers.transformer_cosmos import CosmosRotaryPosEmbed

    module = CosmosRotaryPosEmbed(128, (128, 240, 240), (1, 2, 2), 24, (2.0, 1.0, 1.0))
    return module(torch.empty(1, 16, frames, 2 * rows, 2 * cols))


def _cogvideox(frames, rows, cols):
    """The CogVideoX 1.0 pipeline's table: the grid's crop region of the 30 x 45 base grid."""
    from diffusers.models.embeddings import get_3d_rotary_pos_embed
    from diffusers.pipelines.cogvideo.pipeline_cogvideox import get_resize_crop_region_for_grid

    crops = get_resize_crop_region_for_grid((rows, cols), 45, 30)
    return get_3d_rotary_pos_embed(64, crops, grid_size=(rows, cols), temporal_size=frames)


def _hunyuan_dit(rows, cols):
    """The HunyuanDiT pipeline's table: the grid's crop region of the 32 x 32 base grid."""
    from diffusers.models.embeddings import get_2d_rotary_pos_embed
    from diffusers.pipelines.hunyuandit.pipeline_hunyuandit import get_resize_crop_region_for_grid

    return get_2d_rotary_pos_embed(
        88, get_resize_crop_region_for_grid((rows, cols), 32), (rows, cols), use_real=True
    )


def _allegro(frames, rows, cols):
    """The Allegro pipeline's tables: per axis at positions / interpolation scale, laid out per
    token as the transformer looks them up (t, h, w blocks)."""
    from diffusers.models.embeddings import get_3d_rotary_pos_embed_allegro

    t, h, w, *_ = get_3d_rotary_pos_embed_allegro(
        96, ((0, 0), (rows, cols)), (rows, cols), frames, interpolation_scale=(2.2, 2.0, 2.0)
    )
    index = [
        g.reshape(-1)
        for g in torch.meshgrid(
            torch.arange(frames), torch.arange(rows), torch.arange(cols), indexing="ij"
        )
    ]
    return tuple(torch.cat([t[k][index[0]], h[k][index[1]], w[k][index[2]]], dim=1) for k in (0, 1))


def _z_image(rows, cols, captions):
    from diffusers.models.transformers.transformer_z_image import RopeEmbedder
    from diffusers.models.transformers.transformer_z_image import ZImageTransformer2DModel as ZImage

    words = ZImage.create_coordinate_grid((captions, 1, 1), (1, 0, 0)).flatten(0, 2)
    image = ZImage.create_coordinate_grid((1, rows, cols), (captions + 1, 0, 0)).flatten(0, 2)
    return _complex(RopeEmbedder(256.0, [32, 48, 48], [1024, 512, 512])(torch.cat([words, image])))


def _cosmos_video(frames, rows, cols, fps):
    from diffusers.models.transformers.transformer_cosmos import CosmosRotaryPosEmbed

    module = CosmosRotaryPosEmbed(128, (128, 240, 240), (1, 2, 2), 24, (2.0, 1.0, 1.0))
    return module(torch.empty(1, 16, frames, 2 * rows, 2 * cols), fps=fps)


COSMOS = {"axes_dim": "44,42,42", "axes_theta": f"{10000.0 * 2.0 ** (44 / 42)!r},10000,10000"}


def _ltx(frames, rows, cols, fps=25):
    from diffusers.models.transformers.transformer_ltx import LTXVideoRotaryPosEmbed

    module = LTXVideoRotaryPosEmbed(2048, 20, 2048, 2048, 1, 1, 10000.0)
    cos, sin = module(
        torch.empty(1, frames * rows * cols, 128),
        frames,
        rows,
        cols,
        rope_interpolation_scale=(8 / fps, 32, 32),
    )
    return cos[0], sin[0]


def _complex(table):  # a use_real=False table: its real and imaginary parts, as cos and sin
    return table.real.float(), table.imag.float()


def _lumina_next(rows, cols, **factors):
    from diffusers.models.embeddings import get_2d_rotary_pos_embed_lumina

    return _complex(
        get_2d_rotary_pos_embed_lumina(72, 384, 384, **factors)[:rows, :cols].flatten(0, 1)
    )


def _lumina2(rows, cols, captions):
    from diffusers.models.transformers.transformer_lumina2 import Lumina2RotaryPosEmbed

    module = Lumina2RotaryPosEmbed(10000, (32, 32, 32), (300, 512, 512), 2)
    joint = module(
        torch.empty(1, 16, 2 * rows, 2 * cols), torch.ones(1, captions, dtype=torch.long)
    )[3]
    return _complex(joint[0])


def _qwenimage(rows, cols, text):
    from diffusers.models.transformers.transformer_qwenimage import QwenEmbedRope

    image, words = QwenEmbedRope(10000, [16, 56, 56], scale_rope=True)(
        [[(1, rows, cols)]], torch.device("cpu"), max_txt_seq_len=text
    )
    return _complex(torch.cat([words, image]))


# preset, its tokens as pe-cli options, and diffusers building the same table; the first of
# each is the size real pipelines use (FLUX at 1024 x 1024: 64 x 64 patches after 512 text
# tokens; Wan 2.1 at 480 x 832, 81 frames; CogVideoX 1.5 at 768 x 1360, 81 frames)
CASES = [
    ("flux", dict(grid="64x64", text_tokens=512), lambda: _flux(64, 64, 512)),
    ("flux", dict(grid="24x40", text_tokens=77), lambda: _flux(24, 40, 77)),
    ("flux2", dict(grid="64x64", text_tokens=512), lambda: _flux2(64, 64, 512)),
    ("flux2", dict(grid="12x20", text_tokens=9), lambda: _flux2(12, 20, 9)),
    ("wan", dict(grid="21x30x52"), lambda: _wan(21, 30, 52)),
    ("wan", dict(grid="3x5x7"), lambda: _wan(3, 5, 7)),
    ("hunyuan-video", dict(grid="5x24x40"), lambda: _hunyuan_video(5, 24, 40)),
    ("hunyuan-image", dict(grid="64x64"), lambda: _hunyuan_image(64, 64)),
    ("cogvideox-1.5", dict(grid="11x48x85"), lambda: _cogvideox_15(11, 48, 85)),
    ("cogvideox-1.5", dict(grid="4x10x12"), lambda: _cogvideox_15(4, 10, 12)),
    ("cogview4", dict(grid="64x64"), lambda: _cogview4(64, 64)),
    ("cogview4", dict(grid="48x80"), lambda: _cogview4(48, 80)),
    ("glm-image", dict(grid="64x64"), lambda: _glm_image(64, 64)),
    ("glm-image", dict(grid="12x20"), lambda: _glm_image(12, 20)),
    ("cosmos", dict(grid="1x88x120"), lambda: _cosmos(1, 88, 120)),
    ("cosmos", dict(grid="3x10x15"), lambda: _cosmos(3, 10, 15)),
    # CogVideoX 1.0 at 480 x 720 (its base grid: whole positions), and at sizes whose crop
    # regions put the patches at fractions; HunyuanDiT at 1024 x 1024 (patches at k/2), and not
    # square
    ("cogvideox", dict(grid="13x30x45"), lambda: _cogvideox(13, 30, 45)),
    ("cogvideox", dict(grid="3x24x50"), lambda: _cogvideox(3, 24, 50)),
    ("cogvideox", dict(grid="2x40x40"), lambda: _cogvideox(2, 40, 40)),
    ("hunyuan-dit", dict(grid="64x64"), lambda: _hunyuan_dit(64, 64)),
    ("hunyuan-dit", dict(grid="48x64"), lambda: _hunyuan_dit(48, 64)),
    # the complex tables (use_real=False): Lumina-Next at 1024 x 1024, Lumina2 with 256 caption
    # tokens, QwenImage at 1024 x 1024 with 512 text tokens, odd sizes (centred unevenly)
    ("lumina-next", dict(grid="64x64"), lambda: _lumina_next(64, 64)),
    ("lumina-next", dict(grid="12x20"), lambda: _lumina_next(12, 20)),
    ("lumina2", dict(grid="64x64", text_tokens=256), lambda: _lumina2(64, 64, 256)),
    ("lumina2", dict(grid="12x20", text_tokens=30), lambda: _lumina2(12, 20, 30)),
    ("qwenimage", dict(grid="64x64", text_tokens=512), lambda: _qwenimage(64, 64, 512)),
    ("qwenimage", dict(grid="13x19", text_tokens=40), lambda: _qwenimage(13, 19, 40)),
    # Allegro at 720 x 1280, 88 frames (22 x 45 x 80), and small
    ("allegro", dict(grid="22x45x80"), lambda: _allegro(22, 45, 80)),
    ("allegro", dict(grid="5x6x10"), lambda: _allegro(5, 6, 10)),
    # Z-Image at 1024 x 1024 after 512 caption tokens (a multiple of 32, as it pads them)
    ("z-image", dict(grid="64x64", text_tokens=512), lambda: _z_image(64, 64, 512)),
    ("z-image", dict(grid="12x20", text_tokens=32), lambda: _z_image(12, 20, 32)),
    # Cosmos videos: frames at k * 24/fps (Cosmos 1.0's 30, Cosmos 2's 16)
    (
        "cosmos",
        dict(grid="16x22x40", rope={**COSMOS, "fps": 30}),
        lambda: _cosmos_video(16, 22, 40, 30),
    ),
    (
        "cosmos",
        dict(grid="5x10x15", rope={**COSMOS, "fps": 16}),
        lambda: _cosmos_video(5, 10, 15, 16),
    ),
    # LTX-Video at 704 x 480, 161 frames (21 x 15 x 22 latent patches), and small at 24 fps
    ("ltx-video", dict(grid="21x15x22"), lambda: _ltx(21, 15, 22)),
    (
        "ltx-video",
        dict(grid="3x5x7", rope={"axes_dim": "684,682,682", "fps": 24}),
        lambda: _ltx(3, 5, 7, fps=24),
    ),
]


def _table(preset, variant, part, **tokens):
    return pe_cli.build(preset=preset, variant=variant, part=part, **tokens).numpy()


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


def _exact_value(position, theta, dim, i, part):
    angle = mpmath.mpf(position) * mpmath.power(theta, -mpmath.mpf(2 * i) / dim)
    return round_to(mpmath.cos(angle) if part == "cos" else mpmath.sin(angle), "float32")


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


def test_ids_file_at_fractional_positions_against_mpmath(tmp_path):
    """--ids: any positions, fractional ones exactly (k/4, k/3 rounded to float32 as given)."""
    ids = np.array([[0, 0.25, 1.75], [3, 2.5, 0.125], [1 / 3, 7, 12.0]], dtype=np.float32)
    np.save(tmp_path / "ids.npy", ids)
    table = pe_cli.build(preset="flux", ids=str(tmp_path / "ids.npy"), part="sin").numpy()
    for row in range(3):
        c = 0
        for axis, dim in enumerate((16, 56, 56)):
            for i in range(dim // 2):
                expected = _exact_value(mpmath.mpf(float(ids[row, axis])), 10000, dim, i, "sin")
                assert table[row, c] == expected, (row, c)
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


def test_ids_file_is_the_grid_it_lists(tmp_path):
    spec = pe_cli.TableSpec(
        family="rope",
        d_model=128,
        axes="split",
        rope={"axes_dim": "16,56,56"},
        convention="interleaved",
        grid="6x8",
        text_tokens=5,
    )
    from pe_cli.families.rope.tokens import axes_positions

    np.save(tmp_path / "ids.npy", axes_positions(spec).astype(np.int32))
    by_ids = pe_cli.build(preset="flux", ids=str(tmp_path / "ids.npy"), part="cos").numpy()
    assert np.array_equal(
        by_ids, pe_cli.build(preset="flux", grid="6x8", text_tokens=5, part="cos").numpy()
    )
    assert np.array_equal(by_ids, _flux(6, 8, 5)[0].numpy())


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


def _named_by_ids(cli, path, preset):
    """compare's best candidate for the table at path: bit for bit, the preset's, its tokens
    given as inline --ids runs; returns them."""
    code, out, err = cli("compare", path, "--json")
    assert code == 0 and err == "", err
    best = json.loads(out)["candidates"][0]
    assert (
        best["differing"] == 0 and best["spec"]["axes"] == pe_cli.families.rope.PRESETS[preset].axes
    )
    assert best["spec"]["grid"] is None and best["spec"]["ids"]
    return best["spec"]["ids"]


def test_scattered_ids_are_named_with_their_positions(cli, tmp_path):
    """Whole positions that are not text tokens and a grid: each token its own run."""
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    ids = [[0, 5, 3], [0, 1, 1], [0, 9, 2], [0, 0, 7]]
    np.save(
        tmp_path / "t.npy",
        FluxPosEmbed(10000, [16, 56, 56])(torch.tensor(ids, dtype=torch.float32))[1].numpy(),
    )
    assert _named_by_ids(cli, tmp_path / "t.npy", "flux") == "0,5,3; 0,1,1; 0,9,2; 0,0,7"


def test_too_many_runs_are_a_note_not_a_match(cli, tmp_path):
    from diffusers.models.transformers.transformer_flux import FluxPosEmbed

    ids = np.random.default_rng(5).integers(0, 40, size=(200, 3))
    ids[:, 0] = 0
    np.save(
        tmp_path / "t.npy",
        FluxPosEmbed(10000, [16, 56, 56])(torch.tensor(ids, dtype=torch.float32))[1].numpy(),
    )
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    found = json.loads(out)
    assert code == 0 and err == "" and not found["explained"]
    assert any(
        "RoPE at positions k/Q (Q = 1, 2, 4, 8 or 16), but its tokens make more than 64 runs"
        in note
        for note in found["notes"]
    )


@pytest.mark.parametrize("part", [0, 1])
def test_flux2_reference_images_are_named_bit_for_bit(cli, tmp_path, part):
    """FLUX.2's text, image and two reference images (its pipeline's ids, t = 10 and 20): compare
    names them as runs, and generate --ids with those runs rebuilds the table."""
    from diffusers.models.transformers.transformer_flux2 import Flux2PosEmbed
    from diffusers.pipelines.flux2.pipeline_flux2 import Flux2Pipeline

    references = [torch.zeros(1, 4, 6, 10), torch.zeros(1, 4, 5, 3)]
    ids = torch.cat(
        [
            Flux2Pipeline._prepare_text_ids(torch.zeros(1, 30, 1))[0],
            Flux2Pipeline._prepare_latent_ids(torch.zeros(1, 1, 8, 12))[0],
            Flux2Pipeline._prepare_image_ids(references)[0],
        ]
    )
    table = Flux2PosEmbed(theta=2000, axes_dim=[32, 32, 32, 32])(ids)[part].numpy()
    np.save(tmp_path / "t.npy", table)
    runs = _named_by_ids(cli, tmp_path / "t.npy", "flux2")
    assert runs == "0,0,0,0:30; 0,0:8,0:12,0; 10,0:6,0:10,0; 20,0:5,0:3,0"
    code, _, err = cli(
        "generate",
        "--preset",
        "flux2",
        "--ids",
        runs,
        "--part",
        ("cos", "sin")[part],
        "--variant",
        "diffusers",
        "-o",
        tmp_path / "again.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "again.npy"), table)


def test_joyimage_text_after_the_image_is_named(cli, tmp_path):
    """JoyImage: HunyuanVideo's arithmetic, text token k at max(grid) + 1 + k on every axis."""
    from diffusers.models.transformers.transformer_joyimage import JoyImageEditTransformer3DModel

    class Model:
        hidden_size, num_attention_heads, rope_dim_list, theta = 3072, 24, [16, 56, 56], 256

    (vis, _), (text, _) = JoyImageEditTransformer3DModel.get_rotary_pos_embed(Model(), [3, 6, 8], 5)
    np.save(tmp_path / "t.npy", torch.cat([vis, text]).numpy())
    assert (
        _named_by_ids(cli, tmp_path / "t.npy", "hunyuan-video") == "0:3,0:6,0:8; 5*8:13,8:13,8:13"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "0,0,0,0:3; 1:3,0:2,4,0",
            [
                [0, 0, 0, 0],
                [0, 0, 0, 1],
                [0, 0, 0, 2],
                [1, 0, 4, 0],
                [1, 1, 4, 0],
                [2, 0, 4, 0],
                [2, 1, 4, 0],
            ],
        ),
        ("3*0,0,0,7", [[0, 0, 0, 7]] * 3),
        ("3*5:8,5:8,0,-1:-10:-3", [[5, 5, 0, -1], [6, 6, 0, -4], [7, 7, 0, -7]]),
        (" 2:-1:-2 , 0 , 0 , 0 ;0,0,0,0", [[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
    ],
)
def test_inline_ids_are_the_positions_they_name(text, expected):
    from pe_cli.families.positions import token_runs

    numerators, denominators = token_runs(text, 4)
    assert numerators.tolist() == expected and denominators == (1, 1, 1, 1)


def test_runs_read_back_any_layout_of_grids_and_lines():
    """runs_of, then token_runs, gives back the positions: 200 random layouts of grids (steps
    of either sign) and lines."""
    from pe_cli.families.positions import token_runs
    from pe_cli.families.rope.identify.runs import runs_of

    rng = np.random.default_rng(7)
    for _ in range(200):
        pieces = []
        for _ in range(rng.integers(1, 6)):
            start, step = rng.integers(-20, 20, 3), rng.choice([-3, -1, 1, 2], 3)
            if rng.random() < 0.5:
                sizes = rng.integers(1, 5, 3)
                axes = np.meshgrid(
                    *[start[a] + step[a] * np.arange(sizes[a]) for a in range(3)], indexing="ij"
                )
                pieces.append(np.stack([g.reshape(-1) for g in axes], axis=1))
            else:
                moves = step * (rng.random(3) < 0.6)
                pieces.append(start + np.arange(rng.integers(1, 9))[:, None] * moves)
        positions = np.concatenate(pieces)
        numerators, denominators = token_runs(runs_of(positions, 10**6), 3)
        assert np.array_equal(numerators, positions) and denominators == (1, 1, 1)


def test_fractional_runs_read_back_any_layout():
    """runs_of over each axis's denominator, then token_runs, gives back the same positions
    (numerators over denominators, whole entries written whole): 200 random layouts."""
    from pe_cli.families.positions import token_runs
    from pe_cli.families.rope.identify.runs import runs_of

    rng = np.random.default_rng(11)
    for _ in range(200):
        denominators = tuple(int(q) for q in rng.choice([1, 2, 4, 16], 3))
        pieces = []
        for _ in range(rng.integers(1, 5)):
            start, step, sizes = (
                rng.integers(-40, 40, 3),
                rng.choice([-3, -1, 1, 2], 3),
                rng.integers(1, 5, 3),
            )
            axes = np.meshgrid(
                *[start[a] + step[a] * np.arange(sizes[a]) for a in range(3)], indexing="ij"
            )
            pieces.append(np.stack([g.reshape(-1) for g in axes], axis=1))
        numerators = np.concatenate(pieces)
        read, below = token_runs(runs_of(numerators, 10**6, denominators), 3)
        assert np.array_equal(read / np.array(below), numerators / np.array(denominators))


def test_unsigned_runs_give_back_the_same_magnitudes():
    """A cos table tells |p|: runs_of(unsigned) over |p| of random grids centred on 0 (steps of
    either sign), then token_runs, gives positions of the same |p| in as few runs as the signed
    grids."""
    from pe_cli.families.positions import token_runs
    from pe_cli.families.rope.identify.runs import runs_of

    rng = np.random.default_rng(13)
    for _ in range(200):
        pieces = []
        for _ in range(rng.integers(1, 5)):
            sizes = rng.integers(1, 7, 3)
            start, step = -(sizes // 2) * rng.choice([1, -1], 3), rng.choice([-1, 1], 3)
            axes = np.meshgrid(
                *[start[a] + step[a] * np.arange(sizes[a]) for a in range(3)], indexing="ij"
            )
            pieces.append(np.stack([g.reshape(-1) for g in axes], axis=1))
        magnitudes = np.abs(np.concatenate(pieces))
        runs = runs_of(magnitudes, 10**6, unsigned=True)
        assert np.array_equal(np.abs(token_runs(runs, 3)[0]), magnitudes)
        assert len(runs.split(";")) <= len(pieces)


def test_qwenimage_edit_images_are_named_cos_and_sin(cli, tmp_path):
    """QwenImage Edit's several images (frame k, rows and columns centred): the sin table is
    named with its signed runs, the cos table (|p| only) with runs of the same magnitudes, one
    per image, bit for bit."""
    from diffusers.models.transformers.transformer_qwenimage import QwenEmbedRope

    images, _ = QwenEmbedRope(10000, [16, 56, 56], scale_rope=True)(
        [[(1, 4, 6), (1, 5, 3), (1, 32, 32)]], torch.device("cpu"), max_txt_seq_len=7
    )
    for part, values in (("cos", images.real), ("sin", images.imag)):
        np.save(tmp_path / f"{part}.npy", values.numpy())
        runs = _named_by_ids(cli, tmp_path / f"{part}.npy", "qwenimage")
        assert len(runs.split(";")) == 3, (part, runs)
    assert runs == "0,-2:2,-3:3; 1,-3:2,-2:1; 2,-16:16,-16:16"


def test_flux3_condition_images_are_named_at_half_positions(cli, tmp_path):
    """FLUX.3's reference images: rows and columns at k/2, image i at l = -(1 + i) (its modular
    pipeline's _prepare_image_ids), bit for bit with inline runs over /2; compare names both
    parts with such runs (the cos table with |l|, the same table)."""
    from diffusers.models.transformers.transformer_flux3 import Flux3PosEmbed
    from diffusers.modular_pipelines.flux3.before_denoise import _prepare_image_ids

    ids = torch.cat([_prepare_image_ids(6, 8, 0.5, -1), _prepare_image_ids(5, 3, 0.5, -2)])
    runs = "0,0:6/2,0:8/2,-1; 0,0:5/2,0:3/2,-2"
    for part, expected in zip(("cos", "sin"), Flux3PosEmbed(10000, [32, 32, 32, 32])(ids)):
        assert np.array_equal(_table("flux3", "diffusers", part, ids=runs), expected.numpy()), part
        np.save(tmp_path / f"{part}.npy", expected.numpy())
        named = _named_by_ids(cli, tmp_path / f"{part}.npy", "flux3")
        assert named == (runs if part == "sin" else runs.replace("-", "")), part


@pytest.mark.parametrize(
    "ids, message",
    [
        ("0,0", "has 2 entries for 3 axes"),
        ("0,0,5:5", "at least one position"),
        ("0,0,0:4:0", "is not a position V or a range"),
        ("3*0,0,0:4", "a line of 3 tokens takes ranges of 3 positions"),
        ("x*0,0,0", "not a readable .npy file"),
        ("0,0,5000000000", "pass 2^32"),
        ("0:4000000,0:4000000,0:4000000", "more memory than there is room for"),
        ("0,0:4/3,0", "a denominator is a power of two up to 65536"),
        ("0,0:4/0,0", "a denominator is a power of two"),
        ("0,0:4/x,0", "not a readable .npy file"),
    ],
)
def test_bad_inline_ids_get_one_line(cli, ids, message):
    code, out, err = cli("generate", "--preset", "flux", "--ids", ids, "--part", "cos")
    assert code == 2 and not out and message in err and len(err.strip().splitlines()) == 1, err


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
    "content, message",
    [
        (np.zeros((4, 2)), "not (tokens, 3)"),
        (np.array([[0, 1, 2]], dtype=object), "not a readable .npy"),
        (np.array([[0, np.inf, 2.0]]), "finite"),
        (np.array([[0, 1e-12, 2.0]]), "binary places"),
    ],
)
def test_bad_ids_files(cli, tmp_path, content, message):
    np.save(tmp_path / "ids.npy", content, allow_pickle=True)
    code, _, err = cli("generate", "--preset", "flux", "--ids", tmp_path / "ids.npy")
    assert code == 2 and message in err and "Traceback" not in err


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


@pytest.mark.parametrize("positions", [300, 5000])
def test_omnigen_is_hf_rope_longrope(positions):
    """OmniGen's OmniGenSuScaledRotaryEmbedding is Phi-3's LongRoPE: --variant hf-rope with its
    factors (short below 4096 positions, long above), bit for bit."""
    from diffusers.models.transformers.transformer_omnigen import OmniGenSuScaledRotaryEmbedding

    rng = np.random.default_rng(0)
    short, long = (1 + rng.random(48)).round(4).tolist(), (1 + 3 * rng.random(48)).round(4).tolist()
    module = OmniGenSuScaledRotaryEmbedding(
        96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        base=10000,
        rope_scaling={"short_factor": short, "long_factor": long},
    )
    cos, sin = module(torch.empty(1, positions, 96), torch.arange(positions)[None])
    rope = {
        "rope_type": "longrope",
        "short_factor": ",".join(map(str, short)),
        "long_factor": ",".join(map(str, long)),
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    }
    for part, expected in (("cos", cos), ("sin", sin)):
        table = pe_cli.build(
            family="rope", d_model=96, seq_len=positions, rope=rope, variant="hf-rope", part=part
        )
        assert np.array_equal(table.numpy(), expected.reshape(positions, -1).numpy())


# Phi-3-mini-128k's rope_scaling, which OmniGen's checkpoint carries: LongRoPE factors per frequency
PHI3_SHORT = [
    1.05,
    1.05,
    1.05,
    1.1,
    1.1,
    1.1,
    1.2500000000000002,
    1.2500000000000002,
    1.4000000000000004,
    1.4500000000000004,
    1.5500000000000005,
    1.8500000000000008,
    1.9000000000000008,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.000000000000001,
    2.1000000000000005,
    2.1000000000000005,
    2.2,
    2.3499999999999996,
    2.3499999999999996,
    2.3499999999999996,
    2.3499999999999996,
    2.3999999999999995,
    2.3999999999999995,
    2.6499999999999986,
    2.6999999999999984,
    2.8999999999999977,
    2.9499999999999975,
    3.049999999999997,
    3.049999999999997,
    3.049999999999997,
]
PHI3_LONG = [
    1.0299999713897705,
    1.0499999523162842,
    1.0499999523162842,
    1.0799999237060547,
    1.2299998998641968,
    1.2299998998641968,
    1.2999999523162842,
    1.4499999284744263,
    1.5999999046325684,
    1.6499998569488525,
    1.8999998569488525,
    2.859999895095825,
    3.68999981880188,
    5.419999599456787,
    5.489999771118164,
    5.489999771118164,
    9.09000015258789,
    11.579999923706055,
    15.65999984741211,
    15.769999504089355,
    15.789999961853027,
    18.360000610351562,
    21.989999771118164,
    23.079999923706055,
    30.009998321533203,
    32.35000228881836,
    32.590003967285156,
    35.56000518798828,
    39.95000457763672,
    53.840003967285156,
    56.20000457763672,
    57.95000457763672,
    59.29000473022461,
    59.77000427246094,
    59.920005798339844,
    61.190006256103516,
    61.96000671386719,
    62.50000762939453,
    63.3700065612793,
    63.48000717163086,
    63.48000717163086,
    63.66000747680664,
    63.850006103515625,
    64.08000946044922,
    64.760009765625,
    64.80001068115234,
    64.81001281738281,
    64.81001281738281,
]


def _longrope_table(library, positions):
    """cos, sin and frequencies of Phi-3's LongRoPE (head dim 96, base 10000, 4096 positions
    grown to 131072) from diffusers' OmniGen module or transformers' rotary embedding."""
    if library == "transformers":
        from tests.libraries import hf_rotary

        rope = {
            "rope_type": "longrope",
            "short_factor": PHI3_SHORT,
            "long_factor": PHI3_LONG,
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
        }
        cos, sin, inv_freq, _ = hf_rotary(rope, 96, 10000.0, list(range(positions)))
        return cos, sin, inv_freq
    from diffusers.models.transformers.transformer_omnigen import OmniGenSuScaledRotaryEmbedding

    module = OmniGenSuScaledRotaryEmbedding(
        96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        base=10000,
        rope_scaling={"short_factor": PHI3_SHORT, "long_factor": PHI3_LONG},
    )
    cos, sin = module(torch.empty(1, positions, 96), torch.arange(positions)[None])
    return cos, sin, module.inv_freq


@pytest.mark.parametrize("library", ["diffusers", "transformers"])
@pytest.mark.parametrize("positions, part", [(300, "cos"), (4150, "sin"), (4150, "cos")])
def test_compare_reads_longrope_factors(cli, tmp_path, library, positions, part):
    """OmniGen's LongRoPE table (Phi-3's, with 2 x 48 factors from its config) is named bit for bit:
    its lengths from its attention factor, base 10000, and the factor list its positions use
    (long past 4096), read back column by column. Where a column turns at least a radian over
    the table, the factor read gives the config's own float32 frequency."""
    cos, sin, inv_freq = _longrope_table(library, positions)
    table = (cos if part == "cos" else sin).reshape(positions, 96).numpy()
    np.save(tmp_path / "t.npy", table)
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    best = json.loads(out)["candidates"][0]
    rope = dict(best["spec"]["rope"])
    assert (
        code == 0
        and best["differing"] == 0
        and best["confirmed"]
        and best["spec"]["variant"] == "hf-rope"
    )
    used = "long_factor" if positions > 4096 else "short_factor"
    assert best["spec"]["base"] == 10000 and used in rope and len(rope[used]) == 48
    assert {
        k: rope[k]
        for k in ("rope_type", "original_max_position_embeddings", "max_position_embeddings")
    } == {
        "rope_type": "longrope",
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    }
    read = pe_cli.build(**{**best["spec"], "part": "inv_freq"}).numpy().reshape(-1)
    turning = inv_freq.numpy() * (positions - 1) >= 1
    assert turning.sum() >= 24 and np.array_equal(read[turning], inv_freq.numpy()[turning])
    rebuilt = pe_cli.build(**best["spec"]).numpy()  # the spec named rebuilds the library's table
    assert np.array_equal(rebuilt, table)


@pytest.mark.parametrize("padded, positions", [(37, 300), (90, 4150)])
def test_omnigen_padded_prompt_is_named(cli, tmp_path, padded, positions):
    """OmniGen's module returns its batch's first table; where the batch pads that prompt (a
    shorter prompt than the negative one), its positions start with rows at 0 (the collator's
    left padding): --ids "P*0; 0:N" builds it bit for bit, and compare names it so, with the
    factor list its largest position picks (long past 4096)."""
    from diffusers.models.transformers.transformer_omnigen import OmniGenSuScaledRotaryEmbedding

    module = OmniGenSuScaledRotaryEmbedding(
        96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        base=10000,
        rope_scaling={"short_factor": PHI3_SHORT, "long_factor": PHI3_LONG},
    )
    ids = torch.tensor([0] * padded + list(range(positions)))
    cos, sin = module(torch.empty(1, len(ids), 96), ids[None])
    rope = {
        "rope_type": "longrope",
        "short_factor": PHI3_SHORT,
        "long_factor": PHI3_LONG,
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    }
    runs = f"{padded}*0; 0:{positions}"
    for part, expected in (("cos", cos), ("sin", sin)):
        table = expected.reshape(len(ids), 96).numpy()
        built = pe_cli.build(
            family="rope", d_model=96, ids=runs, rope=rope, variant="hf-rope", part=part
        ).numpy()
        assert np.array_equal(built, table), part
        np.save(tmp_path / "t.npy", table)
        best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
        used = "long_factor" if positions > 4096 else "short_factor"
        assert (
            best["differing"] == 0
            and best["spec"]["ids"] == runs
            and used in dict(best["spec"]["rope"])
        ), part


def test_one_axis_ids_against_mpmath():
    """A 1-D table at listed positions (--ids runs, one entry each): each row the correctly
    rounded cos or sin of its own position times base^(-2i/d), from mpmath."""
    positions = [0, 0, 5, 6, 7, 8, 100, 3]
    for part in ("cos", "sin"):
        table = pe_cli.build(
            family="rope", d_model=16, ids="2*0; 5:9; 100; 3", part=part, dtype="float64"
        ).numpy()
        assert table.shape == (8, 16)
        for row, p in enumerate(positions):
            for i in range(8):
                angle = p * mpmath.power(10000, -mpmath.mpf(2 * i) / 16)
                value = float((mpmath.cos if part == "cos" else mpmath.sin)(angle))
                assert table[row, i] == table[row, 8 + i] == value, (part, row, i)


@pytest.mark.parametrize("freqs_dtype", ["float32", "float64"])
def test_one_axis_ids_are_get_1d_rotary_pos_embed_at_those_positions(freqs_dtype):
    """--variant diffusers at listed positions: get_1d_rotary_pos_embed given them, bit for bit."""
    from diffusers.models.embeddings import get_1d_rotary_pos_embed

    positions = np.array([0, 0, 0, *range(40), 1000, 7])
    cos, sin = get_1d_rotary_pos_embed(
        64,
        positions,
        use_real=True,
        repeat_interleave_real=True,
        freqs_dtype=getattr(torch, freqs_dtype),
    )
    for part, expected in (("cos", cos), ("sin", sin)):
        table = pe_cli.build(
            family="rope",
            d_model=64,
            ids="3*0; 0:40; 1000; 7",
            convention="interleaved",
            variant="diffusers",
            freqs_dtype=freqs_dtype,
            part=part,
        ).numpy()
        assert np.array_equal(table, expected.float().numpy()), part


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ids", "0:5", "--offset", "3"], "drop --offset"),
        (["--ids", "0:5/2"], "a 1-D table takes whole positions"),
        (
            ["--ids", "0:5", "--text-tokens", "2"],
            "--text-tokens gives the tokens of a multi-axis table",
        ),
    ],
)
def test_one_axis_ids_refusals(cli, args, message):
    code, _, err = cli("generate", "--family", "rope", "-d", 16, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_longrope_needs_only_the_factor_list_its_positions_use(cli):
    factors = ",".join(["1.5"] * 8)
    common = (
        "--family",
        "rope",
        "-d",
        16,
        "--rope",
        "rope_type=longrope",
        "--rope",
        "max_position_embeddings=8192",
        "--rope",
        "original_max_position_embeddings=512",
        "--rope",
        f"short_factor={factors}",
    )
    assert cli("generate", *common, "-l", 512)[0] == 0
    code, _, err = cli("generate", *common, "-l", 513)
    assert (
        code == 2
        and "needs long_factor: the positions run past original_max_position_embeddings = 512"
        in err
    )


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


# More transformer files' RoPE modules, each with the ids its pipeline (or forward) makes:
# FLUX.3, Krea 2, ERNIE-Image, NucleusMoE-Image, Ovis-Image, LongCat-Image and PRX


def _text_and_image(module, text_ids, image_ids):
    """(cos, sin) of one module over text ids then image ids, as 2-D float32."""
    cos, sin = module(torch.cat([text_ids, image_ids]))
    return cos.float().numpy(), sin.float().numpy()


def _flux3(rows, cols, text):
    from diffusers.models.transformers.transformer_flux3 import Flux3PosEmbed
    from diffusers.modular_pipelines.flux3.before_denoise import _prepare_image_ids

    words = torch.zeros(text, 4)
    words[:, 3] = torch.arange(text)
    return _text_and_image(
        Flux3PosEmbed(10000, [32, 32, 32, 32]), words, _prepare_image_ids(rows, cols, 0.5)
    )


def _krea2(rows, cols, text):
    from diffusers.models.transformers.transformer_krea2 import Krea2RotaryPosEmbed
    from diffusers.pipelines.krea2.pipeline_krea2 import Krea2Pipeline

    cos, sin = Krea2RotaryPosEmbed(1000.0, [32, 48, 48])(
        Krea2Pipeline.prepare_position_ids(text, rows, cols, "cpu")
    )
    return cos.numpy(), sin.numpy()


def _ernie_image(rows, cols, text):
    """ERNIE-Image's module returns the angles (image first at (N, row, column), then text at
    (k, 0, 0)); its attention takes their cos and sin in float32."""
    from diffusers.models.transformers.transformer_ernie_image import ErnieImageEmbedND3

    grid = torch.stack(
        torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij"), -1
    ).reshape(-1, 2)
    image = torch.cat([torch.full((rows * cols, 1), text), grid], 1).float()
    words = torch.cat(
        [torch.arange(text)[:, None], torch.zeros(text, 2, dtype=torch.long)], 1
    ).float()
    angles = ErnieImageEmbedND3(128, 256, (32, 48, 48))(torch.cat([image, words])[None])[0, :, 0]
    return torch.cos(angles).numpy(), torch.sin(angles).numpy()


def _nucleus_image(rows, cols, text):
    """NucleusMoE-Image's (image, text) complex64 tables, as its attention joins them: image first."""
    from diffusers.models.transformers.transformer_nucleusmoe_image import NucleusMoEEmbedRope

    image, words = NucleusMoEEmbedRope(10000, [16, 56, 56], scale_rope=True)(
        [(1, rows, cols)], max_txt_seq_len=text, device=torch.device("cpu")
    )
    joint = torch.cat([image, words])
    return joint.real.numpy(), joint.imag.numpy()


def _ovis_image(rows, cols, text):
    from diffusers.models.transformers.transformer_ovis_image import OvisImagePosEmbed
    from diffusers.pipelines.ovis_image.pipeline_ovis_image import OvisImagePipeline

    words = torch.zeros(text, 3)
    words[:, 1] = words[:, 2] = torch.arange(text)
    image = OvisImagePipeline._prepare_latent_image_ids(
        1, rows, cols, "cpu", torch.float32
    ).reshape(-1, 3)
    return _text_and_image(OvisImagePosEmbed(10000, [16, 56, 56]), words, image)


def _longcat_image(rows, cols, text):
    from diffusers.models.transformers.transformer_longcat_image import LongCatImagePosEmbed
    from diffusers.pipelines.longcat_image.pipeline_longcat_image import prepare_pos_ids

    return _text_and_image(
        LongCatImagePosEmbed(10000, [16, 56, 56]),
        prepare_pos_ids(0, "text", (0, 0), num_token=text),
        prepare_pos_ids(1, "image", (512, 512), height=rows, width=cols),
    )


def _prx(rows, cols):
    from diffusers.models.transformers.transformer_prx import PRXEmbedND, get_image_ids

    return PRXEmbedND(64, 10000, [32, 32])(get_image_ids(1, 2 * rows, 2 * cols, 2, "cpu"))[
        0, 0
    ].reshape(rows * cols, -1)


MORE = [  # (preset, text tokens at the pipeline's size, the module)
    ("flux3", 512, _flux3),
    ("krea2", 512, _krea2),
    ("ernie-image", 256, _ernie_image),
    ("nucleus-image", 512, _nucleus_image),
    ("ovis-image", 256, _ovis_image),
    ("longcat-image", 512, _longcat_image),
]


@pytest.mark.parametrize("size", ["small", "pipeline"])
@pytest.mark.parametrize("preset, text, module", MORE, ids=[m[0] for m in MORE])
def test_more_presets_are_the_modules_bit_for_bit(preset, text, module, size):
    rows, cols, text = (6, 9, 5) if size == "small" else (64, 64, text)
    cos, sin = module(rows, cols, text)
    for part, expected in (("cos", cos), ("sin", sin)):
        assert np.array_equal(
            _table(preset, "diffusers", part, grid=f"{rows}x{cols}", text_tokens=text), expected
        )


@pytest.mark.parametrize("preset, text, module", MORE, ids=[m[0] for m in MORE])
def test_compare_names_more_presets(cli, tmp_path, preset, text, module):
    np.save(tmp_path / "t.npy", module(7, 10, 6)[1])
    code, out, _ = cli("compare", tmp_path / "t.npy", "--json")
    best = json.loads(out)["candidates"][0]
    from pe_cli.spec import spec_from_keywords

    own = spec_from_keywords(preset=preset, grid="7x10", text_tokens=6)
    assert code == 0 and best["differing"] == 0
    assert (
        best["spec"]["axes"],
        best["spec"]["base"],
        best["spec"]["grid"],
        best["spec"]["text_tokens"],
    ) == (own.axes, own.base, "7x10", 6)


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


def test_base_and_width_given_go_over_a_preset(cli, tmp_path):
    """--base over a preset's theta (Krea 2 is FLUX's layout at 1000); a --d-model the preset's
    axes do not cover is refused, never replaced."""
    code, _, err = cli(
        "generate",
        "--preset",
        "flux",
        "--base",
        "1000",
        "--rope",
        "axes_dim=32,48,48",
        "--grid",
        "6x9",
        "--text-tokens",
        "5",
        "--part",
        "sin",
        "-o",
        tmp_path / "k.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "k.npy"), _krea2(6, 9, 5)[1])
    code, _, err = cli("generate", "--preset", "flux", "-d", "64", "--grid", "2x2")
    assert code == 2 and "must add up to it" in err


def test_frequency_laws_of_their_own_refuse_scaling(cli):
    for preset, grid in (("kandinsky5", "2x3x3"), ("ltx-video", "2x3x3")):
        code, _, err = cli("generate", "--preset", preset, "--grid", grid, "--rope", "ntk_factor=2")
        assert code == 2 and "do not apply" in err


def _helios(frames, rows, cols):  # its module packs [cos | sin] in one 256-wide table
    from diffusers.models.transformers.transformer_helios import HeliosRotaryPosEmbed

    table = HeliosRotaryPosEmbed((44, 42, 42), 10000.0)(
        torch.arange(frames)[None], rows, cols, "cpu"
    )
    table = table.flatten(2).transpose(1, 2)[0]
    return table[:, :128].numpy(), table[:, 128:].numpy()


def _anyflow(frames, rows, cols):
    from diffusers.models.transformers.transformer_anyflow import AnyFlowRotaryPosEmbed

    table = AnyFlowRotaryPosEmbed(128, (1, 2, 2), 1024)._forward_full_frame(
        frames, rows, cols, torch.device("cpu")
    )
    table = table.reshape(-1, 64)
    return table.real.float().numpy(), table.imag.float().numpy()


def _motif(frames, rows, cols):
    from diffusers.models.transformers.transformer_motif_video import MotifVideoRotaryPosEmbed

    cos, sin = MotifVideoRotaryPosEmbed(1, 1, [16, 56, 56], 256.0)(
        torch.zeros(1, 4, frames, rows, cols)
    )
    return cos.numpy(), sin.numpy()


def _sana_wm(frames, rows, cols):
    from diffusers.models.transformers.transformer_sana_wm import SanaWMRotaryPosEmbed

    table = SanaWMRotaryPosEmbed(112, (1, 2, 2), 1024)((frames, rows, cols)).reshape(-1, 56)
    return table.real.numpy(), table.imag.numpy()


VIDEO = [
    ("helios", _helios),
    ("wan-complex", _anyflow),
    ("motif-video", _motif),
    ("sana-wm", _sana_wm),
]


@pytest.mark.parametrize("preset, module", VIDEO, ids=[v[0] for v in VIDEO])
def test_video_presets_are_the_modules_bit_for_bit(cli, tmp_path, preset, module):
    for frames, rows, cols in ((3, 6, 8), (21, 30, 52)):
        cos, sin = module(frames, rows, cols)
        for part, expected in (("cos", cos), ("sin", sin)):
            assert np.array_equal(
                _table(preset, "diffusers", part, grid=f"{frames}x{rows}x{cols}"), expected
            ), part
    np.save(tmp_path / "t.npy", module(3, 7, 9)[1])
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["grid"] == "3x7x9"


def test_complex128_tables_as_float64_are_the_modules(cli, tmp_path):
    """AnyFlow's complex128 table and Wan-Animate 2's rope_params (which the models apply in
    float64): --dtype float64 is their real and imaginary parts, every bit; compare names the
    float64 table."""
    from diffusers.models.transformers.transformer_anyflow import AnyFlowRotaryPosEmbed
    from diffusers.models.transformers.transformer_wan_animate_2 import rope_params

    frames, rows, cols = 3, 6, 8
    table = AnyFlowRotaryPosEmbed(128, (1, 2, 2), 1024)._forward_full_frame(
        frames, rows, cols, torch.device("cpu")
    )
    table = table.reshape(-1, 64)
    assert table.dtype == torch.complex128
    # Wan-Animate 2: each axis's rope_params(512, its dim) indexed by the grid
    axes = [rope_params(512, dim) for dim in (44, 42, 42)]
    grid = torch.cartesian_prod(*(torch.arange(n) for n in (frames, rows, cols)))
    animate = torch.cat([axes[a][grid[:, a]] for a in range(3)], dim=1)
    assert torch.equal(animate, table)
    for part, expected in (("cos", table.real), ("sin", table.imag)):
        built = pe_cli.build(
            preset="wan-complex",
            grid=f"{frames}x{rows}x{cols}",
            part=part,
            variant="diffusers",
            dtype="float64",
        ).numpy()
        assert built.dtype == np.float64 and np.array_equal(built, expected.numpy()), part
    np.save(tmp_path / "t.npy", table.imag.numpy())
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["variant"] == "diffusers"
        and best["spec"]["dtype"] == "float64"
    )


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


def _bria(rows, cols, text):  # its own copy of get_1d_rotary_pos_embed
    from diffusers.models.transformers.transformer_bria import BriaEmbedND
    from diffusers.pipelines.bria.pipeline_bria import BriaPipeline

    image = BriaPipeline._prepare_latent_image_ids(1, rows, cols, "cpu", torch.float32).reshape(
        -1, 3
    )
    return _text_and_image(BriaEmbedND(10000, [16, 56, 56]), torch.zeros(text, 3), image)


def _bria_fibo(rows, cols, text):
    from diffusers.models.transformers.transformer_bria_fibo import BriaFiboEmbedND
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline

    image = FluxPipeline._prepare_latent_image_ids(1, rows, cols, "cpu", torch.float32)
    return _text_and_image(BriaFiboEmbedND(10000, [16, 56, 56]), torch.zeros(text, 3), image)


def _bria_fibo2(
    rows, cols, text
):  # Z-Image's embedder: gist tokens at (1 + k, 0, 0), the image at 513
    from diffusers.models.transformers.transformer_bria_fibo2 import (
        BriaFibo2Transformer2DModel,
        RopeEmbedder,
    )

    embed = RopeEmbedder(theta=256.0, axes_dims=(32, 48, 48), axes_lens=(2048, 512, 512))
    grid = BriaFibo2Transformer2DModel.create_coordinate_grid
    table = torch.cat(
        [
            embed(grid((text, 1, 1), (1, 0, 0)).flatten(0, 2)),
            embed(grid((1, rows, cols), (text + 1, 0, 0)).flatten(0, 2)),
        ]
    )
    return table.real.numpy(), table.imag.numpy()


COPIES = [("flux", 128, _bria), ("flux", 128, _bria_fibo), ("z-image", 512, _bria_fibo2)]


@pytest.mark.parametrize("preset, text, module", COPIES, ids=["bria", "bria-fibo", "bria-fibo2"])
def test_copies_of_preset_modules_bit_for_bit(preset, text, module):
    cos, sin = module(16, 16, text)
    for part, expected in (("cos", cos), ("sin", sin)):
        assert np.array_equal(
            _table(preset, "diffusers", part, grid="16x16", text_tokens=text), expected
        )


def _one_axis(name):
    """The 1-D audio tables: (module's (cos, sin) at 300 positions, pe-cli's spec keywords)."""
    if name == "ace-step":
        from diffusers.models.transformers.ace_step_transformer import _ace_step_rotary_freqs

        return _ace_step_rotary_freqs(300, 128, 1000000.0, "cpu", torch.float32), dict(
            d_model=128, base=1000000.0
        )
    if name == "longcat-audio":
        from diffusers.models.transformers.transformer_longcat_audio_dit import (
            AudioDiTRotaryEmbedding,
        )

        return AudioDiTRotaryEmbedding(64, 2048, base=100000.0)(torch.zeros(1, 300, 8), 300), dict(
            d_model=64, base=100000.0
        )
    from diffusers.models.transformers.transformer_stable_audio3 import StableAudio3RotaryEmbedding

    angles = StableAudio3RotaryEmbedding(32)(
        300, "cpu"
    ).float()  # the angles; the attention takes cos, sin
    return (angles.cos(), angles.sin()), dict(d_model=32, base=10000.0)


@pytest.mark.parametrize("name", ["ace-step", "longcat-audio", "stable-audio-3"])
@pytest.mark.parametrize("variant", ["hf-rope", "diffusers"])
def test_audio_tables_are_1d_rope_bit_for_bit(name, variant):
    (cos, sin), keywords = _one_axis(name)
    for part, expected in (("cos", cos), ("sin", sin)):
        table = pe_cli.build(
            family="rope", seq_len=300, convention="half", variant=variant, part=part, **keywords
        )
        assert np.array_equal(table.numpy(), expected.reshape(300, -1).numpy())


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


def test_ltx2_convention_half_is_refused(cli):
    code, _, err = cli("generate", "--preset", "ltx2", "--grid", "1x1x1", "--convention", "half")
    assert code == 2 and "interleaved (or once each: --convention single), not half" in err


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


@pytest.mark.parametrize(
    "preset, part", [("hidream", "cos"), ("hidream", "rotation"), ("ernie-image", "sin")]
)
def test_one_token_tables_of_text_after_layouts(cli, tmp_path, preset, part):
    """A single row of a layout whose text follows the grid has no tail to read text from: it is
    the grid's one token (it crashed compare)."""
    np.save(tmp_path / "t.npy", _table(preset, "diffusers", part, grid="1x1"))
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0 and "Traceback" not in err and json.loads(out)["candidates"]


# Pooled history tables (--rope pool): FramePack's and Helios's cos and sin averaged over blocks.


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


def test_lumina2_padded_captions_are_the_module_bit_for_bit(cli, tmp_path):
    """Lumina2RotaryPosEmbed's cap_freqs_cis for the shorter of two prompts (7 of 20 tokens):
    its captions at (k, 0, 0), then 13 rows of complex zeros; compare names it with them as
    --padding-rows. The exact table's token rows are the unpadded table's."""
    from diffusers.models.transformers.transformer_lumina2 import Lumina2RotaryPosEmbed

    mask = torch.zeros(2, 20, dtype=torch.bool)
    mask[0, :7], mask[1, :] = True, True
    _, captions, *_ = Lumina2RotaryPosEmbed(10000, [32, 32, 32], (300, 512, 512), 2)(
        torch.zeros(2, 16, 8, 12), mask
    )
    for part, expected in (("cos", captions[0].real), ("sin", captions[0].imag)):
        table = pe_cli.build(
            preset="lumina2",
            ids="7*0:7,0,0",
            padding_rows=13,
            part=part,
            dtype="float64",
            variant="diffusers",
        ).numpy()
        assert np.array_equal(table, expected.numpy()), part
        exact = pe_cli.build(preset="lumina2", ids="7*0:7,0,0", padding_rows=13, part=part).numpy()
        unpadded = pe_cli.build(preset="lumina2", ids="7*0:7,0,0", part=part).numpy()
        assert (
            exact.shape == (20, 48) and np.array_equal(exact[:7], unpadded) and not exact[7:].any()
        ), part
    np.save(tmp_path / "t.npy", captions[0].real.numpy())
    best = json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["candidates"][0]
    assert (
        best["differing"] == 0
        and best["spec"]["padding_rows"] == 13
        and best["spec"]["axes"] == "lumina2"
    )


def test_padding_rows_need_a_split_layout(cli):
    code, _, err = cli("generate", "--family", "rope", "-d", "64", "--padding-rows", "3")
    assert code == 2 and "--padding-rows follows a diffusers multi-axis table's tokens" in err
    code, _, err = cli(
        "generate",
        "--preset",
        "lumina2",
        "--ids",
        "4*0:4,0,0",
        "--padding-rows",
        "3",
        "--variant",
        "hf-rope",
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err


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
                "fps=29.97",
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
