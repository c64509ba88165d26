"""The exact variant against an independent mpmath reference: correctly rounded everywhere."""

import numpy as np
import pytest

from pe_cli import engine
from pe_cli.core.dtypes import cast_exact, host_bits, host_float
from pe_cli.engine import _kernel_blocks, build
from pe_cli.numerics import exact, fast
from pe_cli.spec import TableSpec

from . import reference

CASES = [
    # convention, d_model, offset, seq_len
    ("vaswani", 8, 0, 16),
    ("vaswani", 513, 2**20 - 24, 48),
    ("vaswani", 64, 2**24 - 8, 16),
    ("vaswani", 32, 2**32 - 9, 8),
    ("concat", 17, 1000, 16),
    ("tensor2tensor", 33, 2**20, 16),
    ("tensor2tensor", 3, 5, 8),
    ("fairseq", 20, 0, 24),
    ("whisper", 24, 123456, 16),
]


def _check_table(values, convention, d, offset, dtype, base=10000.0, columns=None, padding=None):
    worst = 0.0
    for i, row in enumerate(values):
        p = offset + i
        for j in columns if columns is not None else range(d):
            truth = reference.value(convention, d, base, p, j, padding)
            worst = max(worst, reference.ulps(float(row[j]), truth, dtype))
            assert float(row[j]) == reference.round_to(truth, dtype), (
                f"{convention} d={d} p={p} j={j} {dtype}: {float(row[j])!r} is not the "
                f"correctly rounded {truth}"
            )
    return worst


@pytest.mark.parametrize("convention,d,offset,length", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_every_element_is_correctly_rounded(convention, d, offset, length, dtype):
    spec = TableSpec(d_model=d, seq_len=length, offset=offset, convention=convention, dtype=dtype)
    values = build(spec).float64()
    columns = None if d <= 64 else sorted({0, 1, 2, 3, d - 2, d - 1, *range(5, d, 37)})
    _check_table(values, convention, d, offset, dtype, columns=columns)


def test_known_values_d8_position1():
    row = build(d_model=8, seq_len=2).numpy()[1]
    expected = [0.841471, 0.540302, 0.099833, 0.995004, 0.010000, 0.999950, 0.001000, 1.000000]
    np.testing.assert_allclose(row, expected, atol=5e-7)


def test_non_default_base_and_odd_width():
    spec = TableSpec(d_model=11, seq_len=12, offset=77, base=500000.0, dtype="float16")
    _check_table(build(spec).float64(), "vaswani", 11, 77, "float16", base=500000.0)


def test_fairseq_padding_row_is_zero_and_the_rest_exact():
    spec = TableSpec(d_model=9, seq_len=6, convention="fairseq", padding_idx=1)
    values = build(spec).float64()
    assert not values[1].any()
    _check_table(values, "fairseq", 9, 0, "float32", padding=1)


def test_decimal_slow_path_rounds_correctly(monkeypatch):
    # Send a large share of elements through the decimal recomputation and check them all.
    monkeypatch.setattr(exact, "SUSPECT_RELATIVE", 2.0**-12)
    monkeypatch.setattr(exact, "DOUBLE_DOUBLE_RELATIVE", 2.0**-45)
    recomputed = []
    decimal_sin_cos = exact.decimal_sin_cos
    monkeypatch.setattr(
        exact, "decimal_sin_cos", lambda p, turn: recomputed.append(p) or decimal_sin_cos(p, turn)
    )
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        recomputed.clear()
        spec = TableSpec(d_model=16, seq_len=32, offset=2**20, dtype=dtype)
        values = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=32)))
        values = host_float(values, dtype).astype(np.float64)
        assert len(recomputed) > 20  # the slow path really ran
        _check_table(values, "vaswani", 16, 2**20, dtype)


def test_exact_zeros_are_decided_without_the_slow_path():
    """A double-double zero (sin at position 0) is correctly rounded as it is; an absolute error
    bound (a pooled mean's) makes it undecided, since a sum may cancel to some 1e-30."""
    zeros = np.zeros(4)
    assert not exact.decide_float64(np, zeros, zeros)[1].any()
    assert exact.decide_float64(np, zeros, zeros, 2.0**-84)[1].all()
    assert not exact.decide_float64(np, np.full(4, 0.5), zeros, 2.0**-84)[1].any()


def test_decimal_sin_cos_keeps_its_digits_in_every_quadrant():
    """The slow path's sin and cos agree with mpmath to 55 digits at angles in all four
    quadrants (negated values were once rounded to the default context's 28 digits)."""
    from decimal import Decimal

    import mpmath

    turn = exact.turns([Decimal(1)])[0]  # frequency 1: the angle is the position
    for p in (1, 2, 4, 5, -1, -2, -4, 1000003):
        s, c = exact.decimal_sin_cos(p, turn)
        for found, true in ((s, mpmath.sin(p)), (c, mpmath.cos(p))):
            assert abs(mpmath.mpf(str(found)) - true) < mpmath.mpf(10) ** -55, (p, found)


