"""The training frameworks whose table is transformers' own, against the frameworks themselves:
--variant megatron-core is the cos and sin megatron-core's RotaryEmbedding and
YarnRotaryEmbedding give apply_rotary_pos_emb (cast to the activations' dtype there), and
--variant llama-models is llama-models' precompute_freqs_cis (Llama 3's and Llama 4's), bit for
bit; each is named beside transformers (`follows`) and refuses what the framework cannot do."""

import numpy as np
import pytest
import torch

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.families import FAMILIES
from pe_cli.spec import TableSpec

from .rope_models import DEEPSEEK_YARN, LLAMA3, YARN

# name: head dim, theta, rope parameters
MODELS = {
    "llama3.1": (128, 500000.0, LLAMA3),
    "theta-1e4": (128, 10000.0, {}),
    "theta-1e6": (128, 1000000.0, {}),
    "qwen2.5-yarn": (128, 1000000.0, YARN),
    "deepseek-yarn": (64, 10000.0, DEEPSEEK_YARN),
    "partial": (80, 10000.0, {"partial_rotary_factor": 0.4}),
}
DTYPES = ("float32", "bfloat16", "float16")


def _ours(variant, name, rows, convention, dtype, part, offset=0):
    head_dim, theta, rope = MODELS[name]
    spec = TableSpec(
        family="rope",
        variant=variant,
        d_model=head_dim,
        seq_len=rows,
        offset=offset,
        base=theta,
        rope=rope,
        convention=convention,
        dtype=dtype,
        part=part,
    )
    return build(spec).float64().astype(np.float32)


def _bits_equal(ours, theirs):
    theirs = np.ascontiguousarray(theirs, np.float32)
    return ours.shape == theirs.shape and np.array_equal(
        ours.view(np.uint32), theirs.view(np.uint32)
    )


# ---------------------------------------------------------------------------------------------
# megatron-core


@pytest.fixture(scope="module")
def megatron():
    import warnings

    with warnings.catch_warnings():  # "Transformer Engine and Apex are not installed"
        warnings.simplefilter("ignore")
        return pytest.importorskip(
            "megatron.core.models.common.embeddings.yarn_rotary_pos_embedding"
        )


def _megatron_angles(megatron, name, rows, interleaved, offset, monkeypatch):
    """The angles (emb, rows x rotary dim) and the factor megatron-core's module gives
    apply_rotary_pos_emb. Its modules move their buffers to torch.cuda.current_device() as they
    build and run; on this CUDA-less torch that device is the CPU."""
    from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding

    monkeypatch.setattr(torch.cuda, "current_device", lambda: "cpu")
    head_dim, theta, rope = MODELS[name]
    if rope.get("rope_type") == "yarn":
        module = megatron.YarnRotaryEmbedding(
            head_dim,
            rotary_base=theta,
            use_cpu_initialization=True,
            scaling_factor=rope["factor"],
            original_max_position_embeddings=rope["original_max_position_embeddings"],
            beta_fast=rope.get("beta_fast", 32.0),
            beta_slow=rope.get("beta_slow", 1.0),
            mscale=rope.get("mscale", 1.0),
            mscale_all_dim=rope.get("mscale_all_dim", 0.0),
        )
        emb, mscale = module.get_emb(rows, offset)
    else:
        module = RotaryEmbedding(
            head_dim,
            rope.get("partial_rotary_factor", 1.0),
            rotary_interleaved=interleaved,
            rotary_base=theta,
            rope_scaling=rope.get("rope_type") == "llama3",
            rope_scaling_factor=rope.get("factor", 8.0),
            use_cpu_initialization=True,
        )
        emb, mscale = module.get_emb(rows, offset), 1.0
    return emb[:, 0, 0, :], mscale


def _megatron_planes(megatron, name, rows, interleaved, dtype, offset, monkeypatch):
    # apply_rotary_pos_emb's (torch.cos(freqs) * mscale).to(t.dtype), and its sin
    angles, mscale = _megatron_angles(megatron, name, rows, interleaved, offset, monkeypatch)
    low = getattr(torch, dtype)
    return (
        (torch.cos(angles) * mscale).to(low).float().numpy(),
        (torch.sin(angles) * mscale).to(low).float().numpy(),
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MODELS))
def test_megatron_core_is_megatron_bit_for_bit(megatron, name, dtype, monkeypatch):
    interleaved_too = MODELS[name][2].get("rope_type") != "yarn"  # Megatron's YaRN: half only
    for interleaved in (False, True) if interleaved_too else (False,):
        convention = "interleaved" if interleaved else "half"
        for rows, offset in ((4096, 0), (257, 100_003)):
            cos, sin = _megatron_planes(
                megatron, name, rows, interleaved, dtype, offset, monkeypatch
            )
            ours = _ours("megatron-core", name, rows, convention, dtype, "cos", offset)
            assert _bits_equal(ours, cos)
            ours = _ours("megatron-core", name, rows, convention, dtype, "sin", offset)
            assert _bits_equal(ours, sin)


@pytest.mark.parametrize("name", ["llama3.1", "qwen2.5-yarn"])
def test_megatron_core_131072_positions(megatron, name, monkeypatch):
    cos, sin = _megatron_planes(megatron, name, 131072, False, "bfloat16", 0, monkeypatch)
    assert _bits_equal(_ours("megatron-core", name, 131072, "half", "bfloat16", "cos"), cos)
    assert _bits_equal(_ours("megatron-core", name, 131072, "half", "bfloat16", "sin"), sin)


