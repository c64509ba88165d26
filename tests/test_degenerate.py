"""Tables nothing turns in (a buffer saved before it was filled: every value 1 or 0, or every
row the same), and tables with NaN or inf: compare FILE says what they are and claims no table,
names no candidate and prints no command, in every dtype and at every size; and where only the
first rows are alike, the rest of the table is read."""

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

ROWS_ALIKE = "every column holds one value at all"
CONSTANT = "values is"
CLAIMED = "no positional table is claimed"


def _saved(tmp_path, values: np.ndarray, dtype: str):
    if dtype == "bfloat16":
        path = tmp_path / "t.safetensors"
        save_file({"t": torch.from_numpy(np.ascontiguousarray(values)).to(torch.bfloat16)}, path)
        return path
    path = tmp_path / "t.npy"
    np.save(path, values.astype(dtype))
    return path


def _claims_nothing(cli, path, said: str):
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["candidates"] == [] and found["command"] is None and not found["explained"]
    assert any(said in note and CLAIMED in note for note in found["notes"]), found["notes"]
    code, out, err = cli("compare", path)
    text = " ".join(out.decode().split())
    assert code == 0 and "matches" not in text and "pe-cli generate" not in text
    assert "no built-in convention explains this table" in text and said in text


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize(
    "shape, value",
    [
        ((16, 64), 1.0),
        ((16, 64), 0.0),
        ((1, 5), 0.0),
        ((5,), 0.0),
        ((64, 1), -0.5),
        ((2100, 1024), 1.0),
    ],
)
def test_a_constant_table_is_said_to_be_one(cli, tmp_path, dtype, shape, value):
    """The all-ones 16 x 64 table was 'preset cogvideox-1.5 ... bit for bit' with a rebuild
    command; a zero vector of 5 'preset ltx2-cross at head dim 10'."""
    path = _saved(tmp_path, np.full(shape, value), dtype)
    _claims_nothing(cli, path, f"{int(np.prod(shape)):,} {CONSTANT} {value:g}")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rows_all_alike_are_said_to_be(cli, tmp_path, dtype):
    row = np.cos(np.arange(64) * 0.37)
    path = _saved(tmp_path, np.tile(row, (16, 1)), dtype)
    _claims_nothing(cli, path, f"{ROWS_ALIKE} 16 positions: nothing turns")


def test_rows_alike_only_at_first_are_read_on(cli, tmp_path):
    """A table of more than 2**21 elements is fitted from its first 2048 rows: alike there,
    different after, it is not said to be a table where nothing turns."""
    values = np.ones((2100, 1024), dtype=np.float32)
    values[2099, 7] = 0.25
    path = tmp_path / "t.npy"
    np.save(path, values)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert not any(CLAIMED in note for note in notes)
    # what the fit read is said of the rows it read, never of all the table's
    assert not any(ROWS_ALIKE in note for note in notes)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_are_said_and_nothing_is_claimed(cli, tmp_path, bad):
    from pe_cli import build

    values = build(d_model=64, seq_len=32).numpy().copy()
    values[9, 13] = bad
    path = tmp_path / "t.npy"
    np.save(path, values)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["candidates"] == [] and found["command"] is None
    assert found["notes"] == [
        "it holds NaN or infinite values (the first at position 9, dimension 13), which no "
        "formula writes"
    ]


def test_a_table_that_turns_is_not_called_degenerate(cli, tmp_path):
    from pe_cli import build

    path = tmp_path / "t.npy"
    np.save(path, build(d_model=64, seq_len=16).numpy())
    code, out, err = cli("compare", path, "--json")
    found = json.loads(out)
    assert code == 0 and found["explained"] and not any(CLAIMED in n for n in found["notes"])


def _exact(d_model=512, seq_len=1024, **keywords):
    from pe_cli import build

    return build(d_model=d_model, seq_len=seq_len, **keywords).numpy().copy()