def test_torch_path_matches_numpy_path_bit_for_bit():
    # the path --device cuda takes, run on the CPU
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        spec = TableSpec(d_model=130, seq_len=300, offset=2**20, dtype=dtype)
        by_numpy = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=128)))
        by_torch = _kernel_blocks(spec, "cpu", rows=128, use_torch=True)
        by_torch = np.concatenate([host_bits(b) for b in by_torch])
        assert np.array_equal(by_numpy, by_torch)  # both correctly rounded


@pytest.mark.parametrize(
    "params",
    [
        dict(preset="flux", grid="4x6", text_tokens=3),
        dict(preset="ltx2", grid="2x3x4"),
        dict(preset="hidream", grid="3x4", part="rotation"),
        dict(
            family="rope", d_model=16, axes="mrope", grid="2x3x4", rope={"mrope_section": "2,3,3"}
        ),
        dict(family="rope", d_model=16, axes="axial", grid="4x6", part="angle"),
        dict(preset="wan", grid="2x4x4", rope={"pool": "1,2,2"}),
    ],
    ids=["flux", "ltx2", "rotation", "mrope", "axial angles", "pooled"],
)
def test_the_torch_path_of_a_multi_axis_table_stays_torch(params):
    """A multi-axis table on the torch path (--device cuda's) is built of torch tensors from
    its planes on (numpy's stack of CUDA tensors failed: every preset on --device cuda), and is
    the numpy path's bit for bit."""
    import torch

    from pe_cli.engine import FAMILIES, Workspace, _sinusoids
    from pe_cli.spec import spec_from_keywords

    spec = spec_from_keywords(**params)
    work = Workspace(torch, "cpu", spec.dtype, _sinusoids(spec))
    rows = FAMILIES[spec.family].exact_rows(spec, 0, spec.rows, work)
    assert torch.is_tensor(rows), type(rows)
    by_numpy = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=spec.rows)))
    assert np.array_equal(host_bits(cast_exact(rows, spec.dtype)), by_numpy)


def test_blocks_do_not_change_values():
    spec = TableSpec(d_model=30, seq_len=100, offset=9)
    whole = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=100)))
    pieces = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=7)))
    assert np.array_equal(whole, pieces)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_round_to_is_correct_rounding(dtype):
    import mpmath

    rng = np.random.default_rng(7)
    values = np.concatenate(
        [
            rng.uniform(-1, 1, 2000),
            rng.uniform(-1, 1, 500) * 2.0 ** rng.integers(-30, 0, 500),  # float16 subnormals too
        ]
    )
    rounded, _ = exact.round_to(np, values, dtype)
    for v, r in zip(values.tolist(), rounded.tolist()):
        assert r == reference.round_to(mpmath.mpf(v), dtype)


FAST = [
    ("vaswani", 512, 0, 10000, None),
    ("vaswani", 33, 2**32 - 9000, 9000, None),
    ("concat", 33, 123456, 9000, None),
    ("tensor2tensor", 33, 7, 5000, None),
    ("tensor2tensor", 1, 0, 100, None),
    ("fairseq", 20, 0, 9000, 4100),
    ("whisper", 8, 2**20, 9000, None),
    ("vaswani", 6, 2**31 - 5, 70000, None),  # more than one batch of anchors
]


@pytest.mark.skipif(fast._rotate is None, reason="the C fast path was not built")
@pytest.mark.parametrize("convention,d,offset,length,padding", FAST)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fast_path_is_bit_identical_to_the_exact_kernel(
    convention, d, offset, length, padding, dtype
):
    spec = TableSpec(
        d_model=d,
        seq_len=length,
        offset=offset,
        convention=convention,
        padding_idx=padding,
        dtype=dtype,
    )
    fast_path = np.concatenate(list(engine._fast_blocks(spec, engine._fast_plan(spec, "cpu"))))
    kernel = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=2048)))
    assert np.array_equal(fast_path, kernel)


def _midpoints(dtype):
    """(midpoint, spacing) pairs of dtype, exact mpmath numbers: in the middle of a binade,
    just below and above powers of two, and among the subnormals."""
    import mpmath

    precision, min_exponent = reference.PRECISION[dtype]
    two, points = mpmath.mpf(2), []
    for e in (-1, -3, -10, min_exponent + precision - 1):  # a binade's first normal value 2**e
        quantum = two ** max(e - precision + 1, min_exponent)
        below = two ** max(e - precision, min_exponent)  # the binade below
        points += [
            (two**e + 5.5 * quantum, quantum),
            (two**e - below / 2, below),
            (two**e + quantum / 2, quantum),
        ]
    points.append((two**min_exponent * 2.5, two**min_exponent))  # between two subnormals
    return points + [(-m, q) for m, q in points]


