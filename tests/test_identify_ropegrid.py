"""compare FILE on multi-axis RoPE tables (issue 30): transformers' M-RoPE and vision layouts,
diffusers' models at other head dims and frequency dtypes, pixel-style frequencies; each named
bit for bit, its printed command and its --json spec rebuilding the file byte for byte; and the
reasons given for the tables no layout explains."""

import json
import shlex

import mpmath
import numpy as np
import pytest

import pe_cli


def _compare(cli, path) -> dict:
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    return json.loads(out)


def _named_and_rebuilt(cli, tmp_path, table, name="t.npy") -> dict:
    """compare FILE's best candidate, bit for bit, after checking that the generate command it
    prints and the spec its --json gives both rebuild FILE byte for byte."""
    path = tmp_path / name
    np.save(path, table)
    found = _compare(cli, path)
    best = found["candidates"][0]
    assert found["explained"] and best["differing"] == 0 and best["confirmed"], found["notes"]
    words = shlex.split(found["command"])
    assert words[:2] == ["pe-cli", "generate"]
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy", "--force")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == path.read_bytes()
    spec = {**best["spec"], "dtype": best["dtype"]}
    rebuilt = pe_cli.build(pe_cli.TableSpec(**spec)).numpy()
    assert rebuilt.tobytes() == table.tobytes()
    return best


def _generated(cli, tmp_path, *options) -> np.ndarray:
    code, _, err = cli(
        "generate", "--family", "rope", *options, "-o", tmp_path / "made.npy", "--force"
    )
    assert code == 0, err
    return np.load(tmp_path / "made.npy")


# transformers' layouts: (options, the layout compare must name)
TRANSFORMERS = [
    ("--rope-axes axial --d-model 64 --grid 16x16", "axial"),
    ("--rope-axes axial --d-model 80 --grid 8x12 --merge 2 --variant hf-rope", "axial"),
    ("--rope-axes axial-gemma --d-model 72 --grid 12x10 --base 100 --part sin", "axial-gemma"),
    ("--rope-axes axial-gemma --d-model 64 --grid 6x9 --variant hf-rope", "axial-gemma"),
    (
        "--rope-axes axial-sam --d-model 64 --grid 10x7 --variant hf-rope --convention interleaved",
        "axial-sam",
    ),
    ("--rope-axes axial-sam --d-model 32 --grid 5x9 --part sin", "axial-sam"),
    (
        "--rope-axes mrope-interleaved --rope mrope_section=24,20,20 --d-model 128 --grid 2x8x8",
        "mrope-interleaved",
    ),
    (
        "--rope-axes mrope-interleaved --rope mrope_section=24,20,20 --d-model 128 --grid 3x6x8 "
        "--offset 5 --variant hf-rope",
        "mrope-interleaved",
    ),
    (
        "--rope-axes mrope --rope mrope_section=16,24,24 --d-model 128 --grid 2x5x6 --offset 3",
        "mrope",
    ),
    ("--rope-axes axial-column-first --d-model 48 --grid 7x5 --base 1000", "axial-column-first"),
    ("--rope-axes axial-kimi --d-model 64 --grid 4x6 --variant hf-rope", "axial-kimi"),
    # over 2^21 elements: read from the first rows and the last, confirmed over every row
    ("--rope-axes axial --d-model 64 --grid 192x192 --merge 2 --variant hf-rope", "axial"),
]


@pytest.mark.parametrize("options, layout", TRANSFORMERS)
def test_transformers_layouts_are_named_and_rebuilt(cli, tmp_path, options, layout):
    table = _generated(cli, tmp_path, *shlex.split(options))
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["axes"] == layout or best["name"].startswith("preset")


# ---------------------------------------------------------------------------------------------
# diffusers' tables, from diffusers 0.42.1 itself


