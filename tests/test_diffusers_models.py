"""More diffusers transformer files' RoPE modules, each with the ids its pipeline (or forward)
makes: image models (FLUX.3, Krea 2, ERNIE-Image, NucleusMoE-Image, Ovis-Image, LongCat-Image),
video models (Helios, AnyFlow, Motif-Video, SANA-WM), copies of a preset's module (Bria) and the
1-D audio tables, against the presets bit for bit and named by compare."""

import json

import numpy as np
import pytest
import torch

import pe_cli
from tests.diffusers_modules import _table


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
