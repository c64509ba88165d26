"""RoPE, ALiBi and 2-D sin-cos tables: every element against mpmath (tests/reference.py)."""

import mpmath
import numpy as np
import pytest

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.spec import TableSpec

from . import reference as ref

ROPE_CASES = {
    "default": {},
    "partial": {"partial_rotary_factor": 0.5},
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic-short": {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 1 << 21},
    "dynamic-grown": {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 2048},
    "yarn": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096},
    "yarn-mscale": {
        "rope_type": "yarn",
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "mscale": 0.707,
        "mscale_all_dim": 1.0,
        "beta_fast": 24.0,
        "beta_slow": 2.0,
    },
    "yarn-untruncated": {
        "rope_type": "yarn",
        "factor": 8.0,
        "original_max_position_embeddings": 2048,
        "truncate": False,
    },
    "longrope": {
        "rope_type": "longrope",
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
        "short_factor": [1.0 + 0.05 * i for i in range(8)],
        "long_factor": [1.5 + 0.25 * i for i in range(8)],
    },
    "llama3": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    # Llama 4 Scout's: no band between kept and divided wavelengths
    "llama3-equal-factors": {
        "rope_type": "llama3",
        "factor": 16.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
    },
    "ntk-alpha": {"rope_type": "ntk_alpha", "alpha": 1000.0},
}

WINDOWS = [(0, 6), (4090, 6), (2**20 - 3, 6), (2**31 + 5, 4)]


def _check_rope(case, convention, part, dtype, offset, length, d=16, base=500000.0):
    rope = ROPE_CASES[case]
    spec = TableSpec(
        family="rope",
        d_model=d,
        seq_len=length,
        offset=offset,
        base=base,
        rope=rope,
        convention=convention,
        part=part,
        dtype=dtype,
    )
    got = build(spec).float64()
    dim = int(d * rope.get("partial_rotary_factor", 1.0))
    ws, attention = ref.rope_frequencies(dim, base, rope, offset + length)
    fn = mpmath.cos if part == "cos" else mpmath.sin
    n = dim // 2
    assert got.shape == (length, dim)
    for r in range(length):
        for j in range(dim):
            i = j % n if convention == "half" else j // 2
            truth = attention * fn((offset + r) * ws[i])
            assert got[r, j] == ref.round_to(truth, dtype), (case, offset + r, j)


@pytest.mark.parametrize("case", ROPE_CASES)
@pytest.mark.parametrize("offset, length", WINDOWS)
def test_rope_tables_correctly_rounded(case, offset, length):
    for part in ("cos", "sin"):
        _check_rope(case, "half", part, "float32", offset, length)
    _check_rope(case, "interleaved", "cos", "float64", offset, length)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_rope_narrow_dtypes_correctly_rounded(dtype):
    _check_rope("yarn", "half", "sin", dtype, 60000, 5)
    _check_rope("llama3", "interleaved", "cos", dtype, 0, 5)


@pytest.mark.parametrize("case", ROPE_CASES)
def test_rope_inverse_frequencies_correctly_rounded(case):
    rope = ROPE_CASES[case]
    spec = TableSpec(
        family="rope", d_model=16, seq_len=8192, base=500000.0, rope=rope, part="inv_freq"
    )
    got = build(spec).float64()
    dim = int(16 * rope.get("partial_rotary_factor", 1.0))
    ws, _ = ref.rope_frequencies(dim, 500000.0, rope, 8192)
    assert got.shape == (dim // 2,)
    assert got.tolist() == [ref.round_to(w, "float32") for w in ws]


def test_rope_longrope_switches_factors_past_the_original_length():
    case = ROPE_CASES["longrope"]
    short = build(family="rope", d_model=16, seq_len=4096, rope=case, part="inv_freq").float64()
    long = build(family="rope", d_model=16, seq_len=4097, rope=case, part="inv_freq").float64()
    assert short[1] != long[1] and short[0] == ref.round_to(
        ref.rope_frequencies(16, 10000, case, 1)[0][0], "float32"
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rope": {"rope_type": "yarn"}}, "needs factor"),
        ({"rope": {"rope_type": "warp"}}, "unknown rope_type"),
        ({"rope": {"factr": 2}}, "did you mean 'factor'"),
        ({"rope": {"partial_rotary_factor": 0.05}, "d_model": 10}, "must be at least 1"),
        ({"rope": {"rope_type": "linear", "factor": "x"}}, "not a float"),
        ({"convention": "vaswani"}, "unknown rope convention"),
        ({"part": "slopes"}, "unknown rope part"),
        ({"cls_token": True}, "belongs to --family sincos2d"),
        ({"grid": "4x4"}, "--grid is for multi-axis tables"),
    ],
)
def test_rope_refusals(params, message):
    with pytest.raises(BadInput, match=message):
        TableSpec(family="rope", **params)


# ----------------------------------------------------------------------------------- ALiBi


@pytest.mark.parametrize("heads", [1, 2, 3, 5, 8, 12, 16, 20, 24, 32, 40, 64, 96])
def test_alibi_slopes_correctly_rounded(heads):
    truth = ref.alibi_slopes(heads)
    for dtype in ("float32", "float64", "bfloat16"):
        got = build(family="alibi", heads=heads, part="slopes", dtype=dtype).float64()
        assert got.tolist() == [ref.round_to(m, dtype) for m in truth]


