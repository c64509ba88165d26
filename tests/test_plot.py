"""Figures: `show --plot`, `compare --plot`, pe_cli.plot. The data behind each figure is read
back from the matplotlib Figure (the points of its lines, its steps, its image) and checked
against an independent computation: numpy's float64 sin and cos of the formula, and bin
maxima found by brute force. The files are checked to open with their size and format."""

import os
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest

import pe_cli

ROOT = Path(__file__).resolve().parent.parent


def _angles(positions, d, base=10000.0):
    """float64 p * w_i of the sinusoidal table's frequencies w_i = base^(-2i/d)."""
    return (
        np.asarray(positions, dtype=float)[:, None] * base ** (-2 * np.arange(d // 2) / d)[None, :]
    )


def _vaswani(positions, d):
    """The table of 'Attention Is All You Need' in float64: sin in even columns, cos in odd."""
    angles = _angles(positions, d)
    table = np.empty((len(angles), d))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


def _brute_bins(values, edges, reduce):
    """Each bin of rows [edges[k], edges[k + 1]) reduced by `reduce`, one bin at a time."""
    return np.array([reduce(values[a:b]) for a, b in zip(edges[:-1], edges[1:])])


def _linear_edges(count, most):
    # the documented binning: at most `most` nearly equal bins, every row its own while they fit
    return (
        np.arange(count + 1)
        if count <= most
        else np.unique(np.round(np.linspace(0, count, most + 1)).astype(int))
    )


def _steps(axes):
    """(values, edges, baseline) of each step series drawn (matplotlib StepPatch)."""
    return [patch.get_data() for patch in axes.patches]


# ---------------------------------------------------------------------------------------------
# The data behind each figure


def test_heatmap_is_the_table_with_positions_down():
    figure = pe_cli.plot(d_model=32, seq_len=40)
    axes = figure.axes[0]
    image = axes.images[0].get_array()
    assert np.allclose(image, _vaswani(range(40), 32), atol=1e-6, rtol=0)
    assert axes.get_xlabel() == "dimension" and axes.get_ylabel() == "position"
    left, right, bottom, top = axes.images[0].get_extent()
    assert (left, right, bottom, top) == (-0.5, 31.5, 39.5, -0.5)  # position 0 at the top
    limits = axes.images[0].get_clim()
    assert limits[0] == -limits[1]  # the colour scale is centred on 0
    heading = axes.get_title(loc="left")  # the summary's words
    assert all(
        words in heading
        for words in ("shape 40 x 32", "dtype float32", "convention vaswani", "base 10000")
    )


def test_a_large_heatmap_keeps_a_spike(tmp_path):
    """20000 x 700 binned into 512 x 512 cells: each cell is the value of largest magnitude
    in its bin (a planted -7 survives), found by brute force bin by bin."""
    table = _vaswani(range(20000), 700).astype(np.float32)
    table[12345, 333] = -7.0
    np.save(tmp_path / "t.npy", table)
    image = pe_cli.plot(str(tmp_path / "t.npy")).axes[0].images[0].get_array()
    rows, cols = _linear_edges(20000, 512), _linear_edges(700, 512)
    assert image.shape == (len(rows) - 1, len(cols) - 1)
    wide = table.astype(np.float64)
    for r in (0, 200, int(np.searchsorted(rows, 12345, side="right")) - 1, len(rows) - 2):
        for c in (0, 100, int(np.searchsorted(cols, 333, side="right")) - 1, len(cols) - 2):
            cell = wide[rows[r] : rows[r + 1], cols[c] : cols[c + 1]].ravel()
            assert image[r, c] == cell[np.argmax(np.abs(cell))], (r, c)
    assert image.min() == -7.0


def test_curves_are_the_columns_picked(cli, tmp_path):
    figure = pe_cli.plot(d_model=32, seq_len=100, kind="curves", cols="4:8")
    lines = figure.axes[0].lines
    assert [line.get_label() for line in lines] == [f"dimension {c}" for c in range(4, 8)]
    expected = _vaswani(range(100), 32)
    for c, line in zip(range(4, 8), lines):
        assert np.array_equal(line.get_xdata(), np.arange(100))
        assert np.allclose(line.get_ydata(), expected[:, c], atol=1e-6, rtol=0)


def test_curves_over_many_positions_are_each_bins_minimum_to_maximum(tmp_path):
    table = _vaswani(range(50000), 16).astype(np.float32)
    table[31337, 1] = 5.0  # a spike a decimation would miss
    np.save(tmp_path / "t.npy", table)
    figure = pe_cli.plot(str(tmp_path / "t.npy"), kind="curves", cols="0:2", rows="0:50000")
    edges = _linear_edges(50000, 4096)
    for c, (high, x, low) in enumerate(_steps(figure.axes[0])):
        assert np.array_equal(x, edges)
        assert np.array_equal(high, _brute_bins(table[:, c].astype(float), edges, np.max))
        assert np.array_equal(low, _brute_bins(table[:, c].astype(float), edges, np.min))
    assert _steps(figure.axes[0])[1][0].max() == 5.0


def test_curves_default_to_eight_periods_of_the_fastest_column():
    """Over 1024 positions, columns 0..3 of the paper's table turn at w = 1 and 10000^(-2/512):
    some 160 periods, a solid blob. By default the figure draws 8 periods of the fastest,
    2 pi / 1 positions each, and says so under its axis; --rows draws what it names."""
    import math

    figure = pe_cli.plot(d_model=512, seq_len=1024, kind="curves")
    axes = figure.axes[0]
    for line in axes.lines:
        positions = line.get_xdata()
        assert positions[0] == 0 and 8 * 2 * math.pi <= positions[-1] < 9 * 2 * math.pi
    assert f"positions 0..{int(positions[-1])} of 0..1023: 8 periods" in axes.get_xlabel()
    whole = pe_cli.plot(d_model=512, seq_len=1024, kind="curves", rows="0:1024").axes[0]
    assert whole.lines[0].get_xdata()[-1] == 1023 and "periods" not in whole.get_xlabel()
    # columns 500..503 turn once in 50000 positions or more: every position is drawn
    slow = pe_cli.plot(d_model=512, seq_len=1024, kind="curves", cols="500:504").axes[0]
    assert slow.lines[0].get_xdata()[-1] == 1023 and "periods" not in slow.get_xlabel()


@pytest.mark.parametrize(
    "kind, args",
    [
        ("curves", {"d_model": 512, "seq_len": 1024}),
        ("curves", {"d_model": 32, "seq_len": 100, "cols": "4:8"}),
        ("similarity", {"d_model": 128, "seq_len": 1024, "rows": "512"}),
        (
            "wavelengths",
            {"family": "rope", "d_model": 128, "rope": {"rope_type": "linear", "factor": 4}},
        ),
        ("errors", {"d_model": 64, "seq_len": 4096}),
    ],
)
def test_the_legend_covers_no_data(kind, args):
    """The legend sits beside the axes, never on the lines (it used to cover the curves)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure = pe_cli.plot(kind=kind, **args)
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    (legend,) = figure.legends
    box = legend.get_window_extent(renderer)
    axes = figure.axes[0].get_window_extent(renderer)
    assert box.x0 >= axes.x1, (box, axes)  # wholly to the right of the plotting area
    assert box.y1 <= figure.bbox.y1 and box.x1 <= figure.bbox.x1  # and on the figure


def test_similarity_is_the_dot_product_with_position_p(cli):
    """PE[p] . PE[q] = sum_i sin(p w) sin(q w) + cos(p w) cos(q w) = sum_i cos((q - p) w_i)."""
    figure = pe_cli.plot(d_model=64, seq_len=300, kind="similarity", rows="120")
    line = figure.axes[0].lines[0]
    expected = np.cos(_angles(np.arange(300) - 120, 64)).sum(axis=1)
    assert np.array_equal(line.get_xdata(), np.arange(300))
    assert np.allclose(line.get_ydata(), expected, atol=2e-5, rtol=0)
    assert figure.axes[0].lines[1].get_xdata()[0] == 120  # the line at p


def test_wavelengths_with_and_without_yarn_against_transformers():
    """The scaled wavelengths are 2 pi / inv_freq of transformers' own YaRN; the unscaled
    2 pi base^(2i/d); lines at the original and the scaled context and the table's length."""
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    figure = pe_cli.plot(family="rope", d_model=128, seq_len=4096, rope=rope, kind="wavelengths")
    scaled, plain, *marks = figure.axes[0].lines
    config = LlamaConfig(
        hidden_size=128,
        num_attention_heads=1,
        max_position_embeddings=8192,
        rope_parameters={"rope_theta": 10000.0, **rope},
    )
    inv_freq, _ = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    assert np.allclose(scaled.get_ydata(), 2 * np.pi / inv_freq.double().numpy(), rtol=1e-6)
    assert np.allclose(
        plain.get_ydata(), 2 * np.pi * 10000.0 ** (2 * np.arange(64) / 128), rtol=1e-12
    )
    assert figure.axes[0].get_yscale() == "log"
    assert sorted(line.get_ydata()[0] for line in marks) == [2048, 4096, 8192]


def test_errors_of_every_recipe_are_per_bin_maxima():
    """compare's audit: each recipe's max |error| per bin of positions, against its table and
    numpy's float64 sin and cos (both far closer to the truth than float32's errors)."""
    figure = pe_cli.plot(kind="errors", d_model=64, seq_len=3000)
    axes = figure.axes[0]
    assert axes.get_xscale() == "symlog" and axes.get_yscale() == "log"
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    truth = _vaswani(range(3000), 64)
    checked = 0
    for (top, edges, _), label in zip(_steps(axes), labels):
        name = label.split(" ")[0]
        table = pe_cli.build(
            d_model=64, seq_len=3000, variant=name, compute_dtype="float32"
        ).float64()
        brute = _brute_bins(np.abs(table.reshape(3000, 64) - truth).max(axis=1), edges, np.max)
        shown = np.nan_to_num(top, nan=0.0)  # gaps: bins with no error
        assert np.allclose(shown, brute, rtol=1e-6, atol=1e-12), name
        checked += 1
    assert checked >= 5 and len(edges) - 1 <= 512 and edges[0] == 0 and edges[-1] == 3000


def test_errors_of_two_files_are_their_difference(cli, tmp_path):
    a = _vaswani(range(700), 8).astype(np.float32)
    b = a.copy()
    b[600, 3] += 1e-3
    b[5, 0] += 1e-6
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    figure = pe_cli.plot(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), kind="errors")
    ((top, edges, _),) = _steps(figure.axes[0])
    brute = _brute_bins(np.abs(a.astype(float) - b).max(axis=1), edges, np.max)
    assert np.array_equal(np.nan_to_num(top, nan=0.0), brute)
    assert np.isnan(top[0]) and top[5] > 0  # bit-equal rows are gaps on the log axis


def test_compare_file_plots_its_candidates(cli, tmp_path):
    table = pe_cli.build(
        d_model=64, seq_len=500, variant="exp-log", compute_dtype="float32"
    ).numpy()
    np.save(tmp_path / "t.npy", table)
    code, _, err = cli("compare", tmp_path / "t.npy", "--plot", tmp_path / "c.svg")
    assert code == 0 and "wrote" in err
    text = (tmp_path / "c.svg").read_text()
    assert "bit-identical" in text and "exp-log" in text


# ---------------------------------------------------------------------------------------------
# Files


def _png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("kind", ["heatmap", "curves", "similarity", "wavelengths"])
@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_every_kind_writes_every_format(cli, tmp_path, kind, fmt):
    path = tmp_path / f"f.{fmt}"
    code, out, err = cli(
        "show",
        "--family",
        "rope",
        "-d",
        "64",
        "--seq-len",
        "300",
        "--rope",
        "rope_type=linear",
        "--rope",
        "factor=2",
        "--plot",
        path,
        "--plot-kind",
        kind,
    )
    assert code == 0 and out == b"" and err.strip() == f"wrote {path} ({fmt}): {kind}"
    _opens(path, fmt)


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_compare_writes_every_format(cli, tmp_path, fmt):
    code, _, _ = cli("compare", "-d", "64", "--seq-len", "256", "--plot", tmp_path / f"e.{fmt}")
    assert code == 0
    _opens(tmp_path / f"e.{fmt}", fmt)


@pytest.mark.parametrize("extension", ["jpg", "jpeg", "webp", "tif", "tiff"])
def test_pillow_formats_are_written(cli, tmp_path, extension):
    """What matplotlib writes through Pillow: the image opens as its format, 960 x 600."""
    from PIL import Image

    path = tmp_path / f"f.{extension}"
    code, out, err = cli("show", "-d", "64", "--seq-len", "100", "--plot", path)
    name = {"jpg": "jpeg", "tif": "tiff"}.get(extension, extension)
    assert code == 0 and out == b"" and err.strip() == f"wrote {path} ({name}): heatmap"
    with Image.open(path) as image:
        assert image.format == name.upper() and image.size == (960, 600)


def test_webp_is_refused_where_pillow_cannot_write_it(cli, tmp_path, monkeypatch):
    from PIL import features

    monkeypatch.setattr(features, "check", lambda name: name != "webp")
    code, out, err = cli("show", "-d", "8", "--plot", tmp_path / "f.webp")
    assert code == 2 and out == b"" and "built without WebP; use .png" in err
    assert not list(tmp_path.iterdir())


def _opens(path, fmt):
    """The file is a whole figure of its format, 8 x 5 inches (960 x 600 pixels at 120 dpi)."""
    data = path.read_bytes()
    if fmt == "png":
        assert _png_size(data) == (960, 600)
        from matplotlib.image import imread

        assert imread(path).shape[:2] == (600, 960)
    elif fmt == "svg":
        root = ElementTree.fromstring(data)
        assert root.tag.endswith("svg") and (root.get("width"), root.get("height")) == (
            "576pt",
            "360pt",
        )
    else:
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
        assert b"/MediaBox [ 0 0 576 360 ]" in data


@pytest.mark.parametrize("extension", ["png", "svg", "pdf", "jpg", "webp", "tif"])
def test_the_same_figure_makes_the_same_file(cli, tmp_path, extension):
    """No date and no random ids in the file (an SVG's ids came from a hash salted by time)."""
    for name in ("a", "b"):
        path = tmp_path / f"{name}.{extension}"
        assert cli("show", "-d", "16", "--seq-len", "20", "--plot", path)[0] == 0
        time.sleep(1.1)  # a clock in the file would read another second
    assert (tmp_path / f"a.{extension}").read_bytes() == (tmp_path / f"b.{extension}").read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["show", "--plot", "f.gif"],
            "from its extension: .png, .svg, .pdf, .jpg, .jpeg, .webp, .tif, .tiff",
        ),
        (["show", "--plot", "f.eps"], "from its extension: .png, .svg"),  # dated by matplotlib
        (["show", "--plot-kind", "curves"], "--plot-kind chooses the figure"),
        (
            ["show", "--family", "alibi", "--plot", "f.png", "--plot-kind", "wavelengths"],
            "lists no frequencies of the family's alibi tables",
        ),
        (
            [
                "show",
                "-d",
                "8",
                "--seq-len",
                "10",
                "--rows",
                "20:30",
                "--plot",
                "f.png",
                "--plot-kind",
                "similarity",
            ],
            "selects nothing",
        ),
        (["compare", "-d", "8", "--plot", "f.gif"], "from its extension"),
        (["show", "-d", "8", "--plot", "f.png", "--json"], "drop --json and --heatmap"),
    ],
)
def test_bad_plot_requests(cli, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(*args)
    assert (
        code == 2
        and message in err
        and "Traceback" not in err
        and len(err.strip().splitlines()) == 1
    )
    assert os.listdir(tmp_path) == []  # nothing written, not even in part


def test_a_file_is_not_replaced_without_force(cli, tmp_path):
    path = tmp_path / "f.png"
    path.write_bytes(b"mine")
    code, _, err = cli("show", "-d", "8", "--plot", path)
    assert code == 2 and "exists; pass --force" in err and path.read_bytes() == b"mine"
    assert cli("show", "-d", "8", "--plot", path, "--force")[0] == 0 and _png_size(
        path.read_bytes()
    )


def test_wavelengths_of_a_foreign_file_is_refused(cli, tmp_path):
    np.save(tmp_path / "t.npy", np.zeros((4, 4), dtype=np.float32))
    code, _, err = cli(
        "show", tmp_path / "t.npy", "--plot", tmp_path / "w.png", "--plot-kind", "wavelengths"
    )
    assert code == 2 and "needs the table's frequencies" in err


# ---------------------------------------------------------------------------------------------
# matplotlib only when asked for


def _run(code: str):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def test_without_matplotlib_plot_names_the_extra(tmp_path):
    found = _run(
        "import sys; sys.modules['matplotlib'] = None\n"  # as if it were not installed
        f"sys.argv = ['pe-cli', 'show', '-d', '8', '--plot', {str(tmp_path / 'f.png')!r}]\n"
        "import pe_cli; pe_cli.main()"
    )
    assert found.returncode == 2 and found.stdout == ""
    assert found.stderr.strip().splitlines() == [
        "Error: --plot needs matplotlib, which the plot extra installs: pip install 'pe-cli[plot]'"
    ]
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["show", "--help"],
        ["show", "-d", "8", "--seq-len", "4"],
        ["show", "-d", "8", "--heatmap"],
    ],
)
def test_help_and_show_import_no_matplotlib(args):
    found = _run(
        f"import sys; sys.argv = ['pe-cli', *{args!r}]\n"
        "import pe_cli\n"
        "try:\n    pe_cli.main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'), file=sys.stderr)"
    )
    assert found.stderr.strip().splitlines()[-1] == "[]"


