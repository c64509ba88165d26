"""Every table pe-cli prints, at every width from 60 columns up: each number is whole, never cut,
folded or shortened, and is the figure the JSON (or the table itself) holds; a column that does
not fit is left out whole and named on one line; no line ends in spaces. And the sizes it prints
are read as a person reads them."""

import io
import json
import re

import numpy as np
import pytest

from pe_cli.analysis.compare import run
from pe_cli.engine import build

WIDTHS = (60, 80, 100, 160)
LEFT_OUT = re.compile(r"^left out at width (\d+): (.*) \((.*)\)$")


# ------------------------------------------------------------------------ reading what is shown


def _cells(line: str, bar: str) -> list[str]:
    return [cell.strip() for cell in line.split(bar)]


def parse(text: str) -> list[dict]:
    """The tables in `text`: each {"headers", "rows" (each cell the list of its lines' pieces),
    "left_out" (names, or [])}. A row starts where its first cell and another cell have text
    (an elision row: every cell '…'); other lines continue the row above."""
    lines = text.splitlines()
    tables, k = [], 0
    while k < len(lines):
        if "┃" not in lines[k]:
            k += 1
            continue
        heads = []
        while "┃" in lines[k]:
            heads.append(_cells(lines[k], "┃"))
            k += 1
        assert "╇" in lines[k], lines[k]
        k += 1
        headers = [" ".join(p for p in column if p) for column in zip(*heads)]
        rows = []
        while k < len(lines) and "│" in lines[k]:
            cells = _cells(lines[k], "│")
            assert len(cells) == len(headers), lines[k]
            if not rows or (cells[0] and any(cells[1:])):
                rows.append([[c] if c else [] for c in cells])
            else:
                for column, c in zip(rows[-1], cells):
                    column.extend([c] if c else [])
            k += 1
        note = []  # the line naming the columns left out, wrapped over lines
        if k < len(lines) and lines[k].startswith("left out"):
            while k < len(lines) and lines[k] and not any(bar in lines[k] for bar in "┃│"):
                note.append(lines[k])
                k += 1
        found = LEFT_OUT.match(" ".join(note))
        left_out = []
        for name in found[2].split("; ") if found else []:
            run = re.fullmatch(r"d(\d+)\.\.d(\d+)", name)  # d4..d63: every one of them
            left_out += [f"d{j}" for j in range(int(run[1]), int(run[2]) + 1)] if run else [name]
        tables.append({"headers": headers, "rows": rows, "left_out": left_out})
    return tables


def _digits(cell: str) -> int:
    mantissa = re.fullmatch(r"-?(\d*)\.?(\d*)(e[+-]\d+)?", cell)
    assert mantissa, f"{cell!r} is not a whole number"
    return max(1, len((mantissa[1] + mantissa[2]).lstrip("0")))


def same(cell: list[str], value) -> None:
    """One piece (a number never breaks over lines) that is `value` to the digits it shows."""
    assert len(cell) == 1, f"a number split over lines: {cell}"
    text = cell[0]
    assert "…" not in text, f"a number cut short: {text}"
    if value is None:
        assert text == "-"
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        assert int(text) == value, (text, value)
    else:
        assert float(text) == float(f"{float(value):.{_digits(text)}g}"), (text, value)


def lines_are_clean(text: str, width: int) -> None:
    from rich.cells import cell_len

    for line in text.splitlines():
        assert not line.endswith(" "), f"trailing spaces: {line!r}"
        assert cell_len(line) <= width, f"wider than {width}: {line!r}"


def check(table: dict, key, figures: dict, everything: list[str]) -> None:
    """Every row's key is known and every cell is its figure; the columns shown and those named
    as left out are all the columns, once each."""
    assert table["headers"][0] == everything[0]
    assert sorted(table["headers"][1:] + table["left_out"]) == sorted(everything[1:])
    assert table["rows"]
    for row in table["rows"]:
        name = " ".join(row[0])
        if name == "…":
            assert all(cell == ["…"] for cell in row)
            continue
        found = key(name)
        for header, cell in zip(table["headers"][1:], row[1:]):
            figures[header](cell, found)


def _render(monkeypatch, capsys, width: int, show) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    show()
    return capsys.readouterr().out


# -------------------------------------------------------------------------------- compare


def _audit_figures(result):
    return {
        "max |err|": lambda c, d: same(c, d.max_abs),
        "mean |err|": lambda c, d: same(c, d.mean_abs),
        "RMS": lambda c, d: same(c, d.rms),
        # ulps only where the error is small beside the values, "-" where it is as large
        f"max ulp ({result.ulps})": lambda c, d: same(c, d.max_ulps if d.counted_in_ulps else None),
        "worst at (p, d)": lambda c, d: _pair(c, d.worst),
        f"first p with |err| > {result.rows[0][1].threshold:g}": (
            lambda c, d: same(c, d.first_over)
        ),
        "within tol": lambda c, d: _word(c, "yes" if d.within else "NO"),
    }


def _pair(cell, pair):
    assert len(cell) == 1 and re.fullmatch(r"\((\d+), (\d+)\)", cell[0]), cell
    assert tuple(map(int, re.findall(r"\d+", cell[0]))) == tuple(pair)


