"""What `compare A B` says: each finding where it holds, and none where it does not.

The tables that must get no finding are the ones issue 27 names: a rounding-only difference,
noise, one column changed, one row changed, for sinusoidal and rope tables in both layouts
(pairs side by side and in halves). The figures each sentence carries are measured here with
numpy on the same two files, not taken from pe-cli.
"""

import json
import re

import mpmath
import numpy as np
import pytest

import pe_cli

from . import figures

TABLES = {
    "sinusoidal vaswani": dict(convention="vaswani"),
    "sinusoidal concat": dict(convention="concat"),
    "rope half cos": dict(family="rope", convention="half", part="cos"),
    "rope interleaved cos": dict(family="rope", convention="interleaved", part="cos"),
    "rope half sin": dict(family="rope", convention="half", part="sin"),
    "rope interleaved sin": dict(family="rope", convention="interleaved", part="sin"),
}
ROWS, D = 600, 64


def _table(**params):
    return pe_cli.build(d_model=D, seq_len=ROWS, **params).numpy()


@pytest.fixture(autouse=True)
def _in_scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the files are named a.npy and b.npy in what compare says


def _compare(cli, tmp_path, a, b, *options):
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    code, out, err = cli("compare", "a.npy", "b.npy", "--json", *options)
    assert code == 0, err
    return json.loads(out)


def _ulp(values):
    return np.spacing(np.abs(values).astype(np.float32)).astype(np.float64)


def _rounding_only(table, rng):
    """Each element moved to a float32 neighbour at random where that stays within 1 ulp of
    its column's size (what another correct rounding of the same values gives)."""
    size = np.max(np.abs(table), axis=0)
    step = np.where(rng.random(table.shape) < 0.3, 1, 0).astype(np.float32)
    moved = np.nextafter(table, np.where(table > 0, np.float32(-2), np.float32(2)))
    return np.where((step > 0) & (np.abs(moved - table) <= _ulp(size)), moved, table)


def _noise(table, rng):
    return (table + rng.normal(0, 1e-7, table.shape)).astype(np.float32)


def _one_column(table, rng):
    out = table.copy()
    out[250:, 37] += np.float32(1e-3)
    return out


def _one_row(table, rng):
    out = table.copy()
    out[321] += np.float32(1e-3)
    return out


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("change", [_rounding_only, _noise, _one_column, _one_row])
def test_no_finding_where_none_holds(cli, tmp_path, name, change):
    table = _table(**TABLES[name])
    other = change(table, np.random.default_rng(5))
    got = _compare(cli, tmp_path, table, other)
    assert got["findings"] == [], got["findings"]
    error = np.abs(table.astype(np.float64) - other)
    assert got["max_abs"] == error.max()
    if change is _rounding_only:
        assert got["verdict"].startswith("equal within") and "rounding only" in got["verdict"]
        assert got["growth"] is None
    else:
        size = np.maximum(np.abs(table).max(axis=0), np.abs(other).max(axis=0))
        ulps = np.max(error.max(axis=0) / _ulp(size))
        assert got["max_ulps"] == ulps
        assert got["verdict"] == (
            f"differ by up to {error.max():.3g}, {ulps:.0f} ulp of float32 at the values' size"
            if ulps >= 10
            else f"differ by up to {error.max():.3g}, {ulps:.2g} ulp of float32 at the values' size"
        )
    if change is _noise:
        bands = [error[a:b].max() for a, b in [(1, 4), (4, 16), (16, 64), (64, 256), (256, 600)]]
        assert got["growth"] == (
            f"does not grow with position: between {min(bands):.3g} and {max(bands):.3g} in "
            "every band of positions"
        )
        first = np.flatnonzero(error)[0]
        assert got["where"][0].startswith(
            f"{np.count_nonzero(error)} of {error.size} elements differ, the first at position "
            f"{first // D}, dimension {first % D}"
        )
    if change is _one_column:
        assert got["growth"] is None
        assert got["where"][0] == (
            "they differ only in dimension 37 (at 350 positions, 250..599); every other "
            "dimension is bit for bit equal"
        )
    if change is _one_row:
        assert got["growth"] is None
        changed = np.count_nonzero(error[321])
        assert got["where"][0] == (
            f"they differ only at position 321 ({changed} elements); every other position is "
            "bit for bit equal"
        )
        assert got["where"][-1] == (
            "within 0.0001 up to position 320; beyond it first at position 321"
        )


