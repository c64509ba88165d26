"""--variant mlx against MLX itself: every table is read from mx.fast.rope, or from the rope
module mlx-lm's initialize_rope builds for the model, by rotating unit vectors (1 in the first
element of every pair, 0 in the second: the output holds cos and sin), and compared bit for
bit. MLX computes on the CPU here; its half dtypes rotate in float16 and bfloat16."""

from fractions import Fraction

import numpy as np
import pytest

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.numerics.float32 import fma
from pe_cli.spec import TableSpec

from .rope_models import DEEPSEEK_YARN, LLAMA3, PHI35_LONG, PHI35_SHORT

# name: head dim, theta, rope parameters (pe-cli's, and mlx-lm's scaling config), the model's
# max_position_embeddings
MODELS = {
    "llama3.1": (128, 500000.0, LLAMA3, 131072),
    "qwen2": (128, 1000000.0, {}, 32768),
    "qwen2.5-yarn": (
        128,
        1000000.0,
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        131072,
    ),
    "phi3.5-longrope": (
        96,
        10000.0,
        {
            "rope_type": "longrope",
            "long_factor": PHI35_LONG,
            "short_factor": PHI35_SHORT,
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
        },
        131072,
    ),
    "phi2-partial": (80, 10000.0, {"partial_rotary_factor": 0.4}, 2048),
    "partial-half-llama3": (64, 500000.0, {**LLAMA3, "partial_rotary_factor": 0.5}, 131072),
    "deepseek-yarn": (
        64,
        10000.0,
        DEEPSEEK_YARN,
        163840,
    ),
    "linear": (128, 10000.0, {"rope_type": "linear", "factor": 2.0}, 4096),
    "dynamic": (
        128,
        10000.0,
        {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 2048},
        2048,
    ),
    "proportional": (
        128,
        1000000.0,
        {"rope_type": "proportional", "partial_rotary_factor": 0.25, "factor": 8.0},
        131072,
    ),
}
HALF_ONLY = {"phi3.5-longrope"}  # mlx-lm's SuScaledRoPE is traditional=False (refused)
DTYPES = ("float32", "bfloat16", "float16")


@pytest.fixture(scope="module")
def mlx():
    mx = pytest.importorskip("mlx.core")
    mx.set_default_device(mx.cpu)
    return mx


@pytest.fixture(scope="module")
def initialize_rope(mlx):
    return pytest.importorskip("mlx_lm.models.rope_utils").initialize_rope


def _rotary(head_dim, rope):
    if rope.get("rope_type") == "proportional":
        return head_dim  # Gemma 4 passes its head dim; the factor is the rotated share
    return int(head_dim * rope.get("partial_rotary_factor", 1.0))


def _module(initialize_rope, name, traditional):
    """The rope module mlx-lm builds for the model (phi3.py builds SuScaledRoPE itself)."""
    head_dim, theta, rope, longest = MODELS[name]
    dims = _rotary(head_dim, rope)
    if rope.get("rope_type") == "longrope":
        from mlx_lm.models.rope_utils import SuScaledRoPE

        return SuScaledRoPE(
            dims,
            base=theta,
            max_position_embeddings=longest,
            original_max_position_embeddings=rope["original_max_position_embeddings"],
            short_factor=rope["short_factor"],
            long_factor=rope["long_factor"],
        )
    scaling = {k: v for k, v in rope.items() if k != "partial_rotary_factor"} or None
    if rope.get("rope_type") == "proportional":
        scaling = dict(rope)
    return initialize_rope(dims, theta, traditional, scaling, longest)