# ---------------------------------------------------------------------------------------------
# llama-models


@pytest.fixture(scope="module")
def llama_models():
    llama3 = pytest.importorskip("llama_models.llama3.model")
    llama4 = pytest.importorskip("llama_models.llama4.model")
    return llama3.precompute_freqs_cis, llama4.precompute_freqs_cis


# Llama 4's apply_scaling: factor 16 and high_freq_factor 1 (Llama 4 Scout's rope_scaling)
LLAMA4 = {**LLAMA3, "factor": 16.0, "high_freq_factor": 1.0}


@pytest.mark.parametrize(
    "theta, rope",
    [
        (500000.0, LLAMA3),
        (10000.0, {}),
        (1000000.0, {}),
        (500000.0, LLAMA4),
    ],
    ids=["llama3.1", "theta-1e4", "theta-1e6", "llama4"],
)
@pytest.mark.parametrize("rows", [4096, 131072])
def test_llama_models_is_precompute_freqs_cis_bit_for_bit(llama_models, theta, rope, rows):
    llama3, llama4 = llama_models
    scaled = bool(rope)
    freqs_cis = llama4(
        128, rows, theta, scaled, rope.get("factor", 8.0), rope.get("high_freq_factor", 4.0)
    )
    if rope is not LLAMA4:  # Llama 3's module fixes factor 8 and high_freq_factor 4
        assert torch.equal(
            torch.view_as_real(llama3(128, rows, theta, scaled)), torch.view_as_real(freqs_cis)
        )
    spec = dict(family="rope", variant="llama-models", d_model=128, seq_len=rows, base=theta)
    for part, theirs in (("cos", freqs_cis.real), ("sin", freqs_cis.imag)):
        single = build(TableSpec(**spec, rope=rope, part=part)).float64().astype(np.float32)
        assert _bits_equal(single, theirs.numpy())
        paired = build(TableSpec(**spec, rope=rope, part=part, convention="interleaved"))
        assert _bits_equal(paired.float64().astype(np.float32), np.repeat(theirs.numpy(), 2, 1))


# ---------------------------------------------------------------------------------------------
# what they are, and what they refuse


def test_they_follow_transformers():
    variants = FAMILIES["rope"].variants
    for name in ("megatron-core", "llama-models"):
        assert variants[name].follows == "transformers"
        assert not variants[name].engine  # training, not serving: not in the every-engine view


@pytest.mark.parametrize(
    "variant, changes, said",
    [
        ("megatron-core", {"rope": {"rope_type": "linear", "factor": 2.0}}, "1 / factor"),
        ("megatron-core", {"rope": {**LLAMA3, "high_freq_factor": 2.0}}, "high_freq_factor at 4"),
        (
            "megatron-core",
            {"rope": {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 8}},
            "no rope_type dynamic",
        ),
        ("megatron-core", {"rope": {**YARN, "partial_rotary_factor": 0.5}}, "whole head dim"),
        ("megatron-core", {"offset": 2**24}, "whole only up to 2.24"),
        ("megatron-core", {"rope": YARN, "convention": "interleaved"}, "pairs half only"),
        ("llama-models", {"dtype": "bfloat16"}, "complex64"),
        ("llama-models", {"rope": YARN}, "no rope_type yarn"),
        ("llama-models", {"rope": {"partial_rotary_factor": 0.5}}, "partial_rotary_factor"),
        ("llama-models", {"rope": {**LLAMA3, "original_max_position_embeddings": 4096}}, "8192"),
    ],
)
def test_they_refuse_what_the_framework_cannot_do(variant, changes, said):
    spec = dict(family="rope", variant=variant, d_model=128, seq_len=16, base=10000.0)
    if variant == "llama-models":
        spec["convention"] = "single"
    with pytest.raises(BadInput, match=said):
        build(TableSpec(**{**spec, **changes}))


# ---------------------------------------------------------------------------------------------
# compare FILE names a table the framework wrote, and rebuilds it


def _named(cli, tmp_path, table, name):
    from .test_engines import _named_and_rebuilt

    if isinstance(table, torch.Tensor):  # a half table: safetensors keeps its dtype
        from safetensors.torch import save_file

        save_file({"cos": table.contiguous()}, tmp_path / name)
        table = None
    found = _named_and_rebuilt(cli, tmp_path, table, name=name, every=True)
    assert found[0]["confirmed"] and found[0]["differing"] == 0
    return {c["name"] for c in found if c["confirmed"] and c["differing"] == 0}


def test_compare_names_megatron_core_tables(cli, tmp_path, megatron, monkeypatch):
    cos, _ = _megatron_planes(megatron, "llama3.1", 1024, False, "bfloat16", 0, monkeypatch)
    same = _named(cli, tmp_path, torch.from_numpy(cos).to(torch.bfloat16), "table.safetensors")
    assert {"library hf-rope", "library megatron-core"} <= same


def test_compare_names_llama_models_freqs_cis(cli, tmp_path, llama_models):
    llama3, _ = llama_models
    freqs_cis = llama3(128, 1024, 500000.0, True)  # its real part: cos, one column a frequency
    same = _named(cli, tmp_path, freqs_cis.real.contiguous().numpy(), "table.npy")
    assert "library llama-models" in same
