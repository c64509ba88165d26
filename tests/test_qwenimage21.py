"""Qwen-Image 2.1 (--preset qwenimage21), a model added as one module (families/rope/models/
qwenimage21.py) and its preset's line in the registry: its table against diffusers' own
QwenImage21Rope over the joint sequence its pipeline and transformer lay out, bit for bit; an
edit's condition image as --ids; the exact table against mpmath."""

import json

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.reference import round_to


def _module(img_shapes, image_pad_mask):
    """cos and sin (the real and imaginary parts) of diffusers' QwenImage21Rope as the
    transformer builds it (theta 10000, its axes_dims_rope 16, 56, 56)."""
    from diffusers.models.transformers.transformer_qwenimage21 import QwenImage21Rope

    table = QwenImage21Rope(theta=10000, axes_dim=[16, 56, 56])(
        img_shapes, image_pad_mask, torch.device("cpu")
    )
    assert table.dtype == torch.complex64
    return table.real.numpy(), table.imag.numpy()


def _text_to_image(rows, cols, text):
    """The text-to-image pipeline's sequence: `text` prompt tokens, then one slot per 2x2 group
    of the target's latents (append_target_slots), each slot expanded to its four tokens as the
    transformer's forward does."""
    from diffusers.models.transformers.transformer_qwenimage21 import _IMG_TOKENS_PER_SLOT

    img_mask = torch.cat(
        [torch.zeros(1, text, dtype=torch.bool), torch.ones(1, rows * cols // 4, dtype=torch.bool)],
        dim=1,
    )
    repeats = torch.where(img_mask, _IMG_TOKENS_PER_SLOT, 1)[0]
    image_pad_mask = torch.repeat_interleave(img_mask[0], repeats)
    return _module([(1, rows, cols)], image_pad_mask)


def _build(part, variant="diffusers", **tokens):
    return pe_cli.build(preset="qwenimage21", variant=variant, part=part, **tokens).numpy()


@pytest.mark.parametrize("rows, cols, text", [(6, 10, 5), (64, 64, 300), (48, 80, 77)])
def test_the_diffusers_variant_is_the_module_bit_for_bit(rows, cols, text):
    cos, sin = _text_to_image(rows, cols, text)
    for part, expected in (("cos", cos), ("sin", sin)):
        table = _build(part, grid=f"{rows}x{cols}", text_tokens=text)
        assert table.dtype == expected.dtype and np.array_equal(table, expected), part


def test_odd_sizes_are_centred_as_the_module_centres_them():
    """Rows and columns at k - ceil(G/2) (-7 .. 5 of 13), as the module places an odd block."""
    text, rows, cols = 9, 13, 19
    mask = torch.cat(
        [torch.zeros(text, dtype=torch.bool), torch.ones(rows * cols, dtype=torch.bool)]
    )
    cos, sin = _module([(1, rows, cols)], mask)
    for part, expected in (("cos", cos), ("sin", sin)):
        assert np.array_equal(_build(part, grid=f"{rows}x{cols}", text_tokens=text), expected)


def test_an_edit_s_condition_image_is_its_ids_bit_for_bit():
    """An edit: 6 text tokens, a 4 x 6 condition image (frame 6, the position then advancing by
    max(4, 6)), 3 more text tokens at 12 .. 14, then the 8 x 10 target at frame 15."""
    mask = torch.cat(
        [
            torch.zeros(6, dtype=torch.bool),
            torch.ones(24, dtype=torch.bool),
            torch.zeros(3, dtype=torch.bool),
            torch.ones(80, dtype=torch.bool),
        ]
    )
    cos, sin = _module([(1, 4, 6), (1, 8, 10)], mask)
    runs = "6*0:6,0:6,0:6; 6,-2:2,-3:3; 3*12:15,12:15,12:15; 15,-4:4,-5:5"
    for part, expected in (("cos", cos), ("sin", sin)):
        assert np.array_equal(_build(part, ids=runs), expected), part


def test_a_grid_of_several_frames_is_refused(cli):
    code, _, err = cli("generate", "--preset", "qwenimage21", "--grid", "2x4x4")
    assert code == 2 and "one frame" in err
    assert _build("cos", grid="1x4x4", text_tokens=2).shape == (18, 64)


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_the_exact_table_against_mpmath(part):
    """Column c is frequency i of axis t (c < 8, theta**(-2i/16)), h (8 <= c < 36) or w
    (theta**(-2i/56)), once each (complex); text token k at (k, k, k), patch (r, s) of the
    4 x 6 grid at (3, r - 2, s - 3)."""
    table = _build(part, variant="exact", grid="4x6", text_tokens=3)
    positions = {
        0: (0, 0, 0),
        2: (2, 2, 2),
        3: (3, -2, -3),
        14: (3, -1, 2),
        17: (3, 0, -1),
        26: (3, 1, 2),
    }
    for row, position in positions.items():
        for c in (0, 1, 7, 8, 9, 20, 35, 36, 37, 50, 63):
            axis, i, dim = (0, c, 16) if c < 8 else (1, c - 8, 56) if c < 36 else (2, c - 36, 56)
            angle = mpmath.mpf(position[axis]) * mpmath.power(10000, -mpmath.mpf(2 * i) / dim)
            value = mpmath.cos(angle) if part == "cos" else mpmath.sin(angle)
            assert table[row, c] == round_to(value, "float32"), (row, c)


def test_compare_names_its_table(cli, tmp_path):
    np.save(tmp_path / "t.npy", _text_to_image(6, 10, 5)[1])
    code, out, err = cli("compare", tmp_path / "t.npy", "--json")
    assert code == 0, err
    best = json.loads(out)["candidates"][0]
    assert best["differing"] == 0 and best["spec"]["axes"] == "qwenimage21"