@pytest.mark.parametrize("part", ["causal", "symmetric"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_alibi_bias_correctly_rounded(part, dtype):
    heads, length = 12, 23
    got = build(family="alibi", heads=heads, seq_len=length, part=part, dtype=dtype).float64()
    assert got.shape == (heads, length, length)
    slopes = ref.alibi_slopes(heads)
    for h in (0, 7, 8, 11):
        for i in range(length):
            for j in range(length):
                distance = abs(i - j) if part == "symmetric" else max(i - j, 0)
                assert got[h, i, j] == -ref.round_to(slopes[h] * distance, dtype)
    assert not np.signbit(got[got == 0]).any()  # no negative zeros


def test_alibi_bias_streams_in_blocks_equal_to_one_block():
    from pe_cli.engine import blocks

    spec = TableSpec(family="alibi", heads=5, seq_len=30, part="symmetric")
    whole = np.concatenate(list(blocks(spec, rows=7)))
    assert np.array_equal(whole, build(spec).values)


# ------------------------------------------------------------------------------ 2-D sin-cos


@pytest.mark.parametrize("convention", ["mae", "timm", "timm-interleaved"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sincos2d_correctly_rounded(convention, dtype):
    rows, cols, d = 5, 7, 16
    got = build(
        family="sincos2d",
        grid=(rows, cols),
        d_model=d,
        convention=convention,
        dtype=dtype,
        cls_token=True,
    ).float64()
    assert got.shape == (rows * cols + 1, d) and not got[0].any()
    quarter = d // 4
    blocks = {
        "mae": ("xs", "xc", "ys", "yc"),
        "timm": ("ys", "xs", "yc", "xc"),
        "timm-interleaved": ("ys", "yc", "xs", "xc"),
    }[convention]
    for k in range(rows * cols):
        y, x = divmod(k, cols)
        for j in range(d):
            which = blocks[j // quarter]
            coordinate = y if which[0] == "y" else x
            fn = mpmath.sin if which[1] == "s" else mpmath.cos
            w = mpmath.mpf(10000) ** (-mpmath.mpf(j % quarter) / quarter)
            assert got[k + 1, j] == ref.round_to(fn(coordinate * w), dtype)


@pytest.mark.parametrize("d", [1, 2, 7, 13, 16])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_sincos2d_pairs_correctly_rounded_for_any_width(d, dtype):
    # positional-encodings' layout: [y | x], each 2n columns of interleaved sin and cos,
    # n = ceil(d/4) frequencies T**(-i/n), the whole cut to d columns
    rows, cols, base = 4, 6, 500.0
    got = build(
        family="sincos2d", grid=(rows, cols), d_model=d, convention="pairs", dtype=dtype, base=base
    ).float64()
    n = -(-d // 4)
    assert got.shape == (rows * cols, d)
    for k in range(rows * cols):
        y, x = divmod(k, cols)
        for j in range(d):
            coordinate = y if j < 2 * n else x
            fn = mpmath.sin if j % 2 == 0 else mpmath.cos
            w = mpmath.mpf(base) ** (-mpmath.mpf(j % (2 * n) // 2) / n)
            assert got[k, j] == ref.round_to(fn(coordinate * w), dtype), (k, j)


@pytest.mark.parametrize(
    "params, message",
    [
        ({}, "needs --grid"),
        ({"grid": "4x4", "d_model": 10}, "divisible by 4"),
        ({"grid": "4x4", "variant": "positional-encodings", "base": 100.0}, "hardcodes base 10000"),
        (
            {"grid": "4x4", "variant": "positional-encodings", "cls_token": True},
            "no class-token row",
        ),
        ({"grid": "4y4"}, "not ROWSxCOLUMNS"),
        ({"grid": "4x4", "variant": "timm", "cls_token": True}, "no class-token row"),
        ({"grid": "4x4", "variant": "hf-rope"}, "use --family rope"),
    ],
)
def test_sincos2d_refusals(params, message):
    with pytest.raises(BadInput, match=message):
        TableSpec(family="sincos2d", **params)


@pytest.mark.parametrize(
    "convention, part, dtype", [("half", "cos", "float32"), ("interleaved", "sin", "bfloat16")]
)
def test_rope_fast_path_equals_the_exact_kernel(convention, part, dtype):
    from pe_cli.engine import _fast_plan, _kernel_blocks, blocks

    spec = TableSpec(
        family="rope",
        d_model=32,
        seq_len=9000,
        offset=2**24 - 100,
        base=500000.0,
        convention=convention,
        part=part,
        dtype=dtype,
        rope={"rope_type": "linear", "factor": 8.0},
    )
    if _fast_plan(spec, "cpu") is None:
        pytest.skip("the C extension is not built here")
    fast = np.concatenate(list(blocks(spec)))
    kernel = np.concatenate(list(_kernel_blocks(spec, "cpu", 1000)))
    assert np.array_equal(fast, kernel)
