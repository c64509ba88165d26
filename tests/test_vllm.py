"""--variant vllm against vLLM itself: the cos_sin_cache of the rope module vLLM 0.32.0's get_rope
builds (tests/vllm_tables.py, run in vLLM's own venv, all cases in one process), bit for bit,
for the models' rope parameters as vLLM receives them; M-RoPE's per-token cos and sin as its
MRotaryEmbedding's forward rotates by them; and what the variant refuses."""

import numpy as np
import pytest
import torch

import pe_cli
from pe_cli.core.errors import BadInput

from .rope_models import DEEPSEEK_YARN, LLAMA3, PHI35_LONG, PHI35_SHORT

PHI35 = {
    "rope_type": "longrope",
    "long_factor": PHI35_LONG,
    "short_factor": PHI35_SHORT,
    "original_max_position_embeddings": 4096,
    "max_position_embeddings": 131072,
}

# name: head dim, theta, rope parameters (pe-cli's --rope, and vLLM's rope_parameters), the
# max_position vLLM's model code passes get_rope (the config's max_position_embeddings; here
# the table's length where the rope type does not fix it), the server's max_model_len
MODELS = {
    "llama3.1": (128, 500000.0, LLAMA3, 4096, None),
    "qwen2": (128, 1000000.0, {}, 4096, None),
    # Qwen2.5's YaRN: the cache is original x factor = 131072 rows, whatever max_position is
    "qwen2.5-yarn": (
        128,
        1000000.0,
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        32768,
        None,
    ),
    # served with vLLM's default max_model_len (the original length): short_factor
    "phi3.5-short": (96, 10000.0, PHI35, 131072, 4096),
    # served past it (--max-model-len 131072): long_factor at every position
    "phi3.5-long": (96, 10000.0, PHI35, 131072, 131072),
    "phi2-partial": (80, 10000.0, {"partial_rotary_factor": 0.4}, 2048, None),
    "partial-half-llama3": (64, 500000.0, {**LLAMA3, "partial_rotary_factor": 0.5}, 4096, None),
    "deepseek-yarn": (
        64,
        10000.0,
        DEEPSEEK_YARN,
        163840,
        None,
    ),
    "yarn-attention-factor": (
        128,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 2.5,
            "original_max_position_embeddings": 4097,
            "attention_factor": 1.25,
            "truncate": False,
        },
        4097,
        None,
    ),
    "linear": (128, 10000.0, {"rope_type": "linear", "factor": 2.0}, 2048, None),
    "linear-odd": (64, 123456.0, {"rope_type": "linear", "factor": 3.7}, 1024, None),
    "dynamic": (
        128,
        10000.0,
        {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 2048},
        2048,
        None,
    ),
    "proportional": (
        128,
        1000000.0,
        {"rope_type": "proportional", "partial_rotary_factor": 0.25, "factor": 8.0},
        4096,
        None,
    ),
    # Llama 3.1's whole context
    "llama3.1-131072": (128, 500000.0, LLAMA3, 131072, None),
}
# Phi-3's rope parameters with factor instead of max_position_embeddings
PHI32 = {**{k: v for k, v in PHI35.items() if k != "max_position_embeddings"}, "factor": 32.0}
HALF_ONLY = {"phi3.5-short", "phi3.5-long"}  # vLLM's LongRoPE raises for is_neox_style=False
LONG = {"llama3.1-131072"}
DTYPES = ("float32", "bfloat16", "float16")
PAIRINGS = {"half": True, "interleaved": False}


def _case_name(name, dtype, convention):
    return f"{name}-{dtype}-{convention}"


# M-RoPE. name: head dim, theta, rope parameters (vLLM's, and pe-cli's --rope), pe-cli's
# --rope-axes and pairing (vLLM's is_neox_style: half), the config's max_position_embeddings,
# and the mrope_positions_factor the model's code passes get_rope (Qwen3-VL's is 1 without video
# pruning): the cache has their product of rows
MROPE_MODELS = {
    "qwen2-vl": (128, 1000000.0, {"mrope_section": [16, 24, 24]}, "mrope", "half", 32768, 4),
    "qwen3-vl": (
        128,
        5000000.0,
        {"mrope_section": [24, 20, 20], "mrope_interleaved": True},
        "mrope-interleaved",
        "half",
        262144,
        1,
    ),
    # GLM-4.1V: contiguous sections over half the head, GPT-J pairs (vLLM's glm4.py)
    "glm-4.1v": (
        128,
        10000.0,
        {"mrope_section": [8, 12, 12], "partial_rotary_factor": 0.5},
        "mrope-glm",
        "interleaved",
        65536,
        4,
    ),
}