def _mlx_planes(mx, rotate, head_dim, dims, rows, offset, traditional, dtype):
    """(cos, sin) planes, (rows, dims / 2) float32, that `rotate` gives unit vectors of
    head_dim columns (the columns past dims must come back as they went in)."""
    x = np.zeros((1, 1, rows, head_dim), np.float32)
    first = slice(0, dims, 2) if traditional else slice(0, dims // 2)
    second = slice(1, dims, 2) if traditional else slice(dims // 2, dims)
    x[..., first] = 1.0
    x[..., dims:] = 0.5
    out = rotate(mx.array(x).astype(getattr(mx, dtype)), offset)
    mx.eval(out)
    out = np.array(out.astype(mx.float32))[0, 0]
    assert np.all(out[:, dims:] == 0.5)  # mx.fast.rope leaves the unrotated columns
    return out[:, first], out[:, second]


def _laid_out(plane, convention):
    if convention == "interleaved":
        return np.repeat(plane, 2, axis=1)
    return np.concatenate([plane, plane], axis=1)


def _ours(name, rows, offset, convention, dtype, part):
    head_dim, theta, rope, _ = MODELS[name]
    spec = TableSpec(
        family="rope",
        variant="mlx",
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


def _bits_equal(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def _check(mx, initialize_rope, name, rows, offset, traditional, dtype):
    head_dim, _, rope, _ = MODELS[name]
    module = _module(initialize_rope, name, traditional)
    cos, sin = _mlx_planes(
        mx,
        lambda x, at: module(x, offset=at),
        head_dim,
        _rotary(head_dim, rope),
        rows,
        offset,
        traditional,
        dtype,
    )
    convention = "interleaved" if traditional else "half"
    assert _bits_equal(
        _ours(name, rows, offset, convention, dtype, "cos"), _laid_out(cos, convention)
    )
    assert _bits_equal(
        _ours(name, rows, offset, convention, dtype, "sin"), _laid_out(sin, convention)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "name, traditional",
    [
        pytest.param(name, traditional, id=f"{name}-{'interleaved' if traditional else 'half'}")
        for name in MODELS
        for traditional in (False, True)
        if not (traditional and name in HALF_ONLY)
    ],
)
def test_model_tables_are_mlx_lm_bit_for_bit(mlx, initialize_rope, name, traditional, dtype):
    _check(mlx, initialize_rope, name, 2048, 0, traditional, dtype)
    _check(mlx, initialize_rope, name, 257, 100_003, traditional, dtype)  # a decode window


# the longest contexts: Llama 3.1's 131072 positions and others
@pytest.mark.parametrize(
    "name, traditional, dtype",
    [
        ("llama3.1", False, "float32"),
        ("llama3.1", True, "bfloat16"),
        ("qwen2.5-yarn", False, "bfloat16"),
        ("phi3.5-longrope", False, "float16"),
        ("dynamic", False, "float32"),
    ],
)
def test_131072_positions_are_mlx_lm_bit_for_bit(mlx, initialize_rope, name, traditional, dtype):
    _check(mlx, initialize_rope, name, 131072, 0, traditional, dtype)


@pytest.mark.parametrize(
    "base, offset, dims",
    [
        (10000.0, 2_000_000_000, 128),  # angles past 2^23: libm's sinf and cosf
        (500000.0, 16_777_000, 64),  # offset + position rounded to float32
        (3.0e6, 0, 112),
        (50000.0, 12345, 96),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fast_rope_is_mlx_bit_for_bit(mlx, base, offset, dims, dtype):
    rows = 4096
    for traditional in (False, True):
        cos, sin = _mlx_planes(
            mlx,
            lambda x, at, traditional=traditional: mlx.fast.rope(
                x, dims, traditional=traditional, base=base, scale=1.0, offset=at
            ),
            dims,
            dims,
            rows,
            offset,
            traditional,
            dtype,
        )
        convention = "interleaved" if traditional else "half"
        spec = dict(
            family="rope",
            variant="mlx",
            d_model=dims,
            seq_len=rows,
            offset=offset,
            base=base,
            convention=convention,
            dtype=dtype,
        )
        ours = build(TableSpec(**spec, part="cos")).float64().astype(np.float32)
        assert _bits_equal(ours, _laid_out(cos, convention))
        ours = build(TableSpec(**spec, part="sin")).float64().astype(np.float32)
        assert _bits_equal(ours, _laid_out(sin, convention))


@pytest.mark.parametrize("name", ["qwen2", "llama3.1", "qwen2.5-yarn", "linear", "dynamic"])
def test_angles_and_frequencies_are_what_mlx_turns_by(mlx, initialize_rope, name):
    """MLX's own cos and sin of pe-cli's angles (times YaRN's mscale, in float32) are MLX's
    table, element for element; inv_freq is the angles at position 1 over the positions' scale,
    and the reciprocal of mlx-lm's periods where it has them."""
    head_dim, _, rope, _ = MODELS[name]
    module = _module(initialize_rope, name, False)
    cos, sin = _mlx_planes(
        mlx, lambda x, at: module(x, offset=at), head_dim, head_dim, 2048, 5, False, "float32"
    )
    angles = mlx.array(_ours(name, 2048, 5, "single", "float32", "angle"))
    mscale = getattr(module, "mscale", 1.0)
    assert _bits_equal(np.array(mlx.cos(angles) * mscale), cos)
    assert _bits_equal(np.array(mlx.sin(angles) * mscale), sin)
    inv_freq = _ours(name, 1, 0, "half", "float32", "inv_freq").reshape(-1)
    scale = np.float32(1 / rope.get("factor", 1.0) if name == "linear" else 1.0)
    assert _bits_equal(_ours(name, 2, 0, "single", "float32", "angle")[1] / scale, inv_freq)
    if hasattr(module, "_freqs"):
        assert _bits_equal(np.array(mlx.reciprocal(module._freqs)), inv_freq)


def test_rotation_part_is_the_interleaved_pairs(mlx):
    spec = dict(family="rope", variant="mlx", d_model=64, seq_len=100, base=10000.0)
    rotation = build(TableSpec(**spec, part="rotation", convention="interleaved")).float64()
    cos = build(TableSpec(**spec, part="cos", convention="interleaved")).float64()
    sin = build(TableSpec(**spec, part="sin", convention="interleaved")).float64()
    assert np.array_equal(rotation[:, 0::4], cos[:, 0::2])
    assert np.array_equal(rotation[:, 1::4], -sin[:, 0::2])
    assert np.array_equal(rotation[:, 2::4], sin[:, 1::2])


# ------------------------------------------------------------------------ without MLX installed


@pytest.mark.parametrize(
    "params, message",
    [
        ({"rope": MODELS["phi3.5-longrope"][2], "d_model": 96, "convention": "interleaved"}, "traditional=False"),
        ({"rope": {"rope_type": "longrope", "short_factor": [1.0] * 32, "original_max_position_embeddings": 4096, "max_position_embeddings": 8192}, "seq_len": 64}, "long_factor at every length"),
        ({"d_model": 10, "rope": {"partial_rotary_factor": 0.5}}, "rotary dim 5 must be even"),
        ({"dtype": "float64"}, "float32, float16, bfloat16"),
        ({"offset": 2**31}, "int32"),
        ({"ids": "0; 5:9"}, "not --ids"),
        ({"axes": "mrope", "rope": {"mrope_section": [16, 24, 24]}, "d_model": 128}, "1-D tables"),
        ({"rope": {"ntk_factor": 2.0}}, "ntk_factor"),
    ],
)  # fmt: skip
def test_refusals(params, message):
    with pytest.raises(BadInput, match=message):
        TableSpec(**{"family": "rope", "variant": "mlx", "d_model": 64, "seq_len": 16, **params})


def _exact_fma(a, b, c):
    """a*b + c rounded once to float32, to nearest even: the float32 nearest the exact value
    among the float64 rounding's float32 and its neighbours."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    near = np.float32(float(exact))
    candidates = [
        near,
        np.nextafter(near, np.float32(np.inf)),
        np.nextafter(near, np.float32(-np.inf)),
    ]
    return min(
        candidates,
        key=lambda v: (abs(Fraction(float(v)) - exact), int(np.float32(v).view(np.uint32)) & 1),
    )


def test_fma_rounds_once():
    """numerics.float32.fma against the exact a*b + c (Fraction) rounded once to float32:
    random operands, and sums that land halfway between two float32 values in float64."""
    rng = np.random.default_rng(29)
    a = rng.standard_normal(20000).astype(np.float32)
    b = rng.standard_normal(20000).astype(np.float32)
    c = (rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 3, 20000)).astype(np.float32)
    # (1 + u)(1 - u) 2^-24 + (1 + u) = 1 + u + 2^-24 - 2^-70, u = 2^-23: just below halfway
    # between 1 + u and 1 + 2u, where float64 rounds it to halfway and float32 then to 1 + 2u
    u = 2.0**-23
    hard_a, hard_b, hard_c = (
        np.float32([1 + u, -(1 + u)]),
        np.float32([(1 - u) * 2**-24] * 2),
        np.float32([1 + u, -(1 + u)]),
    )
    twice = (hard_a.astype(np.float64) * hard_b + hard_c).astype(np.float32)
    assert list(twice) == [np.float32(1 + 2 * u), np.float32(-(1 + 2 * u))]
    a, b, c = (np.concatenate([x, y]) for x, y in ((a, hard_a), (b, hard_b), (c, hard_c)))
    ours = fma(a, b, c)
    exact = np.array([_exact_fma(x, y, z) for x, y, z in zip(a, b, c)], np.float32)
    assert np.array_equal(ours.view(np.uint32), exact.view(np.uint32))
    assert list(ours[-2:]) == [np.float32(1 + u), np.float32(-(1 + u))]
