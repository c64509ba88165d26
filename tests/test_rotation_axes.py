"""M-RoPE read back (analysis/rotation_axes.py): transformers' own Qwen2-VL (chunked sections)
and Qwen3-VL (interleaved sections) rotations, at the (t, h, w) positions of text, an image and
text again. Which axis drives each pair, the layout and sections, the table bit for bit through
pe_cli.probe (its printed command rebuilds the op's cos), the same from dumps in float32 and
bfloat16, the wrong-sections finding where it holds and where it must not, and text-only
positions, where M-RoPE is plain RoPE and nothing is claimed of sections."""

import json
import shlex

import numpy as np
import pytest

import pe_cli
from pe_cli.testing import assert_rotation

from .published import PUBLISHED

HEAD_DIM = 128
MODELS = {
    # name: (module, config class, rotary class, mrope_section, the layout pe-cli names)
    "qwen2_vl": ("qwen2_vl", "Qwen2VLTextConfig", "Qwen2VLRotaryEmbedding", [16, 24, 24],
                 "mrope"),
    "qwen3_vl": ("qwen3_vl", "Qwen3VLTextConfig", "Qwen3VLTextRotaryEmbedding", [24, 20, 20],
                 "mrope-interleaved"),
}  # fmt: skip


def _ids(text_only=False):
    """(3, P): 4 text tokens at (p, p, p), a 6 x 8 image at t = 4, 4 text tokens after."""
    if text_only:
        return np.repeat(np.arange(20)[None], 3, 0)
    text = np.repeat(np.arange(4)[None], 3, 0)
    t, h, w = np.meshgrid([4], np.arange(4, 10), np.arange(4, 12), indexing="ij")
    image = np.stack([t.ravel(), h.ravel(), w.ravel()])
    after = np.repeat(np.arange(12, 16)[None], 3, 0)
    return np.concatenate([text, image, after], axis=1)


def _op(name):
    import importlib

    module, config, rotary, sections, _ = MODELS[name]
    modeling = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
    settings = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": sections}
    embedding = getattr(modeling, rotary)(
        getattr(modeling, config)(
            hidden_size=256, num_attention_heads=2, head_dim=HEAD_DIM, rope_parameters=settings
        )
    )

    def op(x, positions):  # positions (3, P), as the model's (3, batch, P) for one sequence
        cos, sin = embedding(x, positions[:, None, :])
        return modeling.apply_rotary_pos_emb(x, x, cos, sin)[0]

    return op