def _prompt(*pieces, start=0):
    """A prompt's tokens as pe-cli's inline --ids runs and as the [t, h, w] lists vLLM's forward
    takes, as the models place them: an int is that many text tokens, token k at (k, k, k); a
    (frames, rows, columns, frame step) an image's or video's, row-major from (s, s, s); each
    piece starts one past the largest position before it."""
    runs, tokens = [], []
    for piece in pieces:
        if isinstance(piece, int):
            line = f"{start}:{start + piece}"
            runs.append(f"{piece}*{line},{line},{line}")
            tokens += [(start + k,) * 3 for k in range(piece)]
        else:
            frames, rows, columns, step = piece
            runs.append(
                f"{start}:{start + frames * step}:{step},{start}:{start + rows},"
                f"{start}:{start + columns}"
            )
            tokens += [
                (start + f * step, start + r, start + c)
                for f in range(frames)
                for r in range(rows)
                for c in range(columns)
            ]
        start = max(max(token) for token in tokens) + 1
    return "; ".join(runs), [list(axis) for axis in zip(*tokens)]


def _ids(*pieces):
    runs, positions = _prompt(*pieces)
    return {"ids": runs}, positions


# name: pe-cli's options for the tokens, their [t, h, w] positions
MROPE_PROMPTS = {
    "text-image-text": _ids(5, (1, 4, 6, 1), 3),
    # a video's frames 4 positions apart (Qwen2.5-VL's t at 1 fps: 2 s per grid x its
    # tokens_per_second, 2)
    "text-video-text": _ids(4, (3, 2, 4, 4), 2),
    # an image deep in a long context: --grid and --offset
    "image-at-100000": (
        {"grid": "1x4x6", "offset": 100000},
        _prompt((1, 4, 6, 1), start=100000)[1],
    ),
}
MROPE_DTYPES = ("float32", "bfloat16")


def _mrope_name(model, prompt, dtype):
    return f"mrope-{model}-{prompt}-{dtype}"


def _cases():
    for model, (head, theta, rope, _, pairing, max_position, factor) in MROPE_MODELS.items():
        for prompt, (_, positions) in MROPE_PROMPTS.items():
            for dtype in MROPE_DTYPES:
                yield {
                    "name": _mrope_name(model, prompt, dtype),
                    "head_size": head,
                    "max_position": max_position,
                    "base": theta,
                    "is_neox_style": pairing == "half",
                    "dtype": dtype,
                    "rope_parameters": rope,
                    "positions": positions,
                    "mrope_positions_factor": factor,
                }
    for name, (head, theta, rope, max_position, max_model_len) in MODELS.items():
        for dtype in DTYPES:
            for convention, neox in PAIRINGS.items():
                if neox or name not in HALF_ONLY:
                    yield {
                        "name": _case_name(name, dtype, convention),
                        "head_size": head,
                        "max_position": max_position,
                        "base": theta,
                        "is_neox_style": neox,
                        "dtype": dtype,
                        "rope_parameters": rope,
                        "max_model_len": max_model_len,
                    }


@pytest.fixture(scope="session")
def vllm_caches():
    """Every case's cache, from one run of vLLM (its import alone takes about 10 s)."""
    from . import vllm_tables

    why = vllm_tables.unavailable()
    if why:
        pytest.skip(why)
    return vllm_tables.caches(list(_cases()))


def _bits(values: torch.Tensor) -> np.ndarray:
    if values.dtype == torch.bfloat16:
        return values.view(torch.int16).numpy().view(np.uint16)
    return values.numpy()


def _ours(name, rows, dtype, convention, part):
    head, theta, rope, _, _ = MODELS[name]
    return _bits(
        pe_cli.build(
            family="rope",
            variant="vllm",
            d_model=head,
            seq_len=rows,
            base=theta,
            rope=rope,
            convention=convention,
            dtype=dtype,
            part=part,
        ).values
    )


def _check(vllm_caches, name, dtype, convention):
    cache = vllm_caches[_case_name(name, dtype, convention)]
    rows, columns = cache.shape
    half = columns // 2
    for part, plane in (("cos", cache[:, :half]), ("sin", cache[:, half:])):
        # vLLM's cache half is pe-cli's single table; each pairing lays it out
        assert np.array_equal(_ours(name, rows, dtype, "single", part), plane)
        if convention == "interleaved":
            laid_out = np.repeat(plane, 2, axis=1)
        else:
            laid_out = np.concatenate([plane, plane], axis=1)
        mine = _ours(name, rows, dtype, convention, part)
        differ = mine != laid_out
        assert not differ.any(), f"{int(differ.sum())} of {differ.size} {part} elements differ"