def test_the_ulps_of_the_verdict_are_at_each_columns_size(cli, tmp_path):
    """Near a zero of sin an element's own ulp is tiny; the verdict counts the error in ulps
    of its column's largest value, as a person judges a table of values up to 1."""
    table = _table()
    other = _noise(table, np.random.default_rng(1))
    got = _compare(cli, tmp_path, table, other)
    error = np.abs(table.astype(np.float64) - other)
    size = np.maximum(np.abs(table).max(axis=0), np.abs(other).max(axis=0))
    assert got["max_ulps"] == np.max(error.max(axis=0) / _ulp(size))
    assert got["max_ulps"] < 200  # an element's own ulps here run to millions
    assert np.max(error / np.maximum(_ulp(table), _ulp(other))) > 1e5


# ------------------------------------------------------------------------ where a finding holds


@pytest.mark.parametrize(
    "family,side_by_side,halves,part",
    [
        ("sinusoidal", "vaswani", "concat", None),
        ("rope", "interleaved", "half", "cos"),
        ("rope", "interleaved", "half", "sin"),
    ],
)
def test_another_column_order_is_found_in_both_directions(
    cli, tmp_path, family, side_by_side, halves, part
):
    extra = {"family": family, **({"part": part} if part else {})}
    a = _table(convention=side_by_side, **extra)
    b = _table(convention=halves, **extra)
    got = _compare(cli, tmp_path, a, b)
    assert got["findings"] == [
        "same values in another column order: a.npy's columns 2i and 2i + 1 are b.npy's i "
        "and i + d/2 (a.npy pairs columns side by side, b.npy in halves); reordered, they are "
        "bit for bit equal"
    ]
    assert got["growth"] is None
    got = _compare(cli, tmp_path, b, a)
    assert "a.npy's columns i and i + d/2 are b.npy's 2i and 2i + 1" in got["findings"][0]


def test_a_library_in_another_layout_is_found_with_its_own_error(cli, tmp_path):
    a = pe_cli.build(
        d_model=D, seq_len=ROWS, family="rope", variant="hf-rope", convention="interleaved"
    ).numpy()
    b = _table(family="rope", convention="half", part="cos")
    got = _compare(cli, tmp_path, a, b)
    order = np.concatenate([np.arange(0, D, 2), np.arange(1, D, 2)])
    left = np.abs(a[:, order].astype(np.float64) - b).max()
    assert 0 < left < 1e-3
    assert got["findings"] == [
        "same values in another column order: a.npy's columns 2i and 2i + 1 are b.npy's i "
        f"and i + d/2 (a.npy pairs columns side by side, b.npy in halves); reordered, they "
        f"differ by at most {left:.3g}"
    ]


def test_shifted_rows_padding_rows_and_blocks_are_found(cli, tmp_path):
    got = _compare(cli, tmp_path, _table(offset=3), _table())
    assert got["findings"] == [
        "rows shifted by 3: row p of a.npy is row p + 3 of b.npy (another first position); "
        "shifted, they are bit for bit equal"
    ]
    got = _compare(cli, tmp_path, _table(), _table(offset=3))
    assert got["findings"][0].startswith("rows shifted by 3: row p of b.npy is row p + 3 of a.npy")
    padded = _table(convention="fairseq", padding_idx=2)
    got = _compare(cli, tmp_path, padded, _table(convention="tensor2tensor"))
    assert got["findings"] == [
        "position 2 is all zeros in a.npy only (padding); without those rows, they are bit for "
        "bit equal"
    ]
    mae = pe_cli.build(family="sincos2d", grid=(16, 16), d_model=D, convention="mae").numpy()
    timm = pe_cli.build(family="sincos2d", grid=(16, 16), d_model=D, convention="timm").numpy()
    got = _compare(cli, tmp_path, mae, timm)
    assert got["findings"] == [
        "same values with column blocks of d/4 = 16 in another order: b.npy's blocks are "
        "a.npy's blocks 2, 0, 3, 1; reordered, they are bit for bit equal"
    ]
    # MAE [sin x | cos x | sin y | cos y], timm [sin y | sin x | cos y | cos x]
    assert np.array_equal(timm[:, 0:16], mae[:, 32:48]) and np.array_equal(
        timm[:, 16:32], mae[:, :16]
    )


