"""Inspection streams: `compare A B`, identification and `show` read any table in row blocks,
with every figure the same as a whole-array computation written here with numpy (and
mpmath where a figure is an error against the true value), and bounded memory."""

import json
import os
import subprocess
import sys
import textwrap

import mpmath
import numpy as np
import pytest

import pe_cli
from pe_cli.analysis import identify, tables
from tests import reference


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 4096 elements and samples of a few hundred rows, so that small tables take
    every streamed path: many blocks, and a table too long to be looked at whole."""
    monkeypatch.setattr(tables, "BLOCK_ELEMENTS", 1 << 12)
    monkeypatch.setattr(identify, "WHOLE_ELEMENTS", 1 << 14)
    monkeypatch.setattr(identify, "FIT_ROWS", 512)


def _float32_ulp(x):
    """The spacing of float32 at |x| (values on the float32 grid), from numpy's own spacing."""
    return np.spacing(np.abs(x).astype(np.float32)).astype(np.float64)


def test_compare_streamed_figures_match_a_whole_array_computation(cli, tmp_path, small_blocks):
    a = pe_cli.build(d_model=64, seq_len=1000, convention="vaswani").numpy()
    b = pe_cli.build(d_model=64, seq_len=1000, variant="exp-log").numpy()
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    code, out, _ = cli(
        "compare", tmp_path / "a.npy", tmp_path / "b.npy", "--json", "--atol", "1e-5"
    )
    assert code == 1  # outside --atol
    got = json.loads(out)
    x, y = a.astype(np.float64), b.astype(np.float64)
    error = np.abs(x - y)
    # ulps at each column's largest value (either table)
    size = np.maximum(np.abs(a).max(axis=0), np.abs(b).max(axis=0))
    ulps = error.max(axis=0) / _float32_ulp(size)
    assert got["max_abs"] == error.max()
    assert got["mean_abs"] == pytest.approx(error.mean(), rel=1e-12)
    assert got["rms"] == pytest.approx(np.sqrt(np.mean(error**2)), rel=1e-12)
    assert got["max_ulps"] == ulps.max()
    assert tuple(got["worst"]) == divmod(int(np.argmax(error)), 64)
    assert got["differing"] == np.count_nonzero(x != y) and got["size"] == x.size
    rows_max = error.max(axis=1)
    assert [m for _, _, m in got["bands"]] == [
        rows_max[lo:hi].max()
        for lo, hi in [(0, 1), (1, 4), (4, 16), (16, 64), (64, 256), (256, 1000)]
    ]
    assert got["first_over"] == int(np.flatnonzero(rows_max > 1e-5)[0])
    assert got["within"] is False
    first = np.flatnonzero(error)[0]
    assert got["first_differing"] == [first // 64, first % 64]
    assert got["where"][0].startswith(
        f"{np.count_nonzero(error)} of {x.size} elements differ, the first at position "
        f"{first // 64}, dimension {first % 64}"
    )


def test_compare_reads_shifted_and_transposed_tables_in_blocks(cli, tmp_path, small_blocks):
    table = pe_cli.build(d_model=32, seq_len=700).numpy()
    np.save(tmp_path / "a.npy", table)
    np.save(tmp_path / "t.npy", table.T.copy())
    np.save(tmp_path / "cls.npy", np.concatenate([np.zeros((1, 32), np.float32), table]))
    for first, second, note in (
        ("t.npy", "a.npy", "transposed"),
        ("a.npy", "t.npy", "transposed"),
        ("cls.npy", "a.npy", "class token"),
    ):
        code, out, _ = cli("compare", tmp_path / first, tmp_path / second, "--json")
        got = json.loads(out)
        assert code == 0 and got["differing"] == 0 and got["size"] == table.size
        assert any(
            note in f and "compared as (700, 32)" in f or note == "class token" and note in f
            for f in got["notes"]
        )
    other = table.copy()
    other[650, 5] += np.float32(0.5)
    np.save(
        tmp_path / "o.npy", other.T.copy()
    )  # wide, and one element off far down the tall reading
    code, out, _ = cli("compare", tmp_path / "a.npy", tmp_path / "o.npy", "--json")
    got = json.loads(out)
    assert got["differing"] == 1 and tuple(got["worst"]) == (650, 5)


def _identify(cli, path):
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    return json.loads(out)


def test_long_table_is_identified_on_a_sample_and_confirmed_on_every_row(
    cli, tmp_path, small_blocks
):
    spec = dict(d_model=64, seq_len=3000, convention="fairseq", padding_idx=1)
    table = pe_cli.build(**spec).numpy()
    np.save(tmp_path / "t.npy", table)
    got = _identify(cli, tmp_path / "t.npy")
    best = got["candidates"][0]
    assert (
        best["name"] == "fairseq (padding_idx=1)" and best["differing"] == 0 and best["confirmed"]
    )
    assert any("checked for bit-identity on every row" in n for n in got["notes"])
    code, out, _ = cli("compare", tmp_path / "t.npy")
    assert "bit for bit (float32)" in " ".join(out.decode().split())


def test_a_padding_row_past_the_samples_head_is_in_the_sample(cli, tmp_path, small_blocks):
    table = pe_cli.build(d_model=64, seq_len=3000, convention="fairseq", padding_idx=300).numpy()
    np.save(tmp_path / "t.npy", table)
    got = _identify(cli, tmp_path / "t.npy")
    best = got["candidates"][0]
    assert (
        best["name"] == "fairseq (padding_idx=300)" and best["differing"] == 0 and best["confirmed"]
    )
    assert best["spec"]["padding_idx"] == 300


def test_long_library_table_is_named_after_its_library(cli, tmp_path, small_blocks):
    table = pe_cli.build(d_model=64, seq_len=3000, variant="fairseq").numpy()
    np.save(tmp_path / "t.npy", table)
    got = _identify(cli, tmp_path / "t.npy")
    best = got["candidates"][0]
    assert (
        best["name"] in ("library fairseq", "library whisper")
        and best["differing"] == 0
        and best["confirmed"]
    )
    # the exact table is not this one, so the variants were built; a library table altered in
    # one element far down is no longer any library's
    table[2500, 40] = np.nextafter(table[2500, 40], np.float32(2))
    np.save(tmp_path / "t.npy", table)
    got = _identify(cli, tmp_path / "t.npy")
    assert not any(
        c["name"].startswith("library") and c["differing"] == 0 for c in got["candidates"]
    )


def test_long_exact_table_does_not_build_the_variants(cli, tmp_path, small_blocks, monkeypatch):
    from pe_cli import engine

    built = []
    compute = engine._formula_table
    monkeypatch.setattr(
        engine, "_formula_table", lambda spec, device: built.append(spec) or compute(spec, device)
    )
    np.save(
        tmp_path / "t.npy",
        pe_cli.build(d_model=64, seq_len=3000, convention="tensor2tensor").numpy(),
    )
    got = _identify(cli, tmp_path / "t.npy")
    assert (
        got["candidates"][0]["name"] == "tensor2tensor" and got["candidates"][0]["differing"] == 0
    )
    assert built == [] and any("were not built" in n for n in got["notes"])


def _true(p, j):
    return reference.value("fairseq", 64, 10000.0, p, j, padding_idx=1)


@pytest.mark.parametrize("row", [2500, 2999])  # 2500 is outside the sample, 2999 the last row
def test_one_altered_element_is_found_by_the_confirming_pass(cli, tmp_path, small_blocks, row):
    table = pe_cli.build(d_model=64, seq_len=3000, convention="fairseq", padding_idx=1).numpy()
    table[row, 40] = np.nextafter(table[row, 40], np.float32(2))  # one ulp up
    np.save(tmp_path / "t.npy", table)
    best = _identify(cli, tmp_path / "t.npy")["candidates"][0]
    assert (
        best["name"] == "fairseq (padding_idx=1)" and best["differing"] == 1 and best["confirmed"]
    )
    x = _true(row, 40)
    assert best["max_abs"] == pytest.approx(
        float(abs(mpmath.mpf(float(table[row, 40])) - x)), rel=1e-9
    )
    # ulps at the column's size: column 40 is a cos, 1 at position 0; every other element is
    # its correctly rounded value, within half an ulp
    altered = float(abs(mpmath.mpf(float(table[row, 40])) - x)) / 2.0**-23
    assert max(altered, 0.5) * (1 + 1e-6) >= best["max_ulps"] >= altered * (1 - 1e-6)
    assert tuple(best["worst"]) == (row, 40)
    code, out, _ = cli("compare", tmp_path / "t.npy")
    text = " ".join(out.decode().split())  # lines fold at the terminal's width
    assert "bit for bit" not in text and "matches fairseq (padding_idx=1)" in text


def test_a_zeroed_row_far_down_is_found_by_the_confirming_pass(cli, tmp_path, small_blocks):
    table = pe_cli.build(d_model=64, seq_len=3000, convention="fairseq", padding_idx=1).numpy()
    table[2500] = 0
    np.save(tmp_path / "t.npy", table)
    best = _identify(cli, tmp_path / "t.npy")["candidates"][0]
    truth = [abs(_true(2500, j)) for j in range(64)]
    assert best["differing"] == 64 and best["confirmed"]
    assert best["max_abs"] == pytest.approx(float(max(truth)), rel=1e-9)
    assert tuple(best["worst"]) == (2500, int(np.argmax([float(t) for t in truth])))


def test_show_facts_and_window_of_a_file_in_blocks(cli, tmp_path, small_blocks):
    rng = np.random.default_rng(7)
    angles = rng.uniform(-4, 4, (900, 24))
    table = np.empty((900, 48), np.float32)  # sin/cos pairs of random angles: norm sqrt(24)
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    table[[37, 600]] = 0
    table[[300, 777]] *= np.float32(1.001)  # two rows off, past the rows the layout is read from
    np.save(tmp_path / "r.npy", table)
    code, out, _ = cli("show", tmp_path / "r.npy", "--json")
    facts = json.loads(out)
    x = table.astype(np.float64)
    norms = np.sqrt(np.sum(x**2, axis=1))
    assert (facts["min"], facts["max"]) == (x.min(), x.max())
    assert facts["mean"] == pytest.approx(x.mean(), rel=1e-12)
    assert facts["row_norms"]["min"] == 0 and facts["row_norms"]["max"] == pytest.approx(
        norms.max(), rel=1e-15
    )
    assert facts["row_norms"]["zero_rows"] == [37, 600]
    live = np.delete(norms, [37, 600])
    assert facts["row_norms"]["max_deviation"] == pytest.approx(
        np.abs(live - np.sqrt(24)).max(), rel=1e-12
    )
    assert facts["row_norms"]["rows_off"] == 2
    assert facts["row_norms"]["assumed"].startswith("columns 2i and 2i+1 are sin/cos pairs")
    code, out, _ = cli("show", tmp_path / "r.npy", "--rows", "700:702", "--cols", "0:3")
    text = out.decode()
    assert code == 0 and all(f"{table[p, j]:.9g}"[:6] in text for p in (700, 701) for j in range(3))
    for other in (table * 2, rng.uniform(-1, 1, (900, 48))):  # no sin/cos pairs: no norm
        np.save(tmp_path / "r.npy", other.astype(np.float32))
        norms = json.loads(cli("show", tmp_path / "r.npy", "--json")[1])["row_norms"]
        assert "expected" not in norms


def test_show_reads_only_the_rows_it_prints_after_its_pass(tmp_path, small_blocks, monkeypatch):
    from pe_cli import render
    from pe_cli.analysis.view import view

    np.save(tmp_path / "r.npy", np.ones((900, 48), np.float32))
    seen = view(str(tmp_path / "r.npy"), {})
    asked = []
    read = seen.table.read
    monkeypatch.setattr(seen.table, "read", lambda a, b: asked.append((a, b)) or read(a, b))
    render.window(seen.table, slice(700, 705), None, render.row_label(None), "r")
    assert asked == [(700, 705)]


def test_engine_rows_are_the_fast_paths_bits():
    spec = pe_cli.TableSpec(d_model=48, seq_len=5000, convention="fairseq", padding_idx=1)
    whole = pe_cli.build(spec).numpy()
    runs = [(0, 3), (1000, 1002), (4095, 4100), (4999, 5000)]
    got = pe_cli.engine.rows(spec, runs)
    assert np.array_equal(got, np.concatenate([whole[a:b] for a, b in runs]))


def test_ulp_is_numpys_spacing():
    from pe_cli.core.dtypes import ulp

    rng = np.random.default_rng(3)
    for dtype, numpy_type in (("float32", np.float32), ("float16", np.float16)):
        x = (rng.standard_normal(10000) * 10.0 ** rng.integers(-6, 4, 10000)).astype(numpy_type)
        x[:3] = [0, np.finfo(numpy_type).smallest_subnormal, -np.finfo(numpy_type).tiny]
        assert np.array_equal(
            ulp(x.astype(np.float64), dtype), np.spacing(np.abs(x)).astype(np.float64)
        )


def test_stdin_larger_than_memory_is_refused_with_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from pe_cli.cli.app import app
    from pe_cli.io import read

    monkeypatch.setattr(read, "_STDIN_CHUNK", 1 << 12)
    monkeypatch.setattr(read, "available_memory", lambda: 100_000)
    np.save(tmp_path / "t.npy", np.ones((1000, 64), np.float32))
    result = CliRunner().invoke(app, ["show", "-"], input=(tmp_path / "t.npy").read_bytes())
    assert result.exit_code != 0 and "of memory" in result.stderr and result.stderr.count("\n") == 1


PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")


def _peak_mib(args: list[str], cwd) -> float:
    """The peak resident memory, in MiB, of `python -m pe_cli ARGS` run in `cwd` with this
    checkout's pe_cli."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(pe_cli.__file__))
    command = [sys.executable, "-c", PEAK, sys.executable, "-m", "pe_cli", *args]
    found = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    return int(found.stdout.split()[-1]) / 1024


def test_inspecting_large_files_keeps_memory_bounded(tmp_path):
    """Two 256 MiB tables: read whole as float64 each would take 512 MiB; compare, identify
    and show stay below the size of one file."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1 << 16, 1024), dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    a += np.float32(1e-3)
    np.save(tmp_path / "b.npy", a)
    del a
    for args in (["compare", "a.npy", "b.npy"], ["compare", "a.npy"], ["show", "a.npy"]):
        peak_mib = _peak_mib(args, tmp_path)
        assert peak_mib < 256, (args, peak_mib)


def _odd_tables():
    """Tables that once crashed identification or that no family writes: zero-frequency pairs
    (FLUX's first axis), zero and constant columns, NaN and infinite rows, odd sizes."""
    p = np.arange(100)[:, None]
    for w in ([0.0, 1.0, 0.1, 0.01], [1.0, 0.0, 0.1, 0.01], [1.0, 0.1, 0.01, 0.0]):
        for fn in (np.cos, np.sin):
            plane = fn(p * np.array(w))
            yield np.concatenate([plane, plane], 1)  # [x | x] (half pairing)
            yield np.repeat(plane, 2, axis=1)  # interleaved
    table = pe_cli.build(d_model=8, seq_len=100).numpy().astype(np.float64)
    zero_column, nan_row, inf_row = table.copy(), table.copy(), table.copy()
    zero_column[:, 3] = 0
    nan_row[40] = np.nan
    inf_row[7, 2] = np.inf
    yield from (
        zero_column,
        nan_row,
        inf_row,
        np.zeros((100, 8)),
        np.ones((100, 8)),
        np.full((50, 6), np.nan),
    )
    yield from (table[:1], table[:2], table[:, :1], np.ones((1, 1)), table.T)


@pytest.mark.parametrize("k", range(len(list(_odd_tables()))))
def test_no_table_makes_identification_crash(cli, tmp_path, k):
    table = list(_odd_tables())[k].astype(np.float32)
    np.save(tmp_path / "t.npy", table)
    code, out, err = cli("compare", tmp_path / "t.npy")
    assert code == 0 and err == "" and out
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0 and err == "" and "explained" in json.loads(out)


def test_a_far_off_fit_is_not_called_a_match(cli, tmp_path):
    p = np.arange(100)[:, None]
    plane = np.cos(
        p * np.array([1.0, 0.1, 0.01, 0.0])
    )  # a zero frequency where RoPE has 10000**-0.75
    np.save(tmp_path / "t.npy", np.concatenate([plane, plane], 1).astype(np.float32))
    code, out, _ = cli("compare", tmp_path / "t.npy")
    text = " ".join(out.decode().split())
    assert (
        "no built-in convention explains this table; the nearest is rope cos" in text
        and "matches" not in text
    )
    assert json.loads(cli("compare", tmp_path / "t.npy", "--json")[1])["explained"] is False
    # an unknown float32 recipe's error stays a match: the exact table with elements one ulp off
    table = pe_cli.build(d_model=64, seq_len=4096).numpy()
    rng = np.random.default_rng(5)
    off = rng.random(table.shape) < 0.3
    table[off] = np.nextafter(table[off], np.float32(np.inf))
    np.save(tmp_path / "s.npy", table)
    got = json.loads(cli("compare", tmp_path / "s.npy", "--json")[1])
    best = got["candidates"][0]
    assert got["explained"] is True and best["name"] == "vaswani" and best["differing"] == off.sum()
    assert "matches vaswani" in " ".join(cli("compare", tmp_path / "s.npy")[1].decode().split())


def test_rows_at_any_indices_are_read_once_in_their_order():
    """Source.at: rows asked for out of order or more than once come back in the order asked,
    each run of consecutive rows read once (a reader probing a grid's first and last patches
    may ask for the same row twice, or the last before the first)."""
    table = np.arange(40.0).reshape(10, 4)
    reads = []

    def read(a, b):
        reads.append((a, b))
        return table[a:b].copy()

    source = tables.Source("t", 10, 4, "float64", None, read)
    asked = [7, 1, 2, 7, 0, 9]
    assert np.array_equal(source.at(asked), table[asked])
    assert reads == [(0, 3), (7, 8), (9, 10)]
    reads.clear()
    assert np.array_equal(source.at([3, 4, 5]), table[3:6]) and reads == [(3, 6)]
    assert source.at([]).shape == (0, 4)


def _rotated_pair(folder, rows, heads=4, head_dim=64, scale=1.0):
    """q before and after transformers' Llama rotation (base 10000) at positions 0..rows-1,
    as (positions, heads, head_dim) float32 files; AFTER times `scale` where given."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    config = LlamaConfig(
        hidden_size=heads * head_dim,
        num_attention_heads=heads,
        head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    q = torch.randn(1, heads, rows, head_dim, generator=torch.Generator().manual_seed(1))
    cos, sin = rotary(q, torch.arange(rows)[None])
    turned = modeling_llama.apply_rotary_pos_emb(q, q, cos, sin)[0] * scale
    np.save(folder / "before.npy", q[0].permute(1, 0, 2).numpy())
    np.save(folder / "after.npy", turned[0].permute(1, 0, 2).numpy())
    return folder / "after.npy", folder / "before.npy"


@pytest.fixture
def counted_reads(monkeypatch):
    """Every element range read from a stored file, by file name: (first, stop)."""
    from pe_cli.io.read import Stored

    reads = {}
    elements = Stored.elements

    def counted(self, first, stop, widen=True):
        reads.setdefault(os.path.basename(self.label), []).append((first, stop))
        return elements(self, first, stop, widen)

    monkeypatch.setattr(Stored, "elements", counted)
    return reads


def _times_read(ranges, rows, width):
    """How many times each row was read, from element ranges of rows `width` elements wide."""
    count = np.zeros(rows, int)
    for first, stop in ranges:
        assert first % width == 0 and stop % width == 0
        count[first // width : stop // width] += 1
    return count


@pytest.mark.parametrize("kernel", [True, False])
@pytest.mark.parametrize("scale", [1.0, 1.25])
def test_a_long_dump_is_read_once_and_says_what_two_passes_say(
    tmp_path, monkeypatch, counted_reads, scale, kernel
):
    """compare AFTER --before BEFORE on a dump longer than the rows its table is named from
    (here 64 of 600, in blocks of 10 rows): each row past those is read once from each file,
    the first 64 twice (named ahead of the pass), and the report is the one a reading of the
    whole that rebuilds in a pass of its own gives, with the C sweep or numpy's path. Where
    the whole dump's reading differs from its first rows' in what the rebuild applies (a
    scale, estimated from other rows), the rebuild takes a pass of its own, and the report is
    the same again."""
    from pe_cli.analysis import rotation, rotation_files, rotation_report, rotation_stream

    if not kernel:  # numpy's sums and comparison, where no compiler built the C sweep
        monkeypatch.setattr(rotation, "_pairs", None)
    monkeypatch.setattr(rotation, "BLOCK_ELEMENTS", 10 * 4 * 64)
    monkeypatch.setattr(rotation_report, "SAMPLE_ROWS", 64)
    after, before = _rotated_pair(tmp_path, 600, scale=scale)
    found = rotation_files.from_files(after, before)
    for name in ("before.npy", "after.npy"):
        count = _times_read(counted_reads[name], 600, 4 * 64)
        want = np.ones(600, int) if scale == 1 else np.full(600, 2)  # the rebuild's own pass
        want[:64] += 1
        assert count.tolist() == want.tolist(), name
    monkeypatch.setattr(rotation_stream, "first_rows", lambda *args: None)
    whole = rotation_files.from_files(after, before)
    assert found.codes() == whole.codes() == ([] if scale == 1 else ["scale"])
    assert found.pairing == whole.pairing == "half" and found.rotary_dims == whole.rotary_dims
    assert found.named.name == whole.named.name and found.named.command == whole.named.command
    assert found.rebuilt == whole.rebuilt and found.rebuilt.identical == (scale == 1)
    assert found.gap.where == whole.gap.where
    assert found.gap.max_abs == pytest.approx(whole.gap.max_abs, rel=1e-9)
    assert np.array_equal(found.reading.angles, whole.reading.angles)


def test_reading_a_rotation_keeps_memory_bounded(tmp_path):
    """compare AFTER --before BEFORE of two 256 MiB float32 dumps (16384 positions, 32 heads
    of 128): read whole, one file alone would take 512 MiB as float64; the reading, the
    naming (which imports torch) and the rebuild stay below the two files' own size, 512 MiB
    (issue 41's bound for a pair of 2 GiB files)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16384, 32, 128), dtype=np.float32)
    np.save(tmp_path / "before.npy", x)
    half = np.arange(64)
    angles = np.outer(np.arange(16384), 10000.0 ** (-half / 64))[:, None, :]
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    x[..., :64], x[..., 64:] = (
        x[..., :64] * cos - x[..., 64:] * sin,
        x[..., 64:] * cos + x[..., :64] * sin,
    )
    np.save(tmp_path / "after.npy", x)
    del x, angles, cos, sin
    peak_mib = _peak_mib(["compare", "after.npy", "--before", "before.npy"], tmp_path)
    assert peak_mib < 512, peak_mib  # 360 MiB measured here