def _word(cell, word):
    assert cell == [word], (cell, word)


@pytest.fixture(scope="module")
def audits():
    return [
        run(None, None, {"d_model": 64, "seq_len": 256}).result,
        run(None, None, {"family": "rope", "d_model": 128, "seq_len": 4096}, 1e-3).result,
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_audit_tables_keep_every_number_whole(audits, monkeypatch, capsys, width):
    """The issue's example, `compare --family rope -d 128 -l 4096` at 80 columns, split
    '3.349e+0' from its '7' and cut 'rope-inv-f' / 'req'."""
    from pe_cli import render

    for result in audits:
        text = _render(monkeypatch, capsys, width, lambda r=result: render.audit(r))
        lines_are_clean(text, width)
        audit, bands = parse(text)
        named = dict(result.rows)
        figures = _audit_figures(result)
        everything = ["variant", *figures]
        if all(d.within is None for d in named.values()):
            everything.remove("within tol")
        check(audit, named.__getitem__, figures, everything)
        for row in audit["rows"]:  # a name breaks at its spaces only
            assert " ".join(row[0]) in named
        stops = [f"p<{stop}" for _, stop, _ in result.rows[0][1].bands]
        band_figures = {
            f"p<{stop}": (lambda c, d, k=k: same(c, d.bands[k][2]))
            for k, (_, stop, _) in enumerate(result.rows[0][1].bands)
        }
        check(bands, named.__getitem__, band_figures, ["variant", *stops])
        if width >= 160:
            assert not audit["left_out"] and not bands["left_out"]
        if bands["left_out"]:  # the first bands go first: the last is the error at the longest
            assert bands["left_out"] == stops[: len(bands["left_out"])]


def test_narrow_audit_leaves_out_the_least_useful_columns_first(audits, monkeypatch, capsys):
    from pe_cli import render

    text = _render(monkeypatch, capsys, 60, lambda: render.audit(audits[1]))
    audit = parse(text)[0]
    assert audit["left_out"][:2] == ["RMS", "mean |err|"] or audit["left_out"][:2] == [
        "mean |err|",
        "RMS",
    ]
    assert "max |err|" in audit["headers"] and "within tol" in audit["headers"]
    assert "left out at width 60: " in text and "(--json has them)" in text


@pytest.fixture(scope="module")
def identification(tmp_path_factory):
    path = tmp_path_factory.mktemp("identify") / "el.npy"
    np.save(path, build(d_model=64, seq_len=256, variant="exp-log").numpy())
    return run(str(path), None, {}).result


@pytest.mark.parametrize("width", WIDTHS)
def test_candidates_table_keeps_every_number_whole(identification, monkeypatch, capsys, width):
    """Its errors say what they are measured against: the exact table the candidate names."""
    from pe_cli import render

    text = _render(monkeypatch, capsys, width, lambda: render.identification(identification))
    lines_are_clean(text, width)
    (candidates,) = parse(text)
    named = {c.name: c for c in identification.candidates}
    bits = {True: "yes", False: "no"}
    figures = {
        "base": lambda c, x: same(c, x.spec.base),
        "offset": lambda c, x: same(c, x.spec.offset),
        "bit-identical to file": lambda c, x: _word(c, bits[x.identical]),
        "max |err| vs true values": lambda c, x: same(c, x.difference.max_abs),
        "max ulp vs true values (float32)": lambda c, x: same(
            c, x.difference.max_ulps if x.difference.counted_in_ulps else None
        ),
    }
    check(candidates, named.__getitem__, figures, ["convention / variant", *figures])
    assert any(named[" ".join(row[0])].identical for row in candidates["rows"])


# ------------------------------------------------------------------------------ generate


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_corner_values_are_whole(cli, width, dtype):
    """`generate --dtype float64` at 80 columns cut '-0.4161468…'."""
    args = ["generate", "-d", "512", "-l", "1024", "--dtype", dtype]
    code, out, err = cli(*args, env={"COLUMNS": str(width)})
    assert code == 0, err
    text = out.decode()
    lines_are_clean(text, width)
    table = np.load(io.BytesIO(cli(*args, "-o", "-")[1])).astype(np.float64)
    (corners,) = parse(text)
    figures = {f"d{j}": (lambda c, p, j=j: same(c, table[p, j])) for j in range(4)}
    figures["… d511"] = lambda c, p: same(c, table[p, 511])
    check(corners, int, figures, ["position", *figures])
    assert [" ".join(r[0]) for r in corners["rows"]] == [*"0123", "…", *map(str, range(1020, 1024))]
    assert ("d0" in corners["headers"]) and ("… d511" in corners["headers"])  # kept the longest
    min_max = next(line for line in text.splitlines() if line.startswith("min / max"))
    low, high = min_max.split()[-3::2]
    same([low], table.min())
    same([high], table.max())


# ---------------------------------------------------------------------------------- show


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "args",
    [
        ["-d", "64", "-l", "300", "--dtype", "float64"],
        ["-d", "48", "-l", "40", "--rows", "30:38", "--cols", "0:12"],  # asked for: all, in parts
        ["--family", "rope", "-d", "32", "-l", "64", "--convention", "interleaved"],
        ["--family", "sincos2d", "--grid", "4x6", "-d", "32"],
    ],
)
def test_show_window_and_frequencies_are_whole(cli, width, args):
    env = {"COLUMNS": str(width)}
    code, out, err = cli("show", *args, env=env)
    assert code == 0, err
    text = out.decode()
    lines_are_clean(text, width)
    table_args = [a for a in args if a not in ("--rows", "--cols") and ":" not in a]
    table = np.load(io.BytesIO(cli("generate", *table_args, "-o", "-")[1]))
    table = table.reshape(-1, table.shape[-1]).astype(np.float64)
    facts = json.loads(cli("show", *table_args, "--json")[1])
    found = parse(text)
    frequencies, window = found[0], found[1:]
    listed = {str(f["index"]): f for f in facts["frequencies"]}
    figures = {
        "sin col": lambda c, f: same(c, f["sin_column"]),
        "cos col": lambda c, f: same(c, f["cos_column"]),
        "frequency w_i": lambda c, f: same(c, f["frequency"]),
        "wavelength 2π/w_i": lambda c, f: same(c, f["wavelength"]),
        "columns": lambda c, f: None,
    }
    heads = ["i", *(h for h in figures if h in frequencies["headers"] + frequencies["left_out"])]
    check(frequencies, listed.__getitem__, figures, heads)
    asked = "--cols" in args
    rows = [p for p in range(30, 38)] if asked else list(range(8))
    shown = []
    for part in window:
        labels = [" ".join(r[0]) for r in part["rows"]]
        assert len(labels) == len(rows)
        for header in part["headers"][1:]:
            j = int(header[1:])
            shown.append(j)
            for r, row in zip(rows, part["rows"]):
                same(row[part["headers"].index(header)], table[r, j])
    if asked:  # every column asked for is shown, in parts where they do not fit
        assert sorted(shown) == list(range(12)) and not window[-1]["left_out"]
        assert len(window) > 1 or width >= 160  # twelve columns of 10 digits need 160
    else:
        assert shown == list(range(len(shown))) and len(window) == 1
        left = window[0]["left_out"]
        assert left == [f"d{j}" for j in range(len(shown), table.shape[1])]


