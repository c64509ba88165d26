"""Ideogram 4 (--preset ideogram4), the model added as one module (families/rope/models/
ideogram4.py) and its preset's line in the registry: its table against diffusers' own
Ideogram4MRoPE on the position ids its pipeline packs, bit for bit; the exact table against
mpmath."""

import mpmath
import numpy as np
import pytest
import torch

import pe_cli
from tests.reference import round_to


def _module(text_lengths, rows, cols):
    """cos and sin of diffusers' Ideogram4MRoPE (the transformer's defaults: head dim 256,
    theta 5e6, mrope_section 24,20,20) for the batch its pipeline packs: each prompt's text
    tokens left-padded to the longest, then the image's patches."""
    from diffusers.models.transformers.transformer_ideogram4 import Ideogram4MRoPE
    from diffusers.pipelines.ideogram4.pipeline_ideogram4 import Ideogram4Pipeline

    ids, _, _ = Ideogram4Pipeline._prepare_ids(
        text_lengths, rows, cols, max(text_lengths), torch.device("cpu")
    )
    rope = Ideogram4MRoPE(head_dim=256, base=5_000_000, mrope_section=(24, 20, 20))
    with torch.no_grad():
        cos, sin = rope(ids)
    return ids, cos.numpy(), sin.numpy()


@pytest.mark.parametrize("rows, cols, text", [(6, 9, 5), (64, 64, 300), (32, 48, 77)])
def test_the_diffusers_variant_is_the_module_bit_for_bit(rows, cols, text):
    _, cos, sin = _module([text], rows, cols)
    for part, expected in (("cos", cos[0]), ("sin", sin[0])):
        table = pe_cli.build(
            preset="ideogram4",
            grid=f"{rows}x{cols}",
            text_tokens=text,
            variant="diffusers",
            part=part,
        ).numpy()
        assert table.dtype == expected.dtype and np.array_equal(table, expected), part


def test_a_left_padded_prompt_is_its_ids_bit_for_bit():
    """A batch's shorter prompt (its pipeline left-pads it with tokens at (0, 0, 0)) as inline
    --ids runs: the padding, the text's line, the image's grid from 65536."""
    ids, cos, sin = _module([9, 4], 5, 7)
    assert np.array_equal(ids[1, :5].numpy(), np.zeros((5, 3)))
    runs = "5*0,0,0; 4*0:4,0:4,0:4; 65536,65536:65541,65536:65543"
    for part, expected in (("cos", cos[1]), ("sin", sin[1])):
        table = pe_cli.build(preset="ideogram4", ids=runs, variant="diffusers", part=part)
        assert np.array_equal(table.numpy(), expected), part


@pytest.mark.parametrize("part", ["cos", "sin"])
def test_the_exact_table_against_mpmath(part):
    """Column c < 128 is frequency c of theta**(-2c/256), on t, h or w as Qwen3-VL interleaves
    them (h where c % 3 == 1 and c < 60, w where c % 3 == 2 and c < 60), doubled; a text token
    k at (k, k, k), patch (r, s) at (65536, 65536 + r, 65536 + s)."""
    table = pe_cli.build(preset="ideogram4", grid="4x6", text_tokens=3, part=part).numpy()
    positions = {0: (0, 0, 0), 2: (2, 2, 2), 3: (65536,) * 3, 26: (65536, 65539, 65541)}
    for row, (t, h, w) in positions.items():
        for c in (0, 1, 2, 58, 59, 60, 61, 100, 127):
            axis = 1 if c % 3 == 1 and c < 60 else 2 if c % 3 == 2 and c < 60 else 0
            angle = mpmath.mpf((t, h, w)[axis]) * mpmath.power(5_000_000, -mpmath.mpf(2 * c) / 256)
            value = mpmath.cos(angle) if part == "cos" else mpmath.sin(angle)
            assert table[row, c] == table[row, c + 128] == round_to(value, "float32"), (row, c)


@pytest.mark.parametrize(
    "lengths, rows, cols, which, part",
    [([77], 32, 48, 0, "cos"), ([77], 32, 48, 0, "sin"), ([9, 4], 5, 7, 1, "cos")],
    ids=["cos", "sin", "left-padded"],
)
def test_compare_names_the_module_table(cli, tmp_path, lengths, rows, cols, which, part):
    """diffusers' own table, its image patches at 65536 + row (past the 6,700 positions in which
    the rows' and columns' slowest frequencies turn, and where float32 angles are off by 0.004)
    is named bit for bit as the diffusers variant of Ideogram 4's layout (the cli fixture
    rebuilds it from the printed command and the --json spec)."""
    import json

    _, cos, sin = _module(lengths, rows, cols)
    np.save(tmp_path / "ideogram4.npy", (cos if part == "cos" else sin)[which])
    code, out, err = cli("compare", tmp_path / "ideogram4.npy", "--json")
    assert code == 0, err
    best = json.loads(out)["candidates"][0]
    assert best["differing"] == 0 and best["confirmed"], best["name"]
    spec = best["spec"]
    assert (spec["axes"], spec["variant"], spec["part"]) == ("ideogram4", "diffusers", part)
