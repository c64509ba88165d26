"""diffusers' rotary modules and functions called the way their pipelines call them, each
building the table of a pe-cli preset (CASES: a preset, its tokens as pe-cli options, and the
module's table), for the test_diffusers_*.py files."""

import mpmath
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


def _exact_value(position, theta, dim, i, part):
    angle = mpmath.mpf(position) * mpmath.power(theta, -mpmath.mpf(2 * i) / dim)
    return round_to(mpmath.cos(angle) if part == "cos" else mpmath.sin(angle), "float32")
