"""2-D sin-cos grids read back by `compare FILE` at any size: the grid is read from a few rows
and a long table's sample, and confirmed in one streamed pass. diffusers' own tables at their
real widths (PixArt-alpha at 1024 px, SD3's crop of its 192 x 192 grid) are named bit for bit,
with a --json spec and a printed generate command that rebuild them byte for byte; tables
built to defeat the reader get a reason that is true of them."""

import json
import shlex

import mpmath
import numpy as np
import pytest

import pe_cli
from pe_cli.analysis.identify import WHOLE_ELEMENTS
from tests.reference import round_to


def _compare(cli, tmp_path, table, name="grid.npy") -> tuple[dict, str]:
    """compare FILE's --json result and its text."""
    path = tmp_path / name
    np.save(path, table)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    code, text, err = cli("compare", path)
    assert code == 0, err
    return json.loads(out), text.decode()


def _named_and_rebuilt(cli, tmp_path, table) -> dict:
    """The best candidate of compare FILE, bit for bit on every row, after checking that the
    generate command it prints and its --json spec each rebuild FILE byte for byte."""
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert found["explained"] and best["differing"] == 0 and best["confirmed"], text
    printed = text.split("rebuilt by:\n", 1)[1].split("\n")
    folded = printed[: next(k for k, line in enumerate(printed) if not line.endswith(" \\")) + 1]
    words = shlex.split(" ".join(line.removesuffix(" \\") for line in folded))
    assert words[:2] == ["pe-cli", "generate"] and shlex.split(found["command"]) == words
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == (tmp_path / "grid.npy").read_bytes()
    # an exact candidate's spec is scored in float64: the table's dtype rebuilds it (as the
    # printed command says)
    spec = pe_cli.TableSpec(**{**best["spec"], "dtype": "float32", "shape": "2d"})
    assert np.array_equal(pe_cli.build(spec).numpy(), table)
    return best


def _sampled(table) -> bool:
    return table.size > WHOLE_ELEMENTS  # past it, identification scores a sample of rows


def test_pixart_alpha_1024_is_named_at_its_real_width(cli, tmp_path):
    from diffusers.models.embeddings import PatchEmbed

    # PixArt-alpha 1024's PatchEmbed: a 128 x 128 latent in 2 x 2 patches, 1152 wide,
    # interpolation_scale 2 (base_size 64, the grid's own size)
    module = PatchEmbed(
        height=128, width=128, patch_size=2, in_channels=4, embed_dim=1152, interpolation_scale=2
    )
    table = module.pos_embed[0].numpy()
    assert table.shape == (4096, 1152) and _sampled(table)
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["grid"] == [64, 64] and best["spec"]["convention"] == "mae"
    assert best["spec"]["base_size"] == 64 and best["spec"]["interpolation_scale"] == 2.0


@pytest.mark.parametrize("rows, cols", [(64, 64), (48, 80)])
def test_sd3_crop_is_named_at_its_real_width(cli, tmp_path, rows, cols):
    from diffusers.models.embeddings import PatchEmbed

    # SD3 medium's PatchEmbed: pos_embed_max_size 192, base_size 64, 1536 wide; a 1024 x 1024
    # image and a 768 x 1280 one take the centre of its grid
    module = PatchEmbed(
        height=128, width=128, patch_size=2, in_channels=16, embed_dim=1536, pos_embed_max_size=192
    )
    table = module.cropped_pos_embed(2 * rows, 2 * cols)[0].numpy()
    assert _sampled(table)
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["name"] == "library diffusers"
    assert best["spec"]["grid"] == [rows, cols]
    assert best["spec"]["pos_embed_max_size"] == 192 and best["spec"]["base_size"] == 64


def _mae(rows: int, cols: int, d: int, base: float = 10000.0, order=None) -> np.ndarray:
    """MAE's [sin x | cos x | sin y | cos y] over a grid, in numpy float64 rounded to float32
    (the table to identify, made apart from pe-cli), its patches in `order` if given."""
    n = d // 4
    frequencies = base ** (-np.arange(n) / n)
    y, x = np.divmod(np.arange(rows * cols), cols)
    if order is not None:
        y, x = y[order], x[order]
    ax, ay = np.outer(x, frequencies), np.outer(y, frequencies)
    return np.concatenate([np.sin(ax), np.cos(ax), np.sin(ay), np.cos(ay)], axis=1).astype(
        np.float32
    )