# ---------------------------------------------------------------------------------------------
# The figures of docs/figures.md


def test_the_examples_script_makes_the_readme_figures(tmp_path):
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    found = subprocess.run(
        ["bash", ROOT / "examples" / "figures.sh", tmp_path],
        capture_output=True,
        text=True,
        env=env,
    )
    assert found.returncode == 0, found.stderr
    documented = (ROOT / "docs" / "figures.md").read_text()
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == [
        "curves.png",
        "errors.png",
        "heatmap.png",
        "precision.png",
        "similarity.png",
        "wavelengths.png",
    ]
    for name in made:  # 8 x 5 inches at 120 dpi; the two panels of precision 8 x 7.5
        tall = name == "precision.png"
        assert _png_size((tmp_path / name).read_bytes()) == (960, 900 if tall else 600)
        assert f"](../examples/{name})" in documented and (ROOT / "examples" / name).exists()


def test_the_readme_python_block_runs(tmp_path, monkeypatch):
    import re

    block = re.search(
        r"```python\n(import pe_cli\npe_cli\.plot\(.*?)```",
        (ROOT / "docs" / "figures.md").read_text(),
        flags=re.S,
    )
    monkeypatch.chdir(tmp_path)
    np.save("table.npy", _vaswani(range(50), 16).astype(np.float32))
    exec(block.group(1), {})
    assert ElementTree.parse("errors.svg").getroot().tag.endswith("svg")