@pytest.mark.parametrize("dim, grid", [(128, (3, 8, 8)), (96, (2, 6, 10))])
def test_ltx_video_at_another_head_dim_is_the_module(cli, tmp_path, dim, grid):
    """LTXVideoRotaryPosEmbed(dim) as LTXPipeline calls it, rope_interpolation_scale (8/25, 32,
    32): its layout at the module's own dim, axes_dim as the module splits it."""
    import torch
    from diffusers.models.transformers.transformer_ltx import LTXVideoRotaryPosEmbed

    frames, rows, cols = grid
    cos, sin = LTXVideoRotaryPosEmbed(dim)(
        torch.empty(1, frames * rows * cols, dim),
        frames,
        rows,
        cols,
        rope_interpolation_scale=(8 / 25, 32, 32),
    )
    for table in (cos[0].numpy(), sin[0].numpy()):
        best = _named_and_rebuilt(cli, tmp_path, table)
        assert best["spec"]["axes"] == "ltx-video" and best["spec"]["d_model"] == dim
        assert best["spec"]["grid"] == "x".join(map(str, grid))


@pytest.mark.parametrize("columns", [slice(0, 44), slice(44, 86)])
def test_wan_per_axis_tables_of_float64_frequencies_are_the_module(cli, tmp_path, columns):
    """WanRotaryPosEmbed's buffers hold each axis's get_1d_rotary_pos_embed(float64 frequencies)
    over 1024 positions side by side: one axis's columns are a 1-D table in float64 frequencies,
    which the float32-frequency candidates miss by an ulp here and there."""
    from diffusers.models.transformers.transformer_wan import WanRotaryPosEmbed

    module = WanRotaryPosEmbed(128, (1, 2, 2), 1024)
    cos = module.freqs_cos[:, columns].numpy()
    exact = pe_cli.build(
        family="rope", d_model=cos.shape[1], seq_len=1024, convention="interleaved"
    ).numpy()
    best = _named_and_rebuilt(cli, tmp_path, cos)
    # where the table is not the correctly rounded one, it is named as float64 frequencies'
    assert np.array_equal(cos, exact) or best["spec"]["freqs_dtype"] == "float64"
    _named_and_rebuilt(cli, tmp_path, module.freqs_sin[:, columns].numpy())


def test_wan_at_another_head_dim_is_the_module(cli, tmp_path):
    """WanRotaryPosEmbed(attention_head_dim 64): its axes 24, 20, 20 read from the width."""
    import torch
    from diffusers.models.transformers.transformer_wan import WanRotaryPosEmbed

    cos, sin = WanRotaryPosEmbed(64, (1, 2, 2), 1024)(torch.empty(1, 16, 3, 8, 10))
    for table in (cos[0, :, 0].numpy(), sin[0, :, 0].numpy()):
        best = _named_and_rebuilt(cli, tmp_path, table)
        assert best["spec"]["d_model"] == 64 and best["spec"]["grid"] == "3x4x5"


def test_flux_in_float32_frequencies_is_the_module(cli, tmp_path, monkeypatch):
    """FluxPosEmbed where float64 is not supported (Apple's MPS): float32 frequencies, the
    dtype diffusers' maybe_adjust_dtype_for_device picks there."""
    import torch
    from diffusers.models.transformers import transformer_flux
    from diffusers.pipelines.flux.pipeline_flux import FluxPipeline

    monkeypatch.setattr(
        transformer_flux, "maybe_adjust_dtype_for_device", lambda d, _: torch.float32
    )
    ids = torch.cat(
        [
            torch.zeros(5, 3, dtype=torch.bfloat16),
            FluxPipeline._prepare_latent_image_ids(1, 6, 7, "cpu", torch.bfloat16),
        ]
    )
    cos, sin = transformer_flux.FluxPosEmbed(theta=10000, axes_dim=[16, 56, 56])(ids)
    for table in (cos.numpy(), sin.numpy()):
        best = _named_and_rebuilt(cli, tmp_path, table)
        assert best["spec"]["freqs_dtype"] == "float32" and best["spec"]["variant"] == "diffusers"


# ---------------------------------------------------------------------------------------------
# pixel-style frequencies (--rope-axes pixel)


def _pixel_value(part, position, i, n, max_freq):
    """rotary-embedding-torch's pixel law in mpmath: frequency i of n, pi * linspace(1, max_freq
    / 2, n), at a position in [-1, 1]."""
    top = mpmath.mpf(max_freq) / 2
    turns = position * (1 + ((top - 1) * i / (n - 1) if n > 1 else 0))  # the angle over pi
    if part == "angle":
        return turns * mpmath.pi
    return (mpmath.cospi if part == "cos" else mpmath.sinpi)(turns)  # sin(-pi) is 0 exactly


