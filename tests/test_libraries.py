"""Library variants against the libraries themselves, bit for bit, where they install.

transformers, positional-encodings and TensorFlow are test dependencies (pyproject's `test`
extra) and run in CI. The Annotated Transformer and the PyTorch tutorial are not packages:
their documented code is reproduced below from their published text and run instead.
fairseq 0.12 does not build on this Python; its get_embedding is checked through the copies
transformers ships (Speech2Text, M2M100, FSMT), which are the same code.
"""

import math
import os

import numpy as np
import pytest
import torch

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.spec import TableSpec


def _bits(tensor):
    tensor = tensor.detach().contiguous()
    return tensor.reshape(-1).view(torch.int32)


def _same(ours, theirs):
    return tuple(ours.shape) == tuple(theirs.shape) and torch.equal(_bits(ours), _bits(theirs))


def ours(**params):
    return build(TableSpec(**params)).torch()


# ------------------------------------------------------------------------------ transformers


@pytest.fixture(scope="module")
def transformers_models():
    pytest.importorskip("transformers", reason="transformers is not installed")
    from transformers.models.distilbert import modeling_distilbert
    from transformers.models.fsmt import modeling_fsmt
    from transformers.models.m2m_100 import modeling_m2m_100
    from transformers.models.marian import modeling_marian
    from transformers.models.speech_to_text import modeling_speech_to_text
    from transformers.models.whisper import modeling_whisper

    return {
        "distilbert": modeling_distilbert,
        "marian": modeling_marian,
        "whisper": modeling_whisper,
        "fairseq copies": [
            modeling_speech_to_text.Speech2TextSinusoidalPositionalEmbedding.get_embedding,
            modeling_m2m_100.M2M100SinusoidalPositionalEmbedding.get_embedding,
            modeling_fsmt.SinusoidalPositionalEmbedding.get_embedding,
        ],
    }


XLM_SIZES = [(1, 1), (2, 3), (7, 10), (64, 100), (512, 1024), (1024, 2048)]


@pytest.mark.parametrize("d,length", XLM_SIZES)
def test_hf_distilbert(transformers_models, d, length):
    out = torch.empty(length, d)
    transformers_models["distilbert"].create_sinusoidal_embeddings(length, d, out)
    assert _same(ours(d_model=d, seq_len=length, variant="hf-distilbert"), out)


@pytest.mark.parametrize("d,length", XLM_SIZES)
def test_hf_marian(transformers_models, d, length):
    weight = (
        transformers_models["marian"].MarianSinusoidalPositionalEmbedding(length, d).create_weight()
    )
    assert _same(ours(d_model=d, seq_len=length, variant="hf-marian"), weight)


@pytest.mark.parametrize(
    "d,length,padding",
    [
        (4, 1, None),
        (5, 2, 1),
        (7, 10, 1),
        (64, 100, 0),
        (512, 1026, 1),
        (1024, 70000, 1),
        (33, 100, 99),
    ],
)
def test_fairseq_get_embedding(transformers_models, d, length, padding):
    table = ours(d_model=d, seq_len=length, variant="fairseq", padding_idx=padding)
    for get_embedding in transformers_models["fairseq copies"]:
        assert _same(table, get_embedding(length, d, padding).float())


@pytest.mark.parametrize(
    "d,length,base",
    [
        (4, 1, 10000),
        (6, 10, 10000),
        (384, 1500, 10000),
        (1280, 1500, 10000),
        (512, 70000, 10000),
        (64, 300, 500000),
    ],
)
def test_whisper_sinusoids(transformers_models, d, length, base):
    theirs = transformers_models["whisper"].sinusoids(length, d, max_timescale=base)
    assert _same(ours(d_model=d, seq_len=length, variant="whisper", base=float(base)), theirs)


# ----------------------------------------------------------------------- positional-encodings


@pytest.mark.parametrize(
    "d,length", [(1, 5), (7, 10), (64, 100), (512, 1024), (1024, 4096), (96, 70000)]
)
def test_positional_encodings_1d(d, length):
    encodings = pytest.importorskip(
        "positional_encodings.torch_encodings", reason="positional-encodings is not installed"
    )
    theirs = encodings.PositionalEncoding1D(d)(torch.zeros(1, length, d))
    assert _same(ours(d_model=d, seq_len=length, variant="positional-encodings"), theirs)


@pytest.mark.parametrize("grid", [(1, 1), (3, 5), (14, 14), (16, 7)])
@pytest.mark.parametrize("d", [1, 2, 3, 5, 6, 8, 13, 64, 130, 768])
def test_positional_encodings_2d(grid, d):
    encodings = pytest.importorskip(
        "positional_encodings.torch_encodings", reason="positional-encodings is not installed"
    )
    theirs = encodings.PositionalEncoding2D(d)(torch.zeros(1, *grid, d))[0]
    table = ours(family="sincos2d", variant="positional-encodings", grid=grid, d_model=d)
    assert _same(table, theirs.reshape(grid[0] * grid[1], d))


# -------------------------------------------------------------------------------- TensorFlow


