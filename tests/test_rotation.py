"""Reading a rotation back from activations (analysis/rotation.py, rotation_report.py): the
pairing, the dims that turn, the table named, the rebuild bit for bit, and each finding where it
holds and where it must not appear. The rotations are transformers' own apply functions and
deliberately broken copies of them."""

import numpy as np
import pytest

from pe_cli.analysis import rotation, rotation_files, rotation_report

POSITIONS = 192


def _llama(tmp_path, **settings):
    from transformers import LlamaConfig

    config = LlamaConfig(
        hidden_size=512, num_attention_heads=8, head_dim=64, num_hidden_layers=2, **settings
    )
    config.save_pretrained(tmp_path)
    return config, str(tmp_path / "config.json")


def _queries(heads=8, dim=64, seed=0, dtype=None):
    import torch

    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(1, heads, POSITIONS, dim, generator=generator)
    return x if dtype is None else x.to(dtype)


def _llama_rotation(config, x, positions=None, apply=None):
    """transformers' Llama rotary embedding and apply_rotary_pos_emb, as the attention calls
    them: q in (batch, heads, positions, head_dim)."""
    import torch
    from transformers.models.llama import modeling_llama

    ids = torch.arange(POSITIONS)[None] if positions is None else positions
    cos, sin = modeling_llama.LlamaRotaryEmbedding(config)(x, ids)
    apply = apply or (lambda q, c, s: modeling_llama.apply_rotary_pos_emb(q, q, c, s)[0])
    return apply(x, cos, sin)


def _read(before, after, expected=None, dtype="float32"):
    act = rotation.activations(_np(before), _np(after), dtype)
    return rotation_report.report(act, "test", expected)


def _np(t):
    return t.double().numpy() if hasattr(t, "double") else t


def test_llama_half_is_named_and_rebuilt_bit_for_bit(tmp_path):
    config, path = _llama(tmp_path)
    x = _queries()
    found = _read(x, _llama_rotation(config, x), rotation_report.expected_of(path, None, 8))
    assert found.pairing == "half"
    assert found.rotary_dims == list(range(64))
    assert found.passed is None
    assert found.named.spec.base == 10000 and found.named.spec.d_model == 64
    assert found.rebuilt.identical and found.rebuilt.variant == "hf-rope"
    assert found.findings == []


def test_gptj_interleaved_partial(tmp_path):
    """GPT-J rotates its first rotary_dim dims in pairs (2i, 2i + 1) and passes the rest: the
    reading says interleaved, the tail, and the table of rotary_dim's frequencies."""
    import torch
    from transformers.models.gptj import modeling_gptj

    rotary = 16
    x = _queries(dim=64)[0].permute(1, 0, 2)[None]  # GPT-J applies in (batch, positions, heads)
    sincos = modeling_gptj.create_sinusoidal_positions(POSITIONS, rotary)[torch.arange(POSITIONS)]
    sin, cos = torch.split(sincos[None], rotary // 2, dim=-1)
    turned = modeling_gptj.apply_rotary_pos_emb(x[..., :rotary], sin, cos)
    after = torch.cat([turned, x[..., rotary:]], dim=-1)
    found = _read(x[0], after[0])
    assert found.pairing == "interleaved"
    assert found.rotary_dims == list(range(rotary))
    assert "partial-rotary tail: rotary dim 16 of 64" in found.passed
    assert found.named.spec.d_model == rotary and found.named.spec.base == 10000
    assert found.findings == []


def test_neox_partial_half(tmp_path):
    import torch
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox import modeling_gpt_neox

    config = GPTNeoXConfig(hidden_size=256, num_attention_heads=4, rotary_pct=0.25)
    config.save_pretrained(tmp_path)
    x = _queries(heads=4, dim=64)
    cos, sin = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)(x, torch.arange(POSITIONS)[None])
    after = modeling_gpt_neox.apply_rotary_pos_emb(x, x, cos, sin)[0]
    expected = rotation_report.expected_of(str(tmp_path / "config.json"), None, 8)
    found = _read(x, after, expected)
    assert found.pairing == "half"
    assert found.rotary_dims == list(range(16))
    assert "rotary dim 16 of 64" in found.passed
    assert found.rebuilt.identical
    assert found.findings == []


