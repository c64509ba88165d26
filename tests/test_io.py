"""The writer: formats read back by independent readers, atomic files, refusals."""

import csv
import os

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.numpy import load_file as load_numpy
from safetensors.torch import load_file as load_torch

from pe_cli.core.errors import BadInput, OutputError
from pe_cli.engine import build
from pe_cli.io import write as pe_io
from pe_cli.numerics import fast
from pe_cli.spec import TableSpec

SPEC = TableSpec(d_model=12, seq_len=40, offset=3)


def test_npy_reads_back_with_numpy(tmp_path):
    path = tmp_path / "pe.npy"
    pe_io.write(str(path), TableSpec(d_model=12, seq_len=40, shape="batch-first"))
    loaded = np.load(path, allow_pickle=False)
    assert loaded.shape == (1, 40, 12) and loaded.dtype == np.float32
    assert np.array_equal(loaded[0], build(d_model=12, seq_len=40).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_safetensors_reads_back_with_the_library(tmp_path, dtype):
    path = tmp_path / "pe.safetensors"
    spec = TableSpec(d_model=12, seq_len=40, dtype=dtype, shape="seq-first")
    pe_io.write(str(path), spec)
    loaded = load_torch(path)["pe"]
    assert loaded.shape == (40, 1, 12) and loaded.dtype == getattr(torch, dtype)
    assert torch.equal(loaded, build(spec).torch())
    with safe_open(str(path), "pt") as f:
        meta = f.metadata()
    assert meta["pe.dtype"] == dtype and meta["pe.d_model"] == "12" and "pe_cli.version" in meta


def test_safetensors_holds_several_named_tables(tmp_path):
    path = tmp_path / "many.safetensors"
    tables = {
        "exact.float16": TableSpec(d_model=6, seq_len=5, dtype="float16"),
        "exact.float64": TableSpec(d_model=6, seq_len=5, dtype="float64"),
        "pow.float32": TableSpec(d_model=6, seq_len=5, variant="pow"),
    }
    pe_io.write(str(path), tables)
    loaded = load_numpy(path)
    assert sorted(loaded) == sorted(tables)
    for name, spec in tables.items():
        assert np.array_equal(loaded[name], build(spec).numpy())


@pytest.mark.parametrize("fmt,sep", [("csv", ","), ("tsv", "\t")])
def test_text_formats_one_row_per_position(tmp_path, fmt, sep):
    path = tmp_path / f"pe.{fmt}"
    pe_io.write(str(path), SPEC)
    rows = list(csv.reader(path.open(), delimiter=sep))
    assert rows[0] == ["position"] + [f"d{j}" for j in range(12)]
    assert [int(r[0]) for r in rows[1:]] == list(range(3, 43))
    values = np.array([[np.float32(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32)
    assert np.array_equal(values, build(SPEC).numpy())  # shortest repr still reads back exactly


def test_raw_is_the_bytes_the_checksum_names(tmp_path):
    import hashlib

    from pe_cli.analysis.metrics import summarize

    path = tmp_path / "pe.raw"
    written = pe_io.write(str(path), SPEC)
    data = path.read_bytes()
    assert written.nbytes == len(data) == SPEC.nbytes
    assert data == build(SPEC).numpy().astype("<f4").tobytes()
    assert summarize(SPEC)[0].sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
def test_files_written_by_position_hold_the_same_bytes_as_the_stream(tmp_path, monkeypatch, fmt):
    """Files are written slice by slice from two threads at their offsets; pipes get the same
    bytes in order. Small slices, so that there are many and both threads write."""
    import io

    monkeypatch.setattr(fast, "SLICE_BYTES", 1024)
    tables = {"pe": TableSpec(d_model=12, seq_len=1000, offset=7)}
    if fmt == "safetensors":
        tables |= {
            "cos": TableSpec(family="rope", d_model=16, seq_len=700, part="cos", dtype="bfloat16"),
            "sin": TableSpec(family="rope", d_model=16, seq_len=700, part="sin", dtype="bfloat16"),
            "wide": TableSpec(d_model=10, seq_len=300, dtype="float64"),  # the kernel, in order
        }
    path = tmp_path / f"tables.{fmt}"
    written = pe_io.write(str(path), tables, fmt=fmt)
    stream = io.BytesIO()
    assert pe_io._stream(stream, tables, fmt, "stream") == written.nbytes
    assert path.read_bytes() == stream.getvalue()
    if fmt == "npy":
        assert np.array_equal(np.load(path), build(tables["pe"]).numpy())


def test_existing_file_needs_force(tmp_path):
    path = tmp_path / "pe.npy"
    path.write_bytes(b"keep me")
    with pytest.raises(BadInput, match="exists; pass --force"):
        pe_io.write(str(path), SPEC)
    assert path.read_bytes() == b"keep me"
    pe_io.write(str(path), SPEC, force=True)
    assert np.load(path).shape == (40, 12)


def _fail_at_slice(monkeypatch, index: int, error: BaseException) -> None:
    """The fast path's slice `index` raises `error` (in a worker thread); slices of 64 rows."""
    real = fast.Rotation.block

    def block(self, start, *args):
        if start == 64 * index:
            raise error
        return real(self, start, *args)

    monkeypatch.setattr(fast.Rotation, "block", block)
    monkeypatch.setattr(fast, "SLICE_BYTES", 64 * 12 * 4)


@pytest.mark.parametrize("suffix", [".npy", ".safetensors", ".csv"])  # placed, placed, in order
@pytest.mark.parametrize("error", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_failed_write_leaves_no_partial_file_and_the_old_one_intact(
    tmp_path, monkeypatch, error, suffix
):
    _fail_at_slice(monkeypatch, 3, error)
    spec = TableSpec(d_model=12, seq_len=1000)
    fresh, old = tmp_path / f"fresh{suffix}", tmp_path / f"old{suffix}"
    old.write_bytes(b"old contents")
    for path in (fresh, old):
        with pytest.raises((KeyboardInterrupt, OutputError)):
            pe_io.write(str(path), spec, force=True)
    assert not fresh.exists()
    assert old.read_bytes() == b"old contents"
    assert sorted(os.listdir(tmp_path)) == [old.name]  # no temporary left behind


def test_full_device_is_a_clear_error():
    with pytest.raises(OutputError, match="No space left on device"):
        pe_io.write("/dev/full", TableSpec(d_model=512, seq_len=4096), fmt="npy")


def test_refusals(tmp_path):
    with pytest.raises(BadInput, match="npy has no bfloat16"):
        pe_io.write(str(tmp_path / "x.npy"), TableSpec(dtype="bfloat16"))
    with pytest.raises(BadInput, match="is a directory"):
        pe_io.write(str(tmp_path), SPEC)
    with pytest.raises(BadInput, match="does not exist"):
        pe_io.write(str(tmp_path / "no" / "x.npy"), SPEC)
    with pytest.raises(BadInput, match="cannot tell the format"):
        pe_io.write(str(tmp_path / "x.txt"), SPEC)
    with pytest.raises(BadInput, match="holds one table"):
        pe_io.write(str(tmp_path / "x.npy"), {"a": SPEC, "b": SPEC})
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "spec",
    [
        TableSpec(d_model=12, seq_len=40, offset=3),
        TableSpec(family="rope", d_model=16, seq_len=8, rope={"rope_type": "linear", "factor": 2}),
        TableSpec(family="sincos2d", d_model=16, grid="4x4", cls_token=True),
    ],
)
def test_safetensors_metadata_holds_the_tables_parameters_and_no_nulls(tmp_path, spec):
    """Only what describes the table: the common parameters and its family's, each set; the
    spec read back from them is the one written."""
    import dataclasses

    from pe_cli.families import FAMILIES
    from pe_cli.io.read import open_table
    from pe_cli.spec import COMMON

    path = tmp_path / "pe.safetensors"
    pe_io.write(str(path), spec)
    with safe_open(str(path), "np") as f:
        meta = f.metadata()
    values = {k[len("pe.") :]: v for k, v in meta.items() if k.startswith("pe.")}
    assert "null" not in values.values()
    own = {p.name for p in COMMON} | {p.name for p in FAMILIES[spec.family].params}
    assert set(values) <= own
    assert (
        set(values)
        == {f.name for f in dataclasses.fields(spec) if getattr(spec, f.name) is not None} & own
    )
    assert open_table(f"{path}:pe").spec == spec


def test_metadata_written_before_with_every_parameter_still_reads(tmp_path):
    """Files from before wrote every TableSpec field, unset ones as null."""
    import dataclasses
    import json

    from safetensors.numpy import save_file

    from pe_cli.io.read import open_table

    spec = TableSpec(family="rope", d_model=16, seq_len=8, base=500000.0)
    old = {
        f"pe.{k}": v if isinstance(v, str) else json.dumps(v)
        for k, v in dataclasses.asdict(spec).items()
    }
    assert "null" in old.values()
    path = tmp_path / "old.safetensors"
    save_file({"pe": np.ascontiguousarray(build(spec).numpy())}, str(path), metadata=old)
    assert open_table(f"{path}:pe").spec == spec


def test_export_names_its_tensors_as_its_help_and_the_readme_say(cli, tmp_path):
    """Named by what varies among them, joined by dots: exact and exp-log for two variants,
    exact.float16 ... where the dtype varies too, cos and sin for a rope table."""
    from pathlib import Path

    from pe_cli.cli.export import export

    readme = " ".join((Path(__file__).parents[1] / "docs" / "options.md").read_text().split())
    for args, names in (
        (("--variant", "exact", "--variant", "exp-log"), ["exact", "exp-log"]),
        (
            (
                "--variant",
                "exact",
                "--variant",
                "exp-log",
                "--dtype",
                "float32",
                "--dtype",
                "float16",
            ),
            ["exact.float16", "exact.float32", "exp-log.float16", "exp-log.float32"],
        ),
        (("--family", "rope", "-d", 8), ["cos", "sin"]),
    ):
        path = tmp_path / "t.safetensors"
        path.unlink(missing_ok=True)
        code, _, err = cli("export", path, "-l", 4, *args)
        assert code == 0, err
        assert sorted(load_numpy(path)) == names
    said = " ".join(export.__doc__.split())
    for text in (said, readme):
        assert (
            "(exact and exp-log; exact.float16 and exp-log.float32 where the dtype varies" in text
        )