def _config(tmp_path, published):
    path = tmp_path / f"{published}.json"
    path.write_text(json.dumps(PUBLISHED[published]))
    return str(path)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_probe_reads_the_sections_and_the_table_bit_for_bit(name, cli, tmp_path):
    ids = _ids()
    found = pe_cli.probe(_op(name), head_dim=HEAD_DIM, positions=ids)
    sections, layout = MODELS[name][3], MODELS[name][4]
    assert found.pairing == "half" and len(found.rotary_dims) == HEAD_DIM
    assert found.findings == []
    assert found.laid.spec.axes == layout and list(found.laid.sections) == sections
    assert found.laid.identical and found.laid.spec.variant == "hf-rope"
    assert found.rebuilt.identical
    # every pair's axis as the model's recomposition puts it: the layout's own rule
    axis = found.reading.axes.axis_of()
    if layout == "mrope":
        want = np.repeat([0, 1, 2], sections)
    else:
        k = np.arange(HEAD_DIM // 2)
        want = np.where((k % 3 == 1) & (k < 3 * sections[1]), 1, 0)
        want = np.where((k % 3 == 2) & (k < 3 * sections[2]), 2, want)
    assert np.array_equal(axis, want)
    # the printed command rebuilds the op's cos, bit for bit
    words = shlex.split(found.laid.command)
    code, out, err = cli(*words[1:], "-o", str(tmp_path / "cos.npy"))
    assert code == 0, err
    table = np.load(tmp_path / "cos.npy")
    assert np.array_equal(table[:, : HEAD_DIM // 2].astype(np.float64), found.reading.fit.c.real)
    from pe_cli.render.rotation import lines

    said = "\n".join(lines(found))
    assert f"{layout} sections {','.join(map(str, sections))}" in said


def test_qwen3_vl_sections_given_to_qwen2_vl_are_found(tmp_path):
    """mlx-vlm PR #576: Qwen3-VL's interleaved sections applied to a Qwen2-VL model. Against
    Qwen2.5-VL's published config the sections finding holds; its own op has none."""
    config = _config(tmp_path, "qwen2.5-vl-7b-instruct")
    ids = _ids()
    with pytest.raises(AssertionError) as caught:
        assert_rotation(_op("qwen3_vl"), rope_config=config, positions=ids)
    said = " ".join(str(caught.value).split())
    assert "its pairs follow mrope-interleaved sections 24,20,20" in said
    assert "applies mrope sections 16,24,24" in said
    assert "--ids '4*0:4,0:4,0:4;" in said or "--ids '5*0:5" in said
    found = assert_rotation(_op("qwen2_vl"), rope_config=config, positions=ids)
    assert "sections" not in found.codes()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_dumps_at_three_axes(name, dtype, cli, tmp_path):
    """compare AFTER --before BEFORE --positions IDS.npy of shape (3, P), q in the model's
    layout (1, heads, P, head_dim); float32 read bit for bit, bfloat16 within its rounding."""
    import torch

    ids = _ids()
    generator = torch.Generator().manual_seed(3)
    q = torch.randn(1, 4, ids.shape[1], HEAD_DIM, generator=generator).to(getattr(torch, dtype))
    after = _op(name)(q, torch.as_tensor(ids))
    _save(tmp_path / "before", q)
    _save(tmp_path / "after", after)
    np.save(tmp_path / "ids.npy", ids)
    config = _config(tmp_path, "qwen2.5-vl-7b-instruct")
    args = [
        "compare",
        _path(tmp_path / "after", dtype),
        "--before",
        _path(tmp_path / "before", dtype),
    ]
    code, out, err = cli(*args, "--positions", str(tmp_path / "ids.npy"), "--json")
    assert code == 0, err
    said = json.loads(out)
    assert said["pairing"] == "half"
    # in bfloat16 the slowest pairs turn by less than a rounding over 16 positions: AFTER
    # holds BEFORE's own values there, and they are not counted as turning
    if dtype == "float32":
        assert len(said["rotary_dims"]) == HEAD_DIM
    else:
        assert len(said["rotary_dims"]) >= 96
    assert said["findings"] == []
    if dtype == "float32":
        assert said["axes"]["layout"] == MODELS[name][4]
        assert said["axes"]["sections"] == MODELS[name][3]
        assert said["rebuilt"]["identical"]
    else:  # the slow pairs' axes (and rates) are within bfloat16's rounding at these few
        # positions: no layout, no sections claimed
        assert said["axes"] is None
    code, out, err = cli(*args, "--positions", str(tmp_path / "ids.npy"), "--rope-config", config,
                         "--json")  # fmt: skip
    said = json.loads(out)
    codes = [f["finding"] for f in said["findings"]]
    # bfloat16 reads no sections at these positions, so claims no wrong ones; the slowest
    # pairs it does not see turning are said in a note, not as other rotary dims
    assert codes == (["sections"] if name == "qwen3_vl" and dtype == "float32" else [])
    if dtype == "bfloat16":
        assert any("not seen turning here" in note for note in said["notes"])


def _save(stem, tensor):
    import torch
    from safetensors.torch import save_file

    if tensor.dtype == torch.bfloat16:
        save_file({"q": tensor.contiguous()}, f"{stem}.safetensors")
    else:
        np.save(f"{stem}.npy", tensor.numpy())


def _path(stem, dtype):
    return f"{stem}.safetensors" if dtype == "bfloat16" else f"{stem}.npy"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_text_only_positions_claim_no_sections(name, tmp_path):
    """Every axis equal: M-RoPE is plain RoPE there. The table of its frequencies is named,
    nothing is said of sections, and no sections finding appears against the model."""
    from pe_cli.analysis.rotation_axes import SAME_AXES

    ids = _ids(text_only=True)
    found = pe_cli.probe(_op(name), head_dim=HEAD_DIM, positions=ids)
    assert found.laid is None and found.reading.axes is None
    assert SAME_AXES in found.notes
    assert found.named is not None and found.findings == []
    config = _config(tmp_path, "qwen2.5-vl-7b-instruct")
    done = assert_rotation(_op(name), rope_config=config, positions=ids)
    assert "sections" not in done.codes()


def test_positions_of_several_axes_are_checked(cli, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((6, 8), np.float32))
    np.save(tmp_path / "ids.npy", np.zeros((3, 5), np.int64))
    code, out, err = cli("compare", str(tmp_path / "x.npy"), "--before", str(tmp_path / "x.npy"),
                         "--positions", str(tmp_path / "ids.npy"))  # fmt: skip
    assert code != 0 and "(axes, 6)" in err and "Traceback" not in err


def test_qwen3_vl_recomposition_on_qwen2_vl_sections(tmp_path):
    """The mlx-vlm PR #576 port as it happens: Qwen3-VL's interleaved recomposition run with a
    Qwen2-VL model's sections [16, 24, 24]. h and w reach past the frequencies (3 x 24 > 64),
    so the table is the interleaved one of sections 22,21,21 (what pe-cli says, the sections
    that give it), and against the model the finding holds."""
    from transformers.models.qwen3_vl import modeling_qwen3_vl as qwen3_vl

    config = _config(tmp_path, "qwen2.5-vl-7b-instruct")
    import transformers.models.qwen2_vl.modeling_qwen2_vl as qwen2_vl

    settings = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]}
    rotary = qwen2_vl.Qwen2VLRotaryEmbedding(
        qwen2_vl.Qwen2VLTextConfig(
            hidden_size=256, num_attention_heads=2, head_dim=HEAD_DIM, rope_parameters=settings
        )
    )

    def port(x, positions):
        freqs = positions[:, None, :, None].float() * rotary.inv_freq
        mixed = qwen3_vl.Qwen3VLTextRotaryEmbedding.recomposition_frequencies(rotary, freqs)
        return qwen2_vl.apply_rotary_pos_emb(x, x, mixed.cos(), mixed.sin())[0]

    ids = _ids()
    found = pe_cli.probe(port, head_dim=HEAD_DIM, positions=ids)
    assert found.laid.spec.axes == "mrope-interleaved" and found.laid.sections == (22, 21, 21)
    assert found.laid.identical
    with pytest.raises(AssertionError, match="sections"):
        assert_rotation(port, rope_config=config, positions=ids)


def test_positions_as_text_a_line_an_axis(tmp_path):
    """--positions as text: a line an axis reads as (3, P); one line as (P,)."""
    from pe_cli.analysis.rotation_files import read_positions

    ids = _ids()
    path = tmp_path / "ids.txt"
    path.write_text("\n".join(" ".join(map(str, axis)) for axis in ids) + "\n")
    assert np.array_equal(read_positions(str(path), ids.shape[1]), ids)
    path.write_text(" ".join(map(str, ids[0])))
    assert np.array_equal(read_positions(str(path), ids.shape[1]), ids[0])


def _moved(name, shift):
    """The model's op turned at the ids given plus `shift` (t, h, w): a port whose positions
    are offset from the ids, on every axis or on one."""
    import torch

    op = _op(name)
    by = torch.tensor(shift)[:, None]

    def port(x, positions):
        return op(x, positions + by)

    return port


OFFSETS = {
    (5, 5, 5): "positions offset by +5 on every axis: the rotation at the ids given is the "
    "table's at (t+5, h+5, w+5)",
    (7, 0, 0): "positions offset on t by +7 (h and w as given)",
    (0, -3, 0): "positions offset on h by -3 (t and w as given)",
}


@pytest.mark.parametrize("shift", sorted(OFFSETS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_positions_offset_from_the_ids_are_found_per_axis(name, shift, tmp_path):
    """A port that turns by ids other than those given (every axis moved, or one: the text
    axis where rope_deltas is dropped) is found, axis by axis; the layout is still read, and
    its table at the moved ids rebuilds the op's cos bit for bit. Against the model's layer
    the offset is the finding, and no sections finding appears on Qwen2-VL's own op."""
    ids = _ids()
    port = _moved(name, shift)
    found = pe_cli.probe(port, head_dim=HEAD_DIM, positions=ids)
    assert found.codes() == ["offset"]
    assert found.findings[0].text.startswith(OFFSETS[shift])
    assert list(found.reading.axes.offsets) == list(shift)
    assert found.laid.spec.axes == MODELS[name][4] and found.laid.identical
    config = _config(tmp_path, "qwen2.5-vl-7b-instruct")
    with pytest.raises(AssertionError, match="positions offset"):
        assert_rotation(port, rope_config=config, positions=ids)
    if name == "qwen2_vl":
        from pe_cli.analysis.rotation_report import expected_of

        expected = expected_of(config, None, ids.shape[1], ids)
        against = pe_cli.probe(port, head_dim=HEAD_DIM, positions=ids, expected=expected)
        assert against.codes() == ["offset"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_offset_dumps_of_qwen3_vl_are_found(dtype, cli, tmp_path):
    """From dumps (compare AFTER --before BEFORE --positions IDS): Qwen3-VL's op at the ids
    with the text axis moved by +7, in float32 and bfloat16 (its interleaved sections put a
    fast pair on every axis, so each axis is read even through bfloat16's rounding)."""
    import torch

    ids = _ids()
    generator = torch.Generator().manual_seed(3)
    q = torch.randn(1, 4, ids.shape[1], HEAD_DIM, generator=generator).to(getattr(torch, dtype))
    _save(tmp_path / "before", q)
    _save(tmp_path / "after", _moved("qwen3_vl", (7, 0, 0))(q, torch.as_tensor(ids)))
    _save(tmp_path / "right", _op("qwen3_vl")(q, torch.as_tensor(ids)))
    np.save(tmp_path / "ids.npy", ids)
    for after, codes in (("after", ["offset"]), ("right", [])):
        code, out, err = cli(
            "compare", _path(tmp_path / after, dtype), "--before", _path(tmp_path / "before", dtype),
            "--positions", tmp_path / "ids.npy", "--json",
        )  # fmt: skip
        assert code == 0, err
        said = json.loads(out)
        assert [f["finding"] for f in said["findings"]] == codes
    assert said["findings"] == [] and "offset" not in " ".join(said["notes"])


def test_text_only_rows_offset_on_every_axis_read_as_plain_positions():
    """Text rows sit at (p, p, p): every axis moved alike is the plain offset finding; the
    model's own op at text rows has none."""
    ids = _ids(text_only=True)
    found = pe_cli.probe(_moved("qwen2_vl", (5, 5, 5)), head_dim=HEAD_DIM, positions=ids)
    assert found.codes() == ["offset"] and found.offset == 5
    right = pe_cli.probe(_op("qwen2_vl"), head_dim=HEAD_DIM, positions=ids)
    assert right.codes() == []