def _broken(config, x, how):
    """Deliberately broken copies of a rotate_half port."""
    from transformers.models.llama import modeling_llama

    apply = modeling_llama.apply_rotary_pos_emb
    if how == "twice":
        return _llama_rotation(
            config, x, apply=lambda q, c, s: apply(apply(q, q, c, s)[0], q, c, s)[0]
        )
    if how == "negated":
        return _llama_rotation(config, x, apply=lambda q, c, s: apply(q, q, c, -s)[0])
    if how == "offset":
        import torch

        return _llama_rotation(config, x, positions=torch.arange(5, 5 + POSITIONS)[None])
    if how == "scale":
        return _llama_rotation(config, x, apply=lambda q, c, s: apply(q * 1.25, q, c, s)[0])
    if how == "interleaved":

        def interleaved(q, c, s):  # the pairing of GPT-J, with the rotate_half model's table
            import torch

            half = c.shape[-1] // 2
            c2 = torch.repeat_interleave(c[..., :half], 2, -1)[:, None]
            s2 = torch.repeat_interleave(s[..., :half], 2, -1)[:, None]
            pairs = torch.stack([-q[..., 1::2], q[..., 0::2]], -1).flatten(-2)
            return q * c2 + pairs * s2

        return _llama_rotation(config, x, apply=interleaved)
    if how == "heads":
        rotated = _llama_rotation(config, x)
        rotated[:, 3] = _llama_rotation(config, x, apply=lambda q, c, s: apply(q, q, c, -s)[0])[
            :, 3
        ]
        return rotated
    raise ValueError(how)