@pytest.mark.parametrize(
    "name, dtype, convention",
    [
        pytest.param(name, dtype, convention, id=f"{name}-{dtype}-{convention}")
        for name in MODELS
        if name not in LONG
        for dtype in DTYPES
        for convention, neox in PAIRINGS.items()
        if neox or name not in HALF_ONLY
    ],
)
def test_model_caches_are_vllm_bit_for_bit(vllm_caches, name, dtype, convention):
    _check(vllm_caches, name, dtype, convention)


@pytest.mark.parametrize(
    "name, dtype, convention",
    [(name, dtype, convention) for name in LONG for dtype in DTYPES for convention in PAIRINGS],
)
def test_131072_positions_are_vllm_bit_for_bit(vllm_caches, name, dtype, convention):
    _check(vllm_caches, name, dtype, convention)


def _mrope_table(model, prompt, dtype, part, variant="vllm"):
    head, theta, rope, axes, pairing, _, _ = MROPE_MODELS[model]
    return pe_cli.build(
        family="rope",
        variant=variant,
        d_model=head,
        base=theta,
        rope=rope,
        axes=axes,
        convention=pairing,
        dtype=dtype if variant == "vllm" else "float32",
        part=part,
        **MROPE_PROMPTS[prompt][0],
    ).values


@pytest.mark.parametrize(
    "model, prompt, dtype",
    [
        pytest.param(model, prompt, dtype, id=f"{model}-{prompt}-{dtype}")
        for model in MROPE_MODELS
        for prompt in MROPE_PROMPTS
        for dtype in MROPE_DTYPES
    ],
)
def test_mrope_tables_are_vllm_bit_for_bit(vllm_caches, model, prompt, dtype):
    """Each token's cos and sin as vLLM's MRotaryEmbedding rotates by them, laid out in its
    pairing; and they are transformers' M-RoPE table (hf-rope, float32) cast to the dtype."""
    table = vllm_caches[_mrope_name(model, prompt, dtype)]
    half = table.shape[1] // 2
    pairing = MROPE_MODELS[model][4]
    for part, plane in (("cos", table[:, :half]), ("sin", table[:, half:])):
        if pairing == "interleaved":
            laid_out = np.repeat(plane, 2, axis=1)
        else:
            laid_out = np.concatenate([plane, plane], axis=1)
        mine = _bits(_mrope_table(model, prompt, dtype, part))
        assert mine.shape == laid_out.shape
        differ = mine != laid_out
        assert not differ.any(), f"{int(differ.sum())} of {differ.size} {part} elements differ"
        hf = _mrope_table(model, prompt, dtype, part, variant="hf-rope")
        assert np.array_equal(_bits(hf.to(getattr(torch, dtype))), laid_out)


def test_the_cache_lengths_are_vllms(vllm_caches):
    """YaRN's cache is original x factor rows whatever max_position says; LongRoPE's caches are
    the original length (short) and max_position_embeddings (long)."""
    lengths = {name: vllm_caches[_case_name(name, "float32", "half")].shape[0] for name in MODELS}
    assert lengths["qwen2.5-yarn"] == 131072
    assert lengths["deepseek-yarn"] == 163840
    assert lengths["yarn-attention-factor"] == 10243  # ceil(4097 * 2.5)
    assert lengths["phi3.5-short"] == 4096 and lengths["phi3.5-long"] == 131072
    assert lengths["linear-odd"] == 3789  # ceil(1024 * 3.7)


# ---------------------------------------------------------------------------------------------
# What vLLM computes otherwise than transformers (no vLLM needed: the variant against hf-rope)


def _table(variant, **options):
    return pe_cli.build(family="rope", variant=variant, **options).values


# rows: within each cache, past LongRoPE's original length for its long factors
SAME_AS_TRANSFORMERS = {
    "llama3.1": 1024,
    "qwen2": 1024,
    "qwen2.5-yarn": 1024,
    "phi3.5-short": 1024,
    "phi3.5-long": 4100,
    "phi2-partial": 1024,
    "partial-half-llama3": 1024,
    "deepseek-yarn": 1024,
    "yarn-attention-factor": 1024,
    "dynamic": 2048,  # within max_position_embeddings, where transformers keeps the base too
}


@pytest.mark.parametrize("name, rows", SAME_AS_TRANSFORMERS.items())
def test_where_vllms_op_order_is_transformers_the_table_is_hf_ropes(name, rows):
    head, theta, rope, _, _ = MODELS[name]
    options = dict(d_model=head, seq_len=rows, base=theta, rope=rope, dtype="bfloat16")
    for part in ("cos", "sin"):
        assert torch.equal(
            _table("vllm", part=part, **options), _table("hf-rope", part=part, **options)
        )