def _exact(y: int, x: int, column: int, d: int, base: float = 10000.0) -> mpmath.mpf:
    """MAE's table at patch (y, x), column `column`, in mpmath."""
    n = d // 4
    block, i = divmod(column, n)
    angle = (x if block < 2 else y) * mpmath.power(base, -mpmath.mpf(i) / n)
    return (mpmath.sin if block % 2 == 0 else mpmath.cos)(angle)


def test_a_grid_at_another_base_is_read_with_its_base(cli, tmp_path):
    table = _mae(6, 10, 32, base=100.0)
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert found["explained"], text
    assert best["name"] == "sincos2d mae, grid 6x10" and best["spec"]["base"] == 100.0
    assert "grid" not in " ".join(found["notes"])  # the grid was named: nothing to explain


def test_a_grid_off_in_one_value_is_named_with_it(cli, tmp_path):
    d, table = 32, _mae(8, 8, 32)
    table[27, 20] += np.float32(0.05)  # patch (3, 3), sin y at the fifth frequency
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert best["name"] == "sincos2d mae, grid 8x8" and best["differing"] == 1, text
    with mpmath.workprec(128):
        off = abs(mpmath.mpf(float(table[27, 20])) - _exact(3, 3, 20, d))
    assert abs(float(off) - 0.05) < 1e-7
    headline = " ".join(text.split("candidates")[0].split())
    assert "bit for bit (float32) except column 20 (1 of its elements differ" in headline, text