def _tensorflow_timing_signal(tf, length, channels, min_timescale, max_timescale, start_index):
    # tensor2tensor 1.15's get_timing_signal_1d, as published, on TensorFlow 2 ops
    position = tf.cast(tf.range(length) + start_index, tf.float32)
    num_timescales = channels // 2
    log_timescale_increment = math.log(float(max_timescale) / float(min_timescale)) / tf.maximum(
        tf.cast(num_timescales, tf.float32) - 1, 1
    )
    inv_timescales = min_timescale * tf.exp(
        tf.cast(tf.range(num_timescales), tf.float32) * -log_timescale_increment
    )
    scaled_time = tf.expand_dims(position, 1) * tf.expand_dims(inv_timescales, 0)
    signal = tf.concat([tf.sin(scaled_time), tf.cos(scaled_time)], axis=1)
    signal = tf.pad(signal, [[0, 0], [0, tf.math.floormod(channels, 2)]])
    return tf.reshape(signal, [1, length, channels]).numpy()


@pytest.mark.parametrize(
    "d,length,min_timescale,max_timescale,start",
    [
        (1, 10, 1.0, 1e4, 0),
        (2, 5, 1.0, 1e4, 0),
        (7, 100, 1.0, 1e4, 0),
        (512, 1024, 1.0, 1e4, 0),
        (512, 65536, 1.0, 1e4, 0),
        (64, 1000, 2.0, 5e5, 7),
        (128, 3000, 1.0, 1e4, 40000),
    ],
)
def test_tensor2tensor_timing_signal(d, length, min_timescale, max_timescale, start):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    theirs = _tensorflow_timing_signal(tf, length, d, min_timescale, max_timescale, start)
    table = ours(
        d_model=d,
        seq_len=length,
        variant="tensor2tensor",
        base=max_timescale,
        min_timescale=min_timescale,
        offset=start,
    )
    assert table.shape == theirs.shape
    assert np.array_equal(table.numpy().view(np.int32), theirs.view(np.int32))


# ------------------------------------------------ documented code: no package to install


def _annotated_documented(d_model, max_len):
    # "The Annotated Transformer" (Harvard NLP), PositionalEncoding.__init__
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.unsqueeze(0)


def _tutorial_documented(d_model, max_len):
    # PyTorch tutorial "Language Modeling with nn.Transformer", PositionalEncoding.__init__
    position = torch.arange(max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, 1, d_model)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    return pe


@pytest.mark.parametrize("d,length", [(2, 1), (6, 10), (512, 5000), (1024, 70000)])
def test_annotated_and_tutorial(d, length):
    assert _same(
        ours(d_model=d, seq_len=length, variant="annotated"), _annotated_documented(d, length)
    )
    assert _same(
        ours(d_model=d, seq_len=length, variant="pytorch-tutorial"), _tutorial_documented(d, length)
    )


# ------------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    "params,message",
    [
        ({"variant": "annotated", "d_model": 7}, "even d_model"),
        ({"variant": "pytorch-tutorial", "d_model": 5}, "even d_model"),
        ({"variant": "fairseq", "d_model": 3}, "fairseq divides"),
        ({"variant": "whisper", "d_model": 7}, "even --d-model"),
        ({"variant": "whisper", "d_model": 2}, "even --d-model >= 4"),
        ({"variant": "hf-distilbert", "base": 500.0}, "hardcodes base 10000"),
        ({"variant": "fairseq", "offset": 3}, "always starts at position 0"),
        ({"variant": "fairseq", "seq_len": 4, "padding_idx": 4}, "IndexError"),
        ({"variant": "hf-marian", "convention": "vaswani"}, "is the concat convention"),
        ({"variant": "annotated", "compute_dtype": "float16"}, "own dtypes"),
        ({"variant": "whisper", "padding_idx": 1}, "--padding-idx belongs to the fairseq"),
        ({"variant": "hf-distilbert", "offset": 2}, "always starts at position 0"),
        ({"variant": "tensor2tensor", "min_timescale": 0.0}, "between 0 and --base"),
    ],
)
def test_what_the_library_cannot_do_is_refused(params, message):
    with pytest.raises(BadInput, match=message):
        TableSpec(**params)


def test_library_shapes():
    assert tuple(ours(d_model=8, seq_len=3, variant="annotated").shape) == (1, 3, 8)
    assert tuple(ours(d_model=8, seq_len=3, variant="pytorch-tutorial").shape) == (3, 1, 8)
    assert tuple(ours(d_model=8, seq_len=3, variant="positional-encodings").shape) == (1, 3, 8)
    assert tuple(ours(d_model=8, seq_len=3, variant="fairseq").shape) == (3, 8)


def test_identification_names_the_library(tmp_path, cli, transformers_models):
    get_embedding = transformers_models["fairseq copies"][0]
    path = tmp_path / "fairseq.npy"
    np.save(path, get_embedding(1026, 512, 1).numpy())
    text = " ".join(cli("compare", path)[1].decode().split())
    assert "matches library fairseq, base 10000, first position 0, bit for bit (float32)" in text
    whisper = tmp_path / "whisper.npy"
    np.save(whisper, transformers_models["whisper"].sinusoids(1500, 384).numpy())
    assert "matches library whisper" in " ".join(cli("compare", whisper)[1].decode().split())