@pytest.mark.parametrize(
    "name",
    [
        "linear-odd",  # the positions divided by 3.7, not the frequencies
        "proportional",  # no division by factor
    ],
)
def test_where_vllm_computes_otherwise_the_table_differs(name):
    head, theta, rope, _, _ = MODELS[name]
    options = dict(d_model=head, seq_len=2048, base=theta, rope=rope)
    assert not torch.equal(_table("vllm", **options), _table("hf-rope", **options))


@pytest.mark.parametrize(
    "options, reason",
    [
        (dict(rope=PHI35, convention="interleaved", d_model=96), "neox style only"),
        (dict(rope=PHI32, d_model=96), "give it"),
        (
            dict(
                rope={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8},
                seq_len=40,
            ),
            "original_max_position_embeddings x factor = 32 rows",
        ),
        (dict(dtype="float64"), "model's dtype"),
        (dict(part="inv_freq"), "cos and sin only"),
        (dict(rope={"ntk_factor": 2.0}), "ntk_factor"),
        (dict(ids="3*0; -2:5"), "positions 0 onward (got -2)"),
        # M-RoPE
        (
            dict(axes="axial", grid="4x6", merge=2, rope={"rope_type": "axial"}),
            "vision encoders' rotary tables are not modelled",
        ),
        (
            dict(
                axes="mrope-ernie",
                grid="1x2x3",
                rope={"mrope_section": [10, 10, 12]},
                convention="interleaved",
            ),
            "contiguous or interleaved as Qwen3-VL's: not --rope-axes mrope-ernie's layout",
        ),
        (
            dict(axes="mrope-interleaved", grid="1x2x3", rope={"mrope_section": [8, 6, 6]}),
            "mrope_section to add up to rotary dim / 2 = 32 (got 20)",
        ),
        (
            dict(
                axes="mrope",
                grid="1x2x3",
                rope={"mrope_section": [8, 12, 12], "mrope_interleaved": True},
            ),
            "vLLM reads mrope_interleaved = true: its sections would be interleaved",
        ),
        (
            dict(
                axes="mrope",
                grid="1x2x3",
                rope={
                    "mrope_section": [8, 12, 12],
                    "rope_type": "yarn",
                    "factor": 4.0,
                    "original_max_position_embeddings": 32768,
                },
            ),
            "places its ramp by original_max_position_embeddings x the model's mrope_positions",
        ),
        (
            dict(
                axes="mrope",
                grid="1x2x3",
                rope={"mrope_section": [8, 12, 12], "rope_type": "linear", "factor": 2.0},
            ),
            "M-RoPE for rope_type default and yarn, not linear",
        ),
    ],
)
def test_what_vllm_cannot_build_is_refused_in_one_line(options, reason):
    options = {"d_model": 64, "seq_len": 16, **options}
    with pytest.raises(BadInput) as refused:
        _table("vllm", **options)
    message = str(refused.value)
    assert "\n" not in message and reason in message


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_decode_window_is_the_caches_rows(vllm_caches, dtype):
    """--offset: the rows vLLM's forward indexes for positions 100003 .. 100259."""
    head, theta, rope, _, _ = MODELS["llama3.1-131072"]
    cache = vllm_caches[_case_name("llama3.1-131072", dtype, "half")][100003:100260]
    options = dict(d_model=head, seq_len=257, offset=100003, base=theta, rope=rope, dtype=dtype)
    half = cache.shape[1] // 2
    for part, plane in (("cos", cache[:, :half]), ("sin", cache[:, half:])):
        mine = _bits(_table("vllm", part=part, convention="single", **options))
        assert np.array_equal(mine, plane)


def test_ids_are_the_caches_rows(vllm_caches):
    """--ids: the rows vLLM's forward indexes for any positions (OmniGen's padded prompt)."""
    head, theta, rope, _, _ = MODELS["llama3.1-131072"]
    cache = vllm_caches[_case_name("llama3.1-131072", "bfloat16", "half")]
    rows = [0, 0, 0, *range(100003, 100010), 7]
    options = dict(d_model=head, base=theta, rope=rope, dtype="bfloat16", convention="single")
    half = cache.shape[1] // 2
    for part, plane in (("cos", cache[rows, :half]), ("sin", cache[rows, half:])):
        mine = _bits(_table("vllm", part=part, ids="3*0; 100003:100010; 7", **options))
        assert np.array_equal(mine, plane)


def test_the_cli_refuses_in_one_line(cli):
    code, out, err = cli(
        "generate", "--family", "rope", "--variant", "vllm", "-d", "64", "-l", "40",
        "--rope", "rope_type=yarn", "--rope", "factor=4",
        "--rope", "original_max_position_embeddings=8", "-o", "-",
    )  # fmt: skip
    assert code == 2 and out == b""
    assert err == (
        "Error: vLLM's yarn cache has original_max_position_embeddings x factor = 32 rows: "
        "positions up to 31 (got up to 39)\n"
    )