@pytest.mark.skipif(fast._rotate is None, reason="the C fast path was not built")
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_the_c_kernel_settles_near_midpoints_in_double_double(dtype, monkeypatch):
    """The kernel rotates fine-table values by an exact identity here, so each output is a
    given double-double: a midpoint of dtype nudged by +-2**-70 (decided in double-double, to
    the side of the nudge) or by +-2**-90 (within the double-double's error: reported to the
    caller, not guessed)."""
    import mpmath

    monkeypatch.setattr(mpmath.mp, "prec", 300)  # for this test only: the reference's is 256
    cases = [
        (m + sign * mpmath.mpf(2) ** nudge, nudge)
        for m, spacing in _midpoints(dtype)
        for sign in (1, -1)
        for nudge in (-70, -90)
        if nudge == -90 or spacing > 2.0**-60
    ]
    values = [v for v, _ in cases]
    hi = np.array([float(v) for v in values])
    lo = np.array([float(v - mpmath.mpf(h)) for v, h in zip(values, hi)])
    assert all(mpmath.mpf(h) + mpmath.mpf(low) == v for h, low, v in zip(hi, lo, values))
    n = len(values)
    identity = np.zeros((4, 1, n))
    identity[1] = 1.0  # sin 0 = 0, cos 0 = 1, exactly
    fine = np.zeros((4, 1, n))
    fine[0, 0], fine[2, 0] = hi, lo  # the sin plane: the values
    fine[1, 0] = 0.5  # the cos plane: exact in every format
    fmt = TableSpec(d_model=2, seq_len=1, dtype=dtype).format
    out = np.zeros((1, 2 * n), dtype=fmt.host)
    suspects = np.zeros(4 * n, dtype=np.int64)
    count = fast._rotate.rotate_block(
        out,
        fast.KINDS[dtype],
        fmt.precision,
        fmt.min_exponent,
        1,
        2 * n,
        n,
        1,
        1,
        0,
        identity,
        identity,
        fine,
        np.arange(n, dtype=np.int32),
        np.arange(n, 2 * n, dtype=np.int32),
        np.empty(0, dtype=np.int32),
        np.empty(4 * n),
        suspects,
    )
    assert all(code % 2 == 0 for code in suspects[:count])  # no cos
    reported = {int(code) // 2 for code in suspects[:count]}
    got = host_float(out, dtype).astype(np.float64)[0, :n]
    for i, (v, nudge) in enumerate(cases):
        if nudge == -90:
            assert i in reported, f"{v} is within the kernel's error of a midpoint"
        else:
            assert i not in reported and got[i] == reference.round_to(v, dtype), v
    assert np.all(host_float(out, dtype)[0, n:] == 0.5)


def test_without_the_c_extension_the_numpy_path_gives_the_same_table(monkeypatch):
    spec = TableSpec(d_model=64, seq_len=5000, offset=99)
    with_c = build(spec).numpy()
    monkeypatch.setattr(fast, "_rotate", None)
    assert engine._fast_plan(spec, "cpu") is None
    assert np.array_equal(build(spec).numpy(), with_c)


SCALED = [  # RoPE tables whose values carry an attention factor (YaRN's, LongRoPE's)
    (
        {"rope_type": "yarn", "factor": 32, "original_max_position_embeddings": 4096},
        128,
        2**31 - 7000,
        9000,
    ),
    (
        {
            "rope_type": "yarn",
            "factor": 4,
            "original_max_position_embeddings": 64,
            "attention_factor": 1.9,
        },
        64,
        0,
        70000,
    ),
    (
        {
            "rope_type": "longrope",
            "short_factor": ",".join(["1.5"] * 16),
            "long_factor": ",".join(["3"] * 16),
            "original_max_position_embeddings": 64,
            "factor": 8,
        },
        32,
        100,
        9000,
    ),
]


@pytest.mark.skipif(fast._rotate is None, reason="the C fast path was not built")
@pytest.mark.parametrize("rope,d,offset,length", SCALED)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("part", ["cos", "sin"])
def test_scaled_rope_takes_the_fast_path_bit_for_bit(rope, d, offset, length, dtype, part):
    spec = TableSpec(
        family="rope", rope=rope, d_model=d, seq_len=length, offset=offset, dtype=dtype, part=part
    )
    plan = engine._fast_plan(spec, "cpu")
    assert plan is not None and plan[0].scale is not None
    fast_path = np.concatenate(list(engine._fast_blocks(spec, plan)))
    kernel = np.concatenate(list(_kernel_blocks(spec, "cpu", rows=2048)))
    assert np.array_equal(fast_path, kernel)


def test_a_factor_of_two_or_more_takes_the_exact_kernel():
    spec = TableSpec(
        family="rope",
        d_model=16,
        seq_len=10,
        rope={
            "rope_type": "yarn",
            "factor": 4,
            "original_max_position_embeddings": 4,
            "attention_factor": 2,
        },
    )
    assert engine._fast_plan(spec, "cpu") is None