def test_a_grid_off_in_many_values_says_what_was_read_and_how_far(cli, tmp_path):
    d, table = 32, _mae(8, 8, 32)
    at = [(8 * k + 3, 20 + k % 3) for k in range(8)]  # 8 rows, 3 columns: not a few
    for r, c in at:  # sin y at the fifth, sixth and seventh frequency
        table[r, c] += np.float32(0.05)
    found, text = _compare(cli, tmp_path, table)
    assert not found["explained"] and not found["candidates"], text
    with mpmath.workprec(128):
        off = max(abs(mpmath.mpf(float(table[r, c])) - _exact(r // 8, r % 8, c, d)) for r, c in at)
    assert abs(float(off) - 0.05) < 1e-6
    grid = [n for n in found["notes"] if "grid" in n]  # (the 1-D rotary reader's beside it)
    assert grid == [
        "read as a 2-D grid (8 x 8 patches in the mae layout), but the nearest 2-D sin-cos "
        "table tried, sincos2d mae with base 10000, grid 8 x 8 patches, is off by up to "
        f"{float(off):.3g}"
    ]


def test_shuffled_patches_are_no_grid(cli, tmp_path):
    table = _mae(8, 8, 32, order=np.random.default_rng(0).permutation(64))
    found, text = _compare(cli, tmp_path, table)
    assert not found["explained"] and not found["candidates"], text
    grid = [n for n in found["notes"] if "grid" in n]  # (the 1-D rotary reader's beside it)
    assert len(grid) == 1
    assert grid[0].startswith(
        "its rows have the norm of sin/cos pairs, sqrt(d/2), but no 2-D patch grid was read"
    )


def test_patches_in_column_order_are_the_other_layout(cli, tmp_path):
    # x slowest: MAE's [sin x | cos x | sin y | cos y] with x the row coordinate is timm's
    # interleaved [sin y | cos y | sin x | cos x] of the 8 x 6 grid (an honest naming)
    order = np.arange(48).reshape(6, 8).T.reshape(-1)
    table = _mae(6, 8, 32, order=order)
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert found["explained"] and best["spec"]["convention"] == "timm-interleaved", text
    assert best["spec"]["grid"] == [8, 6]


def test_rows_that_are_no_sin_cos_pairs_get_no_grid_note(cli, tmp_path):
    table = np.random.default_rng(1).uniform(-1, 1, (64, 32)).astype(np.float32)
    found, _ = _compare(cli, tmp_path, table)
    assert not any("grid" in note for note in found["notes"])


def test_a_long_grid_off_beyond_its_sample_is_not_bit_for_bit(cli, tmp_path):
    """A 64 x 64 grid 1152 wide, one value off by 1e-3 in a row the sample does not score:
    the streamed pass finds it, and the verdict says by how much."""
    d = 1152
    table = _mae(64, 64, d)
    assert _sampled(table)
    row, column = 3000, 700  # patch (46, 56), sin y at frequency 124
    table[row, column] += np.float32(1e-3)
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert best["differing"] >= 1 and best["confirmed"] and "bit for bit" not in text, text
    assert found["command"] is None and best["spec"]["grid"] == [64, 64]
    exact = _exact(*divmod(row, 64), column, d)
    with mpmath.workprec(128):
        off = float(abs(mpmath.mpf(float(table[row, column])) - exact))
    assert best["max_abs"] == pytest.approx(off, rel=1e-6)
    assert round_to(exact, "float32") != table[row, column]


@pytest.mark.parametrize("grid, d", [((8, 24, 24), 480), ((6, 32, 36), 382)])
def test_a_long_3d_grid_is_read_from_its_sample(cli, tmp_path, grid, d):
    # positional-encodings' PositionalEncoding3D over more than 2^21 elements (a sampled table)
    import torch
    from positional_encodings.torch_encodings import PositionalEncoding3D

    table = PositionalEncoding3D(d)(torch.zeros(1, *grid, d))[0].reshape(-1, d).numpy()
    assert _sampled(table)
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert found["explained"] and best["differing"] == 0 and best["confirmed"], text
    assert best["spec"]["grid"] == list(grid) and best["spec"]["convention"] == "interleaved"
    rebuilt = pe_cli.build(pe_cli.TableSpec(**{**best["spec"], "shape": "2d"})).numpy()
    assert rebuilt.tobytes() == table.tobytes()


def test_a_long_grid_upside_down_says_what_was_read_on_its_sample(cli, tmp_path):
    """A 64 x 64 grid 1152 wide with its rows of patches in reverse order: the grid's shape is
    read from its sample, and the note's distance is one the table has."""
    d = 1152
    order = np.arange(4096).reshape(64, 64)[::-1].reshape(-1)
    table = _mae(64, 64, d, order=order)
    assert _sampled(table)
    found, text = _compare(cli, tmp_path, table)
    assert not found["explained"] and not found["candidates"], text
    (note,) = [n for n in found["notes"] if n.startswith("read as a 2-D grid")]
    assert note.startswith("read as a 2-D grid (64 x 64 patches in the mae layout)")
    assert note.endswith(" on the rows scored")
    distance = float(note.split("off by up to ")[1].split()[0])
    # at most what any row of the table is off from the upright grid's (made apart from
    # pe-cli), as the note writes it (3 digits)
    upright = _mae(64, 64, d).astype(np.float64)
    assert 1 < distance <= float(f"{np.max(np.abs(table - upright)):.3g}")


def test_a_long_grid_broken_in_one_column_is_named_with_it(cli, tmp_path):
    """Past WHOLE_ELEMENTS the candidates are scored on a sample and the best checked over every
    row: the exact table, checked so, is named with its exception before the library variants
    measured on the sample alone (whose errors, over fewer rows, read a little lower)."""
    spec = pe_cli.TableSpec(family="sincos2d", grid="48x48", d_model=1024)
    table = pe_cli.build(spec).numpy().reshape(spec.rows, spec.cols)
    assert table.size > WHOLE_ELEMENTS
    table[:, 37] = 0.5
    found, text = _compare(cli, tmp_path, table)
    best = found["candidates"][0]
    assert best["name"] == "sincos2d mae, grid 48x48" and best["confirmed"], text
    assert "bit for bit (float32) except column 37" in " ".join(text.split()), text
    assert not [n for n in found["notes"] if "sinusoids" in n or "constant" in n], text