@pytest.mark.parametrize("part", ["cos", "sin", "angle"])
@pytest.mark.parametrize(
    "axes_dim, grid, max_freq",
    [((12, 8), (4, 7), 256.0), ((6,), (5,), 10.0), ((4, 4, 2), (2, 3, 1), 7.5)],
)
def test_pixel_tables_are_correctly_rounded(part, axes_dim, grid, max_freq):
    """Every element against mpmath: each axis's block of adjacent column pairs, positions
    -1 + 2k / (size - 1) (one token: -1), tokens row-major."""
    from itertools import product

    from tests.reference import round_to

    table = pe_cli.build(
        family="rope",
        axes="pixel",
        d_model=sum(axes_dim),
        rope={"axes_dim": ",".join(map(str, axes_dim)), "max_freq": max_freq},
        grid="x".join(map(str, grid)),
        part=part,
    ).numpy()
    assert table.shape == (int(np.prod(grid)), sum(axes_dim))
    with mpmath.workprec(120):
        for row, token in enumerate(product(*[range(size) for size in grid])):
            column = 0
            for dim, k, size in zip(axes_dim, token, grid):
                position = mpmath.mpf(2 * k) / (size - 1) - 1 if size > 1 else mpmath.mpf(-1)
                for i in range(dim // 2):
                    truth = round_to(_pixel_value(part, position, i, dim // 2, max_freq), "float32")
                    assert table[row, column] == table[row, column + 1] == truth, (row, column)
                    column += 2


@pytest.mark.parametrize(
    "options",
    [
        "--rope axes_dim=32,32 --d-model 64 --grid 12x10",
        "--rope axes_dim=32,32 --d-model 64 --grid 9x9 --part sin --rope max_freq=256",
        "--rope axes_dim=24,24,24 --d-model 72 --grid 3x5x4 --part sin",
        "--rope axes_dim=16 --d-model 16 --grid 33 --part angle",
    ],
)
def test_pixel_tables_are_named_and_rebuilt(cli, tmp_path, options):
    table = _generated(cli, tmp_path, "--rope-axes", "pixel", *shlex.split(options))
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["axes"] == "pixel" and best["spec"]["variant"] == "exact"


@pytest.mark.parametrize(
    "dim, grid, max_freq", [(32, (12, 10), 10), (16, (7,), 256), (24, (3, 5, 4), 10)]
)
def test_pixel_variant_is_rotary_embedding_torch_bit_for_bit(cli, tmp_path, dim, grid, max_freq):
    """get_axial_freqs of RotaryEmbedding(freqs_for="pixel"), and the cos and sin
    apply_rotary_emb takes of it: --variant rotary-embedding-torch, and compare FILE names it."""
    from rotary_embedding_torch import RotaryEmbedding

    module = RotaryEmbedding(dim, freqs_for="pixel", max_freq=max_freq)
    angles = module.get_axial_freqs(*grid).reshape(-1, dim * len(grid))
    keywords = dict(
        family="rope",
        axes="pixel",
        variant="rotary-embedding-torch",
        d_model=dim * len(grid),
        rope={"axes_dim": ",".join([str(dim)] * len(grid)), "max_freq": max_freq},
        grid="x".join(map(str, grid)),
    )
    for part, table in (("angle", angles), ("cos", angles.cos()), ("sin", angles.sin())):
        assert np.array_equal(pe_cli.build(part=part, **keywords).numpy(), table.numpy())
    best = _named_and_rebuilt(cli, tmp_path, angles.cos().numpy())
    assert best["name"] == "library rotary-embedding-torch"


def test_pixel_layout_is_refused_by_diffusers_and_its_key_elsewhere(cli):
    code, _, err = cli(
        "generate",
        "--family",
        "rope",
        "--rope-axes",
        "pixel",
        "--rope",
        "axes_dim=8,8",
        "-d",
        "16",
        "--grid",
        "2x2",
        "--variant",
        "diffusers",
        "-o",
        "-",
    )
    assert code == 2 and "--variant rotary-embedding-torch" in err and "Traceback" not in err
    code, _, err = cli(
        "generate",
        "--family",
        "rope",
        "--preset",
        "flux",
        "--grid",
        "2x2",
        "--rope",
        "max_freq=10",
        "-o",
        "-",
    )
    assert code == 2 and "max_freq is pixel-style RoPE's" in err


# ---------------------------------------------------------------------------------------------
# what compare says of a multi-axis table it cannot name

AXES_NOTE = "position axes"


def _notes(cli, tmp_path, table) -> tuple[dict, str]:
    np.save(tmp_path / "t.npy", table)
    found = _compare(cli, tmp_path / "t.npy")
    return found, " ".join(found["notes"])


def _axial(**more) -> np.ndarray:
    return pe_cli.build(
        family="rope", **{"axes": "axial", "d_model": 64, "grid": "16x16", **more}
    ).numpy()


def test_a_grid_short_of_a_token_reads_as_whole_positions_and_no_grid(cli, tmp_path):
    """Gemma 4's 16x16 vision grid less its last token: every position whole, but 255 tokens
    make no grid (and no preset's runs of tokens put them there either)."""
    table = _axial(axes="axial-gemma")[:-1]
    found, said = _notes(cli, tmp_path, table)
    assert not found["explained"]
    assert (
        "its columns follow 2 position axes (32 and 32 columns, first moving at rows 1 and 16)"
        in said
    )
    assert (
        "as axial-gemma at base 10000, its positions are whole numbers but make no grid of its "
        "255 rows" in said
    )
    assert "scaling" not in said  # no 1-D reading of a multi-axis table


def test_a_grid_short_of_a_token_in_a_split_layouts_order_is_named_by_its_ids(cli, tmp_path):
    """Qwen-VL's row-major axial grid less its last token is CogView4's layout at its runs of
    tokens (--ids): a true bit-for-bit claim, rebuilt by its command."""
    best = _named_and_rebuilt(cli, tmp_path, _axial()[:-1])
    assert best["spec"]["ids"] == "0:15,0:16; 15,0:15"


def test_axes_of_two_bases_read_as_positions_that_are_not_whole(cli, tmp_path):
    """Rows at base 10000, columns at base 500: no one base puts both on whole positions."""
    table, other = _axial(), _axial(base=500.0)
    columns = [c for c in range(64) if c % 32 >= 16]
    table[:, columns] = other[:, columns]
    found, said = _notes(cli, tmp_path, table)
    assert not found["explained"]
    assert "2 position axes" in said and "its positions are not whole numbers" in said


def test_shuffled_tokens_are_not_named_and_say_why(cli, tmp_path):
    table = _axial()
    table[1:] = table[1:][np.random.default_rng(0).permutation(255)]
    found, said = _notes(cli, tmp_path, table)
    assert not found["explained"] and "its columns follow 2 position axes" in said


@pytest.mark.parametrize(
    "keywords",
    [
        dict(axes="axial", d_model=64, grid="16x16"),
        dict(preset="flux", grid="6x7", text_tokens=3),
        dict(d_model=64, seq_len=300),
        dict(
            axes="mrope-interleaved", d_model=128, grid="2x8x8", rope={"mrope_section": "24,20,20"}
        ),
    ],
)
def test_no_axes_note_where_the_table_is_named(cli, tmp_path, keywords):
    found, said = _notes(cli, tmp_path, pe_cli.build(family="rope", **keywords).numpy())
    assert found["explained"] and found["candidates"][0]["differing"] == 0
    assert AXES_NOTE not in said


def test_no_axes_note_for_a_grid_whose_columns_are_not_rotary_pairs(cli, tmp_path):
    """A 2-D sin-cos grid's columns follow two axes too, but come in no equal pairs: a table
    no rotary layout could make says nothing of rotary layouts (here one no family names)."""
    table = pe_cli.build(family="sincos2d", d_model=64, grid="16x16").numpy()
    table[:, ::2] *= np.float32(0.9)
    found, said = _notes(cli, tmp_path, table)
    assert not found["explained"] and AXES_NOTE not in said
