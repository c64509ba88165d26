"""The boxes family: GLIGEN's Fourier features of bounding boxes against diffusers'
get_fourier_embeds_from_boundingbox itself (bit for bit), the exact table against mpmath,
`compare FILE` reading the boxes back, and the refusals."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.reference import round_to


def _gligen_boxes(count=30, seed=0):
    """A GLIGEN pipeline's boxes: max_objs 30 rows, the first few boxes (x0 < x1, y0 < y1 in
    [0, 1], as python floats made float32), the rest zeros."""
    rng = np.random.default_rng(seed)
    corners = np.sort(rng.random((5, 2, 2)), axis=1)  # (box, low/high, x/y)
    boxes = np.zeros((count, 4), dtype=np.float32)
    boxes[:5] = np.concatenate([corners[:, 0], corners[:, 1]], axis=1).round(4)
    return boxes


def _diffusers(boxes, freqs):
    from diffusers.models.embeddings import get_fourier_embeds_from_boundingbox

    return get_fourier_embeds_from_boundingbox(freqs, torch.from_numpy(boxes)[None])[0].numpy()


@pytest.mark.parametrize("freqs", [8, 16, 3])
def test_diffusers_variant_is_the_function_bit_for_bit(tmp_path, freqs):
    boxes = _gligen_boxes()
    np.save(tmp_path / "boxes.npy", boxes)
    table = pe_cli.build(
        family="boxes", d_model=8 * freqs, boxes=str(tmp_path / "boxes.npy"), variant="diffusers"
    )
    assert np.array_equal(table.numpy(), _diffusers(boxes, freqs))


def test_inline_boxes_are_float32():
    """Written boxes are rounded to float32, as GLIGEN's pipeline holds them: 0.1 is float32 0.1."""
    inline = pe_cli.build(
        family="boxes", d_model=64, boxes="0.1,0.2,0.7,0.9;0,0,0,0", variant="diffusers"
    )
    expected = _diffusers(np.array([[0.1, 0.2, 0.7, 0.9], [0, 0, 0, 0]], dtype=np.float32), 8)
    assert np.array_equal(inline.numpy(), expected)


def test_exact_table_against_mpmath():
    """Element 8i + 4s + c: sin (s = 0) or cos of coordinate c times 100^(i/n), the coordinate
    the float32 value given."""
    boxes = _gligen_boxes()[:6]
    text = ";".join(",".join(repr(float(v)) for v in box) for box in boxes)
    table = pe_cli.build(family="boxes", d_model=64, boxes=text).numpy()
    for row in range(6):
        for i in range(8):
            w = mpmath.power(100, mpmath.mpf(i) / 8)
            for c in range(4):
                angle = mpmath.mpf(float(boxes[row, c])) * w
                assert table[row, 8 * i + c] == round_to(mpmath.sin(angle), "float32"), (row, i, c)
                assert table[row, 8 * i + 4 + c] == round_to(mpmath.cos(angle), "float32"), (
                    row,
                    i,
                    c,
                )


def test_base_is_the_familys_unless_given():
    assert pe_cli.TableSpec(family="boxes", boxes="0,0,1,1", d_model=16).base == 100.0
    assert pe_cli.TableSpec(d_model=16).base == 10000.0
    other = pe_cli.build(family="boxes", d_model=16, boxes="0,0.5,1,1", base=10000.0).numpy()
    assert other[0, 8 + 5] == round_to(
        mpmath.cos(mpmath.mpf(0.5) * mpmath.power(10000, mpmath.mpf(1) / 2)), "float32"
    )


@pytest.mark.parametrize("variant", ["diffusers", "exact"])
def test_compare_reads_the_boxes_back(cli, tmp_path, variant):
    boxes = _gligen_boxes(seed=3)
    np.save(tmp_path / "boxes.npy", boxes)
    table = pe_cli.build(
        family="boxes", d_model=64, boxes=str(tmp_path / "boxes.npy"), variant=variant
    ).numpy()
    np.save(tmp_path / "t.npy", table)
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    found = json.loads(out)
    best = found["candidates"][0]
    assert code == 0 and found["explained"] and best["differing"] == 0
    assert best["name"] == (
        "library diffusers" if variant == "diffusers" else "GLIGEN box features"
    )
    assert best["spec"]["base"] == 100.0 and best["spec"]["d_model"] == 64
    read = np.array(
        [[float(v) for v in box.split(",")] for box in best["spec"]["boxes"].split(";")],
        dtype=np.float32,
    )
    assert np.array_equal(read, boxes)
    code, _, err = cli(
        "generate",
        "--family",
        "boxes",
        "-d",
        "64",
        "--boxes",
        best["spec"]["boxes"],
        "--variant",
        best["spec"]["variant"],
        "-o",
        tmp_path / "again.npy",
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "again.npy"), table)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--family", "boxes"], "needs --boxes"),
        (["--family", "boxes", "--boxes", "0,0,1,1", "-d", "60"], "multiple of 8"),
        (["--family", "boxes", "--boxes", "0,0,1"], "four numbers"),
        (["--family", "boxes", "--boxes", "0,0,x,1"], "not boxes"),
        (["--family", "boxes", "--boxes", "0,0,1,1", "--offset", "2"], "--offset"),
        (
            ["--family", "boxes", "--boxes", "0,0,1,1", "--base", "50", "--variant", "diffusers"],
            "has base 100",
        ),
        (["--family", "boxes", "--boxes", "missing.npy"], "not a readable .npy"),
        (["--boxes", "0,0,1,1"], "--boxes belongs to --family boxes"),
    ],
)
def test_refusals(cli, args, message):
    code, _, err = cli("generate", *args)
    assert (
        code == 2
        and message in err
        and "Traceback" not in err
        and len(err.strip().splitlines()) == 1
    )