# ---------------------------------------------------------------------- no trailing spaces


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "-d", "16", "-l", "8"],
        ["show", "-d", "16", "-l", "8"],
        ["show", "--family", "rope", "-d", "16", "-l", "8"],
        ["compare", "-d", "16", "-l", "32"],
        ["compare", "exact", "exp-log", "-d", "16", "-l", "32"],
        ["compare", "--family", "alibi", "--heads", "4"],
        ["compare", "--family", "alibi", "--heads", "4", "--atol", "1e-3"],
    ],
)
def test_no_line_ends_in_spaces(cli, args):
    """Piped, rich padded every line of a grid to the terminal's width."""
    for width in (60, 100):
        code, out, err = cli(*args, env={"COLUMNS": str(width)})
        assert code == 0, err
        for line in (out.decode() + err).splitlines():
            assert not line.endswith(" "), (args, line)


def test_a_plain_heatmap_keeps_its_lowest_value(cli):
    """The one exception: in a plain heatmap a space is a value (the ramp's lowest), so its
    picture rows keep their width."""
    text = cli("show", "-d", "64", "-l", "64", "--heatmap")[1].decode()
    assert all(len(line) == 64 for line in text.splitlines()[1:-1])
    # its title and legend are words, which wrap at spaces and are trimmed (the ramp has no
    # letters)
    for width in (60, 80):
        text = cli("show", "-d", "128", "-l", "100", "--heatmap", env={"COLUMNS": str(width)})[1]
        words = [line for line in text.decode().splitlines() if any(c.isalpha() for c in line)]
        assert len(words) >= (3 if width == 60 else 2), words  # at 60 the title wraps
        assert not any(line.endswith(" ") for line in words), words


# ------------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    "nbytes, shown",
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (1023, "1023 bytes"),
        (1024, "1.0 KiB"),
        (6 * 128 * 4, "3.0 KiB"),  # README's 6 x 128 float32 table, once '0.0 MiB'
        (10 * 1024 - 1, "10 KiB"),  # 9.999 KiB reads as 10
        (500 * 1024, "500 KiB"),
        (2**20 - 1, "1.0 MiB"),  # 1023.999 KiB: the next unit
        (4 * 2**20, "4.0 MiB"),
        (156.3 * 2**20, "156 MiB"),
        (int(1.5 * 2**30), "1.5 GiB"),
        (255 * 2**40, "255 TiB"),
    ],
)
def test_sizes_read_as_a_person_reads_them(nbytes, shown):
    from pe_cli.core.limits import human_size

    assert human_size(nbytes) == shown


def test_written_size_is_not_zero(cli, tmp_path):
    code, _, err = cli("generate", "-d", "128", "-l", "6", "-o", tmp_path / "small.npy")
    assert code == 0 and err.startswith(f"wrote {tmp_path / 'small.npy'} (3.1 KiB)")