CASES = {
    "twice": {"twice"},
    "negated": {"negated"},
    "offset": {"offset"},
    "scale": {"scale", "scale-differs"},
    "interleaved": {"pairing"},
    "heads": {"heads"},
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("how", sorted(CASES))
def test_each_broken_port_is_found(tmp_path, how, dtype):
    """Each deliberately broken port is found, and only what it broke is said (against the
    model's layer); the correct port says none of it. In float32 and in bfloat16, where
    transformers rotates in the activations' dtype."""
    import torch

    config, path = _llama(tmp_path)
    x = _queries(dtype=getattr(torch, dtype))
    expected = rotation_report.expected_of(path, None, 8)
    found = _read(x, _broken(config, x, how), expected, dtype)
    assert set(found.codes()) == CASES[how], [f.text for f in found.findings]
    correct = _read(x, _llama_rotation(config, x), expected, dtype)
    assert correct.codes() == []


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_dumps_are_named_and_rebuilt_and_their_angles_are_within_the_bound(tmp_path, dtype):
    """A half-precision dump: the table is named, transformers' rotation in that dtype rebuilds
    AFTER bit for bit, and every angle read back is within the bound the report states of the
    true angle p * theta**(-2k/d), computed in mpmath."""
    import mpmath
    import torch

    config, path = _llama(tmp_path)
    x = _queries(dtype=getattr(torch, dtype))
    found = _read(x, _llama_rotation(config, x), None, dtype)
    assert found.pairing == "half" and found.rotary_dims == list(range(64))
    assert found.named.spec.base == 10000 and found.codes() == []
    assert found.rebuilt.identical and found.rebuilt.variant == "hf-rope"
    with mpmath.workdps(30):
        truth = np.array(
            [
                [
                    float(
                        mpmath.fmod(p * mpmath.power(10000, mpmath.mpf(-2 * k) / 64), 2 * mpmath.pi)
                    )
                    for k in range(32)
                ]
                for p in range(POSITIONS)
            ]
        )
    missed = np.abs(np.angle(np.exp(1j * (found.reading.angles - truth))))
    assert missed.max() <= found.bound
    assert found.gap.max_abs <= found.bound  # what the report says of the named table
    assert found.bound == 6 * {"bfloat16": 2.0**-8, "float16": 2.0**-11}[dtype]


def test_offset_and_negation_are_found_without_a_model(tmp_path):
    config, _ = _llama(tmp_path)
    x = _queries()
    shifted = _read(x, _broken(config, x, "offset"))
    assert shifted.codes() == ["offset"]
    assert "offset by +5" in shifted.findings[0].text
    assert shifted.rebuilt.identical  # the table at positions 5.. applied to BEFORE
    assert _read(x, _broken(config, x, "negated")).codes() == ["negated"]


def test_no_rotation(tmp_path):
    config, path = _llama(tmp_path)
    x = _queries()
    found = _read(x, x.clone())
    assert found.codes() == ["none"]
    assert found.rotary_dims == []
    against = _read(x, x.clone(), rotation_report.expected_of(path, None, 8))
    assert set(against.codes()) == {"none", "not-rotated"}
    assert "none" not in _read(x, _llama_rotation(config, x)).codes()


def test_a_nope_layer_rotated(tmp_path):
    """SmolLM3's config says which layers apply no rotation; a port that rotates one anyway
    is found, and one that leaves it alone is not."""
    from transformers import SmolLM3Config

    config = SmolLM3Config(
        hidden_size=256, num_attention_heads=4, num_key_value_heads=4, num_hidden_layers=4
    )
    config.save_pretrained(tmp_path)
    path = str(tmp_path / "config.json")
    unrotated = config.no_rope_layers.index(0)
    expected = rotation_report.expected_of(path, unrotated, 8)
    assert expected.spec is None
    llama, _ = _llama(tmp_path / "llama")
    x = _queries()
    assert _read(x, _llama_rotation(llama, x), expected).codes() == ["nope-rotated"]
    assert _read(x, x.clone(), expected).codes() == ["none"]


def test_not_a_rotation():
    rng = np.random.default_rng(0)
    before = rng.normal(size=(64, 4, 32))
    after = before @ rng.normal(size=(32, 32))
    found = _read(before, after)
    assert found.pairing is None and found.codes() == ["not-a-rotation"]


@pytest.mark.parametrize(
    "before, after, said",
    [
        (np.zeros((4, 8)), np.zeros((4, 6)), "a rotation keeps the shape"),
        (np.zeros(8), np.zeros(8), "needs a head_dim axis"),
        (np.zeros((4, 7)), np.zeros((4, 7)), "head_dim 7 is odd"),
        (np.zeros((1, 2, 3, 4, 8)), np.zeros((1, 2, 3, 4, 8)), "(batch, heads, positions"),
    ],
)
def test_bad_activations_are_refused(before, after, said):
    from pe_cli.core.errors import BadInput

    with pytest.raises(BadInput, match=r".*") as refused:
        rotation.activations(before, after, "float32")
    assert said in str(refused.value)


def test_read_in_blocks_as_whole(tmp_path, monkeypatch):
    """Files read in blocks of a few rows (torch's layout, two batches: one run of elements a
    (batch, head)) give the report the arrays give whole: the same fit, angles and rebuild."""
    config, path = _llama(tmp_path)
    x = _queries(heads=4)
    x = x.expand(2, -1, -1, -1).clone()
    x[1] = _queries(heads=4, seed=1)[0]
    after = _broken(config, x, "offset")
    np.save(tmp_path / "before.npy", x.numpy())
    np.save(tmp_path / "after.npy", after.numpy())
    whole = _read(x, after)
    monkeypatch.setattr(rotation, "BLOCK_ELEMENTS", 7 * 8 * 64)  # 7 rows a block
    act = rotation.activations(_np(x), _np(after), "float32")
    assert act.block_rows == 7
    blocked = rotation_files.from_files(tmp_path / "after.npy", tmp_path / "before.npy")
    assert blocked.reading.act.block_rows == 7
    for found in (blocked, rotation_report.report(act, "test")):
        assert found.codes() == whole.codes() == ["offset"]
        # float64 sums over the vectors, in another memory order: to a few float64 ulps
        assert np.allclose(found.reading.angles, whole.reading.angles, rtol=0, atol=1e-14)
        assert found.rebuilt == whole.rebuilt and found.rebuilt.identical
        assert found.reading.fit.misfit == pytest.approx(whole.reading.fit.misfit, abs=1e-12)
    assert blocked.reading.act.vectors[4] == "batch 1 head 0"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rotated_twice_is_found_without_a_config(tmp_path, dtype):
    """TensorRT-LLM PR #16378's double rotation, with no --rope-config: the fastest pair turns
    2 rad a position, which no RoPE table's does (theta^0 = 1 at any base), and the angles
    halved are Llama's table at base 10000, named in the finding. The correct port, and a
    correct port of another base, say nothing of it."""
    import torch

    config, _ = _llama(tmp_path)
    x = _queries(dtype=getattr(torch, dtype))
    found = _read(x, _broken(config, x, "twice"), None, dtype)
    assert found.codes() == ["twice"], [f.text for f in found.findings]
    said = " ".join(found.findings[0].text.split())
    assert "twice those of" in said and "base 10000" in said
    for settings in ({}, {"rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}):
        other, _ = _llama(tmp_path / f"other{len(settings)}", **settings)
        correct = _read(x, _llama_rotation(other, x), None, dtype)
        assert "twice" not in correct.codes() and correct.codes() == []


def test_rotated_twice_through_probe():
    """The same from the op itself (pe_cli.probe), where the cos read back is the op's own."""
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    config = LlamaConfig(hidden_size=512, num_attention_heads=8, head_dim=64)
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    apply = modeling_llama.apply_rotary_pos_emb

    def twice(x, positions):
        cos, sin = rotary(x, positions[None])
        return apply(apply(x, x, cos, sin)[0], x, cos, sin)[0]

    def once(x, positions):
        cos, sin = rotary(x, positions[None])
        return apply(x, x, cos, sin)[0]

    import pe_cli

    assert pe_cli.probe(twice, head_dim=64, seq_len=64).codes() == ["twice"]
    assert pe_cli.probe(once, head_dim=64, seq_len=64).codes() == []
