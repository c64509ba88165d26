"""Identification's contract (pe_cli/families/proposals.py): each family's reader only proposes
(Proposals and Notes, over a read-only view), one scorer decides, and what it decides of
broken and degenerate tables is true.

- Readers build no candidate and touch no notes: their modules name neither the scorer nor
  its candidates, and the view they get has nothing that writes.
- Every proposal a reader makes over a table of each family, whole or broken, is a table the
  engine builds.
- Over every family's table with k broken columns or rows, one row, one column, a prefix of
  zero rows, a NaN, an inf, a constant: what is called bit for bit is the table's bits, what
  is named "except" differs exactly there, and where any reader proposed a table of the file's
  size there is a nearest candidate.
"""

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import pe_cli
from pe_cli.analysis import identify as core
from pe_cli.analysis.api import _array
from pe_cli.engine import build
from pe_cli.families import FAMILIES
from pe_cli.families.proposals import Note, Proposal
from pe_cli.families.readers import READERS
from pe_cli.spec import TableSpec

FAMILY_DIR = Path(pe_cli.__file__).parent / "families"
READER_FILES = sorted(
    path
    for path in FAMILY_DIR.rglob("*.py")
    if "identify" in path.parts or path.stem.startswith("identify")
)
# what a reader may not name: the scorer, its candidates, the file's notes and the scorer's
# own state (the view holds none of them)
FORBIDDEN_NAMES = {"Candidate", "Bench", "Scorer"}
FORBIDDEN_ATTRIBUTES = {"notes", "target", "candidate", "score", "deferred", "skipped"}


def test_one_reader_per_family_in_its_identify_module():
    assert list(READERS) == list(FAMILIES)
    for name, read in READERS.items():
        assert read.__module__.split(".")[-1] == "identify", (name, read.__module__)
        assert not hasattr(FAMILIES[name], "candidates"), name


@pytest.mark.parametrize("path", READER_FILES, ids=lambda p: str(p.relative_to(FAMILY_DIR)))
def test_a_reader_builds_no_candidate_and_touches_no_notes(path):
    tree = ast.parse(path.read_text())
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert not [m for m in imported if "analysis" in m], imported
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert not names & FORBIDDEN_NAMES, names & FORBIDDEN_NAMES
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not attributes & FORBIDDEN_ATTRIBUTES, attributes & FORBIDDEN_ATTRIBUTES


def _bench() -> core.Bench:
    values = np.zeros((4, 8))
    target = _array(values.astype(np.float32))
    return core.Bench(target, core.View(target, values, sampled=False), 0.0)


def test_the_view_has_nothing_that_writes():
    public = {name for name in dir(_bench().view) if not name.startswith("_")}
    assert not public & FORBIDDEN_ATTRIBUTES, public


def test_a_reader_that_yields_anything_else_is_refused():
    bench = _bench()

    def reader():
        yield "rope cos"

    with pytest.raises(TypeError, match="not a Proposal or Note"):
        bench.read(reader(), [])


# a small table of each family, as pe-cli builds it
TABLES = {
    "sinusoidal": dict(d_model=64, seq_len=200),
    "rope": dict(family="rope", d_model=64, seq_len=200, part="cos", base=500000),
    # 3 columns or rows are few (core.names.few: a 16th) of every table but the boxes'
    "alibi": dict(family="alibi", heads=4, seq_len=48, part="causal"),
    "sincos2d": dict(family="sincos2d", grid="8x8", d_model=64),
    "sincos3d": dict(family="sincos3d", grid="4x4x4", d_model=96),
    "boxes": dict(family="boxes", d_model=64, boxes="0.1,0.2,0.5,0.6;0.25,0.25,0.75,0.75"),
}


def _table(family: str) -> np.ndarray:
    spec = TableSpec(**TABLES[family])
    return build(spec).float64().reshape(spec.rows, spec.cols).astype(np.float32)