# ------------------------------------------------------------------- RoPE, ALiBi, 2-D tables

from .libraries import hf_rotary  # noqa: E402
from .test_families import ROPE_CASES  # noqa: E402


@pytest.mark.parametrize("case", ROPE_CASES)
@pytest.mark.parametrize("offset, length", [(0, 300), (5000, 64), (2**21, 16)])
def test_hf_rope_matches_transformers(case, offset, length):
    d, base = 64, 500000.0
    rope = dict(ROPE_CASES[case])
    if "short_factor" in rope:  # longrope needs one factor per frequency
        n = int(d * rope.get("partial_rotary_factor", 1.0)) // 2
        rope["short_factor"] = [1.0 + 0.03 * i for i in range(n)]
        rope["long_factor"] = [1.25 + 0.5 * i for i in range(n)]
    cos, sin, inv_freq, attention = hf_rotary(rope, d, base, list(range(offset, offset + length)))
    params = dict(
        family="rope",
        variant="hf-rope",
        d_model=d,
        seq_len=length,
        offset=offset,
        base=base,
        rope=rope,
    )
    assert _same(ours(**params, part="cos"), cos)
    assert _same(ours(**params, part="sin"), sin)
    assert _same(ours(**params, part="inv_freq"), inv_freq.float())
    # the exact table is within one float32 rounding of transformers' attention factor
    exact_first = build(TableSpec(**{**params, "variant": "exact"}, part="cos")).float64()[0, 0]
    if offset == 0:
        assert exact_first == pytest.approx(attention, rel=2**-23)


def test_bloom_and_mpt_slopes_match_transformers():
    pytest.importorskip("transformers", reason="transformers is not installed")
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    for heads in range(1, 97):
        bloom = ours(family="alibi", heads=heads, variant="bloom")
        assert _same(bloom, _get_alibi_slopes(heads, torch.device("cpu")))
        mpt = ours(family="alibi", heads=heads, variant="mpt")
        assert _same(mpt, -build_mpt_alibi_tensor(heads, 2)[:, 0, 0])  # slope * (0 - 1)


def test_alibi_rules_agree():
    """Press et al., BLOOM and MPT give the same slopes in the same head order. How far BLOOM's
    and MPT's float32 slopes drift from the true ones (the README's figures: torch's float32
    pow, so they may vary by CPU) is what transformers' own functions give on this machine."""
    pytest.importorskip("transformers", reason="transformers is not installed")
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    from . import reference

    libraries = {
        "bloom": lambda heads: _get_alibi_slopes(heads, torch.device("cpu")),
        "mpt": lambda heads: -build_mpt_alibi_tensor(heads, 2)[:, 0, 0],  # slope * (0 - 1)
    }
    worst = {name: 0.0 for name in libraries}
    measured = dict(worst)
    for heads in range(1, 257):
        truth = np.array([float(m) for m in reference.alibi_slopes(heads)])
        ulp = np.spacing(truth.astype(np.float32)).astype(np.float64)
        for name, library in libraries.items():
            ours = build(family="alibi", heads=heads, variant=name).float64()
            assert np.array_equal(
                np.argsort(-ours, kind="stable"), np.argsort(-truth, kind="stable")
            )
            worst[name] = max(worst[name], float(np.max(np.abs(ours - truth) / ulp)))
            theirs = library(heads).double().numpy()
            measured[name] = max(measured[name], float(np.max(np.abs(theirs - truth) / ulp)))
    assert worst == measured and worst["bloom"] > 1


def _mae_published(embed_dim, grid_size, cls_token=False):
    # MAE (facebookresearch/mae) util/pos_embed.py, as published, for a square grid
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)
    grid = np.stack(grid, axis=0).reshape([2, 1, grid_size, grid_size])

    def one_d(dim, pos):
        omega = np.arange(dim // 2, dtype=np.float64)
        omega /= dim / 2.0
        omega = 1.0 / 10000**omega
        out = np.einsum("m,d->md", pos.reshape(-1), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)

    emb = np.concatenate([one_d(embed_dim // 2, grid[0]), one_d(embed_dim // 2, grid[1])], axis=1)
    if cls_token:
        emb = np.concatenate([np.zeros([1, embed_dim]), emb], axis=0)
    return torch.from_numpy(emb).float()


@pytest.mark.parametrize("grid, d", [(1, 4), (7, 64), (14, 768), (16, 1024)])
def test_mae_matches_published_code_and_transformers(grid, d):
    table = ours(family="sincos2d", variant="mae", grid=grid, d_model=d, cls_token=True)
    assert _same(table, _mae_published(d, grid, cls_token=True))
    pytest.importorskip("transformers", reason="transformers is not installed")
    from transformers.models.vit_mae.modeling_vit_mae import build_2d_sinusoidal_position_embedding

    theirs = build_2d_sinusoidal_position_embedding(grid, grid, d, cls_token=True)
    half = d // 2  # ViTMAE swaps the halves back to MAE's [x | y] order
    assert _same(table, torch.cat([theirs[:, half:], theirs[:, :half]], dim=1))