@pytest.mark.parametrize(
    "broken, said",
    [
        ({"columns": [37]}, "except column 37 (1024 of its elements differ"),
        ({"columns": [3, 300]}, "except columns 3, 300 (2048 of its elements differ"),
        ({"rows": [5]}, "except row 5 (512 of its elements differ"),
        ({"rows": [5, 6, 900]}, "except rows 5, 6, 900 (1536 of its elements differ"),
        # a prefix of zeros: row 0's sines are 0 already, its 256 cosines are not
        ({"rows": [0, 1, 2]}, "except rows 0, 1, 2 (1280 of its elements differ"),
    ],
)
def test_a_known_table_broken_in_a_few_places_is_named_with_them(cli, tmp_path, broken, said):
    """pe-cli's exact 1024 x 512 table with column 37 set to 0.5 was 'no built-in convention
    explains this table', with no candidate: it is the vaswani table but for that column. No
    command is said to rebuild it (it is not any table bit for bit)."""
    values = _exact()
    for j in broken.get("columns", []):
        values[:, j] = 0.5
    for p in broken.get("rows", []):
        values[p] = 0.0
    path = tmp_path / "t.npy"
    np.save(path, values)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["exceptions"] == broken and found["command"] is None and not found["explained"]
    assert found["candidates"][0]["name"] == "vaswani"
    code, out, err = cli("compare", path)
    text = " ".join(out.decode().split())
    assert f"t.npy: vaswani, base 10000, first position 0, bit for bit (float32) {said}" in text
    assert "rebuilt by" not in text and "matches" not in text


@pytest.mark.parametrize("k", [40, 100])
def test_a_table_broken_in_many_columns_is_not_called_the_table(cli, tmp_path, k):
    values = _exact()
    values[3, :] = 0.0
    values[:, 1 : 2 * k : 2] = 0.5  # k cos columns
    path = tmp_path / "t.npy"
    np.save(path, values)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["exceptions"] is None and not found["explained"]
    assert "bit for bit" not in " ".join(cli("compare", path)[1].decode().split())


def test_an_explained_table_has_no_exceptions(cli, tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, _exact(64, 32))
    code, out, err = cli("compare", path, "--json")
    found = json.loads(out)
    assert code == 0 and found["explained"] and found["exceptions"] is None


@pytest.mark.parametrize("rows", [1, 3, 7])
@pytest.mark.parametrize("family, d_model", [("sinusoidal", 512), ("rope", 128)])
def test_a_prefix_of_zero_rows_is_read_and_said(cli, tmp_path, family, d_model, rows):
    """A table whose first rows were zeroed: the RoPE reader's base from its two highest
    frequencies overflowed to inf there, and compare ended in 'unexpected InvalidOperation'.
    A sinusoidal table is named but for those rows (row 0 too: its cosines are 1); the RoPE
    reader reads a 1-D table from its first rows and names none, nor claims one."""
    values = _exact(d_model, 1024, family=family)
    values[:rows] = 0.0
    path = tmp_path / "t.npy"
    np.save(path, values)
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    found = json.loads(out)
    if family == "rope":
        assert not found["explained"] and found["command"] is None
        assert found["exceptions"] is None
    else:
        assert found["exceptions"] == {"rows": list(range(rows))}, found["notes"]


def test_tokens_of_no_grid_build_none():
    """Tokens whose distinct values per axis make a grid far larger than they are (a pooled
    reading of a table's rows that turn only late) are no row-major grid, said before any grid
    is built: 3000 tokens of 3 axes were a 3000**3 meshgrid (compare failed, out of memory)."""
    from pe_cli.families.rope.split import row_major

    tokens = np.stack([np.arange(3000.0)] * 3, axis=1)
    assert row_major(tokens) is None
    grid = np.stack(np.meshgrid(np.arange(3.0), np.arange(4.0), indexing="ij"), -1).reshape(-1, 2)
    assert [list(v) for v in row_major(grid)] == [[0, 1, 2], [0, 1, 2, 3]]
