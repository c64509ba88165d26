"""compare FILE on multi-axis RoPE tables (issue 30): transformers' M-RoPE and vision layouts,
diffusers' models at other head dims and frequency dtypes, pixel-style frequencies; each named
bit for bit, its printed command and its --json spec rebuilding the file byte for byte; and the
reasons given for the tables no layout explains."""

import json
import shlex

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
    code, _, err = cli(*words[1:], "-o", tmp_path / "again.npy")
    assert code == 0, err
    assert (tmp_path / "again.npy").read_bytes() == path.read_bytes()
    spec = {**best["spec"], "dtype": best["dtype"]}
    rebuilt = pe_cli.build(pe_cli.TableSpec(**spec)).numpy()
    assert rebuilt.tobytes() == table.tobytes()
    code, out, _ = cli("compare", path)
    assert "bit for bit" in " ".join(out.decode().split())
    return best


def _generated(cli, tmp_path, *options) -> np.ndarray:
    code, _, err = cli("generate", "--family", "rope", *options, "-o", tmp_path / "made.npy")
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
]


@pytest.mark.parametrize("options, layout", TRANSFORMERS)
def test_transformers_layouts_are_named_and_rebuilt(cli, tmp_path, options, layout):
    table = _generated(cli, tmp_path, *shlex.split(options))
    best = _named_and_rebuilt(cli, tmp_path, table)
    assert best["spec"]["axes"] == layout or best["name"].startswith("preset")