def test_another_base_is_found(cli, tmp_path):
    got = _compare(cli, tmp_path, _table(base=500000.0), _table())
    assert got["findings"] == [
        "another base: with vaswani frequencies a.npy fits base 500000 and b.npy base 10000"
    ]


def test_a_finding_is_confirmed_past_the_rows_it_was_found_in(cli, tmp_path):
    """Reordered columns that agree in the first rows but not further down are not said."""
    a = pe_cli.build(d_model=D, seq_len=3000, convention="vaswani").numpy()
    b = pe_cli.build(d_model=D, seq_len=3000, convention="concat").numpy()
    b[2900:, 5] = 0.5
    got = _compare(cli, tmp_path, a, b)
    assert got["findings"] == []


# ---------------------------------------------------------------- how the difference grows


def test_float32_angle_rounding_grows_in_proportion_to_position(cli):
    """exact against transformers' float32 RoPE table: no layout finding (columns 32-63 and
    96-127 of a cos table are equal, so swapping them changes nothing), and the growth, with
    its rate measured here against mpmath's table."""
    code, out, err = cli(
        "compare", "exact", "hf-rope", "--family", "rope", "-d", 128, "-l", 4096, "--json"
    )
    assert code == 0, err
    got = json.loads(out)
    assert got["findings"] == []
    hf = pe_cli.build(family="rope", d_model=128, seq_len=4096, variant="hf-rope").numpy()
    with mpmath.workprec(256):
        frequencies = [mpmath.power(10000, -mpmath.mpf(2 * i) / 128) for i in range(64)]
    _, cos = figures.sin_cos(np.arange(4096), frequencies)
    exact = np.concatenate([cos, cos], axis=1).astype(np.float32).astype(np.float64)
    error = np.abs(exact - hf)
    rows = error.max(axis=1)
    rate = (rows[1:] / np.arange(1, 4096)).max()  # a bound at every position, not a band's end
    assert np.all(rows[1:] <= rate * np.arange(1, 4096))
    assert got["max_abs"] == error.max()
    assert got["growth"] == (
        f"grows in proportion to position, up to {rate:.3g} x p: the size of float32 rounding "
        "of the angles p*w, as hf-rope computes them"
    )
    assert rate <= 2**-21  # a few float32 roundings of p*w, w <= 1


def test_an_error_that_is_not_float32_rounding_is_not_called_so(cli, tmp_path):
    """A table off by 1e-5 x p grows in proportion to position, but more than float32
    rounding makes: the rate is said, the cause is not."""
    table = _table(part="cos", family="rope")
    off = (table + 1e-5 * np.arange(ROWS)[:, None] * np.linspace(0.5, 1, D)).astype(np.float32)
    got = _compare(cli, tmp_path, off, table)
    assert got["growth"].startswith("grows in proportion to position, up to ")
    assert "rounding" not in got["growth"]


def test_identical_and_within_rounding_verdicts(cli, tmp_path):
    table = _table()
    got = _compare(cli, tmp_path, table, table)
    assert got["verdict"] == "bit for bit identical" and got["where"] == []
    assert got["findings"] == [] and got["growth"] is None
    code, out, _ = cli("compare", "exact:float32", "exact:float64", "-d", D, "-l", ROWS, "--json")
    got = json.loads(out)
    assert got["verdict"].startswith("equal within 0.5 ulp of float32")


def test_a_difference_as_large_as_the_values_is_not_counted_in_ulps(cli, tmp_path):
    """Tables that are not the same table differ by about their values' size: the verdict
    says so, in |A-B| and the values' size, not in tens of millions of ulps."""
    a, b = _table(), _table(base=20000.0)
    got = _compare(cli, tmp_path, a, b)
    error = np.abs(a.astype(np.float64) - b)
    size = max(np.abs(a).max(), np.abs(b).max())
    assert error.max() > 1e-2 * size
    assert got["verdict"] == f"differ by up to {error.max():.3g}, where the values reach {size:.3g}"
    code, out, _ = cli("compare", "--family", "rope", "-d", 32, "-l", 2048)
    audit = out.decode()
    rows = {}
    for line in audit.split("max |err| by position band")[0].splitlines():  # the first table
        if "│" in line:
            rows.setdefault(line.split()[0], line)
    dash = re.compile(r"│\s+-\s+│")  # the ulp column's cell where ulps say nothing
    assert dash.search(rows["rope-table"])  # bfloat16 tables: off by up to 2
    assert not dash.search(rows["hf-rope"])  # float32's: small, counted in ulps
