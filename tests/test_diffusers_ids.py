"""Tokens at any positions (--ids: a positions file, or inline runs such as "0,0:8,0:12"):
the tables against mpmath and diffusers' modules, compare reading a table's tokens back as runs,
padding rows, and the refusals."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.diffusers_modules import _exact_value, _flux, _table


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