def _broken(values: np.ndarray, how: str) -> np.ndarray:
    """A table broken one way a buffer is: columns or rows overwritten, cut to a row or a
    column, zero first rows, a NaN or an inf, all one value."""
    broken = values.copy()
    rows, cols = values.shape
    if how.startswith("columns"):
        k = int(how.split()[1])
        broken[:, [(cols // 3 + 5 * i) % cols for i in range(k)]] = 0.5
    elif how.startswith("rows"):
        k = int(how.split()[1])
        broken[[(rows // 3 + 5 * i) % rows for i in range(k)]] = 0.25
    elif how == "one row":
        broken = broken[:1]
    elif how == "one column":
        broken = broken[:, :1]
    elif how == "zero prefix":
        broken[: min(3, rows - 1)] = 0
    elif how in ("nan", "inf"):
        broken[rows // 2, cols // 2] = np.nan if how == "nan" else np.inf
    elif how == "constant":
        broken[:] = 0.75
    return broken


BROKEN = ["whole", "columns 1", "columns 3", "rows 1", "rows 3", "one row", "one column"]
BROKEN += ["zero prefix", "nan", "inf", "constant"]


@pytest.mark.parametrize("how", BROKEN)
@pytest.mark.parametrize("family", list(TABLES))
def test_what_is_said_of_a_broken_table_is_true(monkeypatch, family, how):
    values = _broken(_table(family), how)
    proposed = []
    score = core.Bench.score

    def recorded(bench, proposal):
        proposed.append(proposal)
        return score(bench, proposal)

    monkeypatch.setattr(core.Bench, "score", recorded)
    found = pe_cli.identify(values)
    for proposal in proposed:  # every proposal is a table the engine builds
        assert isinstance(proposal, Proposal) and not isinstance(proposal, Note)
        if proposal.spec is not None and proposal.spec.variant == "exact":
            assert build(proposal.spec.replace(device="cpu")).float64().size > 0, proposal
    if how == "whole":
        assert found.candidates and found.candidates[0].identical, found.candidates[:1]
    sized = [p for p in proposed if p.spec is not None and p.spec.cols == values.shape[1]]
    if how not in ("nan", "inf", "constant") and any(p.spec.rows == len(values) for p in sized):
        assert found.candidates, (family, how, "proposed, yet no nearest")
    for c in found.candidates:
        if c.composed:  # the transpose of, a cast of: the spec's table is not the file's
            continue
        built = build(c.spec).float64().reshape(values.shape)
        differ = built != values.astype(np.float64)
        if c.identical:
            assert not differ.any(), (family, how, c.name)
        except_for = core.exceptions(c, found.target)
        if except_for is not None:
            listed = except_for.get("columns") or except_for.get("rows")
            axis = 0 if "columns" in except_for else 1
            assert listed == np.flatnonzero(differ.any(axis=axis)).tolist(), (family, how)
    if how in ("nan", "inf", "constant"):
        assert not found.candidates, (family, how, found.candidates[0].name)
    if how.split()[0] in NAMED_WHEN_BROKEN.get(family, ()):
        # a known table but for a few columns or rows: named, with exactly those listed
        axis = how.split()[0]
        differ = values != _table(family)
        where = np.flatnonzero(differ.any(axis=0 if axis == "columns" else 1)).tolist()
        assert found.candidates, (family, how)
        assert core.exceptions(found.candidates[0], found.target) == {axis: where}, (family, how)


# the families whose readers read past a few broken columns and rows, and which. A box's row
# is that box's own features: where it is overwritten, the box it held is not in the table,
# and a reading would have to make one up
BOTH = ("columns", "rows")
NAMED_WHEN_BROKEN = {
    "sinusoidal": BOTH,
    "rope": BOTH,
    "alibi": BOTH,
    "sincos2d": BOTH,
    "sincos3d": BOTH,
    "boxes": ("columns",),
}


def test_true_values_and_exact_are_two_words(cli, tmp_path):
    """One file, pe-cli's exact table 1 float32 step off at one element: the candidates table
    measures it against the true values (the real numbers, here mpmath's), compare A exact
    against pe-cli's exact table (those correctly rounded to float32), and each says which."""
    import math

    from . import reference as ref

    d, rows, at = 8, 16, (5, 2)
    table = pe_cli.build(d_model=d, seq_len=rows).numpy()
    exact = table[at]
    table[at] = np.nextafter(exact, np.float32(np.inf))
    path = tmp_path / "stepped.npy"
    np.save(path, table)
    true = max(
        abs(mpmath_value - float(table[p, j]))
        for p in range(rows)
        for j in range(d)
        for mpmath_value in [ref.value("vaswani", d, 10000.0, p, j)]
    )
    code, out, err = cli("compare", path, "--json")
    assert code == 0, err
    best = json.loads(out)["candidates"][0]
    assert best["name"] == "vaswani" and math.isclose(best["max_abs"], float(true), rel_tol=1e-9)
    code, out, err = cli("compare", path)
    lines = [line for line in out.decode().split("━")[0].splitlines() if "┃" in line]
    cells = [line.split("┃") for line in lines]  # a heading wraps down its column
    headings = [" ".join(" ".join(row[k] for row in cells).split()) for k in range(len(cells[0]))]
    assert "max |err| vs true values" in headings, headings
    assert not any("vs exact" in heading for heading in headings), headings
    code, out, err = cli("compare", path, "exact", "--json")
    assert code == 0, err
    assert json.loads(out)["max_abs"] == float(table[at]) - float(exact)  # one float32 step


@pytest.mark.parametrize("d_model, rows", [(64, 100), (256, 1024)])
def test_the_roundest_of_two_laws_of_one_table_is_named_first(d_model, rows):
    """A user's concat table at base 1000 in numpy float64 is, in real numbers, tensor2tensor's
    at base 1000^((n-1)/n) (805.842 at d 64): both match, neither bit for bit. It was named
    tensor2tensor first, concat 4th; the roundest base comes first among equal matches."""
    w = 1000.0 ** (-2 * np.arange(d_model // 2) / d_model)
    angles = np.arange(rows)[:, None] * w
    found = pe_cli.identify(np.concatenate([np.sin(angles), np.cos(angles)], axis=1))
    best = found.candidates[0]
    assert (best.name, best.spec.base) == ("concat", 1000.0)
    assert not best.identical and best.difference.max_abs < 1e-12
    other = next(c for c in found.candidates if c.name == "tensor2tensor")
    assert other.spec.base != 1000.0 and other.difference.max_abs < 1e-12
