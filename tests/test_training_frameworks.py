"""--variant litgpt, --variant torchtitan and --variant keras-hub against the frameworks
themselves: litgpt's build_rope_cache and torchtitan's ComplexRoPE (freqs_cis) and CosSinRoPE
caches, built in their own venv (tests/framework_tables.py, all cases in one process), and
keras-hub's rotary layers on Keras's torch backend (tests/kerashub_tables.py), bit for bit; and
what the variants refuse."""

import numpy as np
import pytest

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.spec import TableSpec

from .rope_models import DEEPSEEK_YARN, GPT_OSS_YARN, LLAMA3, YARN

# Llama 3.2's scaling (factor 32), and a blend whose medium band is wide
LLAMA32 = {**LLAMA3, "factor": 32.0}
LLAMA3_WIDE = {
    "rope_type": "llama3",
    "factor": 5.5,
    "low_freq_factor": 1.5,
    "high_freq_factor": 7.0,
    "original_max_position_embeddings": 4096,
}
# name: head dim, theta, rope parameters
MODELS = {
    "llama3.1": (128, 500000.0, LLAMA3),
    "llama3.2": (64, 500000.0, LLAMA32),
    "llama3-wide": (128, 10000.0, LLAMA3_WIDE),
    "theta-1e4": (128, 10000.0, {}),
    "theta-1e6": (128, 1000000.0, {}),
    "linear": (128, 10000.0, {"rope_type": "linear", "factor": 3.0}),
    "qwen2.5-yarn": (128, 1000000.0, YARN),
    "deepseek-yarn": (64, 10000.0, DEEPSEEK_YARN),
    "gpt-oss-yarn": (64, 150000.0, GPT_OSS_YARN),
    "partial": (80, 10000.0, {"partial_rotary_factor": 0.4}),
    "dynamic": (
        128,
        10000.0,
        {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 8},
    ),
}
# framework: the models it builds, the convention of its cache
FRAMEWORKS = {
    "litgpt": ([name for name in MODELS if name != "dynamic"], "half"),
    "torchtitan-complex": (
        [
            "llama3.1",
            "llama3.2",
            "llama3-wide",
            "theta-1e4",
            "theta-1e6",
            "qwen2.5-yarn",
            "deepseek-yarn",
            "gpt-oss-yarn",
        ],
        "single",
    ),  # fmt: skip
    "torchtitan-cossin": (["theta-1e4", "theta-1e6", "qwen2.5-yarn", "gpt-oss-yarn"], "half"),
}
LONG = {("litgpt", "llama3.1"), ("litgpt", "qwen2.5-yarn"), ("torchtitan-complex", "llama3.1")}
LONG |= {("torchtitan-cossin", "qwen2.5-yarn")}


def _cases():
    for framework, (names, _) in FRAMEWORKS.items():
        for name in names:
            head_dim, theta, rope = MODELS[name]
            for rows in (4096, 131072) if (framework, name) in LONG else (4096,):
                yield {
                    "name": f"{framework}-{name}-{rows}",
                    "framework": framework,
                    "head_dim": head_dim,
                    "rows": rows,
                    "base": theta,
                    "rope": rope,
                }


@pytest.fixture(scope="session")
def framework_tables():
    """Every case's cos and sin, from one run of the frameworks' venv."""
    from . import framework_tables

    why = framework_tables.unavailable()
    if why:
        pytest.skip(why)
    return framework_tables.tables(list(_cases()))


def _ours(case, dtype, part):
    framework = case["framework"]
    convention = FRAMEWORKS[framework][1]
    spec = TableSpec(
        family="rope",
        variant=framework.partition("-")[0],
        d_model=case["head_dim"],
        seq_len=case["rows"],
        base=case["base"],
        rope=case["rope"],
        convention=convention,
        dtype=dtype,
        part=part,
    )
    table = build(spec).float64().astype(np.float32)
    return table if convention == "single" else table[:, : table.shape[1] // 2]


def _cast(plane, dtype):  # the model's .to(dtype) of a float32 buffer, back in float32
    import torch

    return torch.from_numpy(plane).to(getattr(torch, dtype)).float().numpy()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", list(_cases()), ids=lambda case: case["name"])
def test_variants_are_the_frameworks_bit_for_bit(framework_tables, case, dtype):
    cos, sin = framework_tables[case["name"]]
    for part, theirs in (("cos", cos), ("sin", sin)):
        ours = _ours(case, dtype, part)
        theirs = _cast(np.ascontiguousarray(theirs), dtype)
        assert ours.shape == theirs.shape
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32)), part


@pytest.mark.parametrize(
    "variant, changes, said",
    [
        (
            "litgpt",
            {"rope": {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 8}},
            "no rope_type dynamic",
        ),
        ("litgpt", {"rope": {**YARN, "attention_factor": 1.2}}, "no attention_factor"),
        ("torchtitan", {"rope": LLAMA3, "convention": "half"}, "CosSinRoPE"),
        ("torchtitan", {"rope": {"partial_rotary_factor": 0.5}}, "partial_rotary_factor"),
        ("torchtitan", {"rope": {"rope_type": "linear", "factor": 2.0}}, "no rope_type linear"),
    ],
)
def test_they_refuse_what_the_framework_cannot_do(variant, changes, said):
    spec = dict(family="rope", variant=variant, d_model=128, seq_len=16, base=10000.0)
    with pytest.raises(BadInput, match=said):
        build(TableSpec(**{**spec, **changes}))


# ---------------------------------------------------------------------------------------------
# keras-hub on Keras's torch backend

KERAS_MODELS = ["llama3.1", "llama3-wide", "theta-1e4", "theta-1e6", "linear", "qwen2.5-yarn"]
KERAS_MODELS += ["gpt-oss-yarn", "dynamic"]
MODELS["dynamic"] = (
    128,
    10000.0,
    {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 8},
)


def _keras_cases():
    for name in KERAS_MODELS:
        head_dim, theta, rope = MODELS[name]
        for dtype in ("float32", "bfloat16", "float16"):
            for rows in (4096, 131072) if name == "llama3.1" and dtype == "bfloat16" else (4096,):
                yield {
                    "name": f"keras-hub-{name}-{dtype}-{rows}",
                    "head_dim": head_dim,
                    "rows": rows,
                    "base": theta,
                    "rope": rope,
                    "dtype": dtype,
                }


@pytest.fixture(scope="session")
def keras_hub_tables():
    from . import kerashub_tables

    why = kerashub_tables.unavailable()
    if why:
        pytest.skip(why)
    return kerashub_tables.tables(list(_keras_cases()))


@pytest.mark.parametrize("case", list(_keras_cases()), ids=lambda case: case["name"])
def test_keras_hub_is_keras_hub_bit_for_bit(keras_hub_tables, case):
    _is_keras_hubs(keras_hub_tables, case, "keras-hub")


def _is_keras_hubs(tables, case, variant):
    """The variant's cos and sin are keras-hub's (its first half: keras-hub repeats it)."""
    cos, sin = tables[case["name"]]
    spec = dict(
        family="rope",
        variant=variant,
        d_model=case["head_dim"],
        seq_len=case["rows"],
        base=case["base"],
        rope=case["rope"],
        dtype=case["dtype"],
    )
    for part, theirs in (("cos", cos), ("sin", sin)):
        ours = build(TableSpec(**spec, part=part)).float64().astype(np.float32)
        ours = ours[:, : ours.shape[1] // 2]
        assert np.array_equal(ours.view(np.uint32), np.ascontiguousarray(theirs).view(np.uint32))


# ---------------------------------------------------------------------------------------------
# compare FILE names a table the framework wrote, and rebuilds it


def _named(cli, tmp_path, table, what):
    from .test_engines import _named_and_rebuilt

    folder = tmp_path / what
    folder.mkdir()
    found = _named_and_rebuilt(cli, folder, np.ascontiguousarray(table), every=True)
    assert found[0]["confirmed"] and found[0]["differing"] == 0
    return found[0]["name"], {c["name"] for c in found if c["confirmed"] and c["differing"] == 0}


def test_compare_names_the_frameworks_tables(cli, tmp_path, framework_tables, keras_hub_tables):
    cos, _ = framework_tables["torchtitan-complex-llama3.1-4096"]
    best, same = _named(cli, tmp_path, cos[:1024], "torchtitan")  # freqs_cis's real part
    assert "library torchtitan" in same
    cos, _ = framework_tables["litgpt-llama3.1-4096"]
    best, same = _named(cli, tmp_path, np.concatenate([cos, cos], axis=1)[:1024], "litgpt")
    assert "library litgpt" in same
    for name in ("qwen2.5-yarn", "gpt-oss-yarn"):  # YaRN's ramp the other way round
        cos, _ = framework_tables[f"litgpt-{name}-4096"]
        best, same = _named(cli, tmp_path, np.concatenate([cos, cos], axis=1)[:1024], name)
        assert best == "library litgpt"
    cos, _ = keras_hub_tables["keras-hub-theta-1e6-float32-4096"]
    best, same = _named(cli, tmp_path, np.concatenate([cos, cos], axis=1)[:1024], "keras")
    assert best == "library keras-hub"


# ---------------------------------------------------------------------------------------------
# keras-hub on Keras's JAX backend: XLA's CPU sin, cos and pow


def test_xlas_cpu_sin_cos_and_pow_are_the_c_librarys(monkeypatch):
    """pe_cli.numerics.libm (its C loop, and ctypes where it is not built) against jax[cpu]
    itself: float32 sin and cos over |x| up to 1e7, pow of the bases RoPE takes."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from pe_cli.numerics import libm

    rng = np.random.default_rng(42)
    angles = np.concatenate(
        [rng.uniform(-10, 10, 20000), rng.uniform(-1e5, 1e5, 20000), rng.uniform(-1e7, 1e7, 5000)]
    ).astype(np.float32)
    exponents = -np.arange(0, 128, 2, dtype=np.float32) / np.float32(128)
    for fallback in (False, True):
        if fallback:
            monkeypatch.setattr(libm, "_libm", None)
            angles = angles[::10]
        for ours, theirs in ((libm.sinf, jnp.sin), (libm.cosf, jnp.cos)):
            expected = np.asarray(jax.jit(theirs)(angles))
            assert np.array_equal(ours(angles).view(np.uint32), expected.view(np.uint32))
        for base in (10000.0, 500000.0, 1000000.0):
            expected = np.asarray(jax.jit(jnp.power)(jnp.float32(base), exponents))
            assert np.array_equal(libm.powf(base, exponents), expected)


KERAS_JAX_MODELS = ["llama3.1", "llama3-wide", "theta-1e4", "theta-1e6", "linear", "dynamic"]
MODELS["head-80"] = (80, 10000.0, {})
KERAS_JAX_MODELS.append("head-80")


def _keras_jax_cases():
    for name in KERAS_JAX_MODELS:
        head_dim, theta, rope = MODELS[name]
        for dtype in ("float32", "bfloat16", "float16"):
            long = name in ("llama3.1", "theta-1e4", "theta-1e6") and dtype != "float16"
            for rows in (4096, 131072) if long else (4096,):
                yield {
                    "name": f"keras-hub-jax-{name}-{dtype}-{rows}",
                    "head_dim": head_dim,
                    "rows": rows,
                    "base": theta,
                    "rope": rope,
                    "dtype": dtype,
                }


@pytest.fixture(scope="session")
def keras_hub_jax_tables():
    from . import kerashub_tables

    why = kerashub_tables.unavailable()
    if why:
        pytest.skip(why)
    pytest.importorskip("jax")
    return kerashub_tables.tables(list(_keras_jax_cases()), "jax")


@pytest.mark.parametrize("case", list(_keras_jax_cases()), ids=lambda case: case["name"])
def test_keras_hub_jax_is_keras_hub_on_jax_bit_for_bit(keras_hub_jax_tables, case):
    _is_keras_hubs(keras_hub_jax_tables, case, "keras-hub-jax")


def test_keras_hub_jax_is_not_the_torch_backends_table(keras_hub_jax_tables):
    """powf and torch.pow differ in the last bit of some frequencies: the two backends' tables
    for Llama 3.1 differ, and compare names the JAX one as keras-hub-jax's."""
    cos, _ = keras_hub_jax_tables["keras-hub-jax-llama3.1-float32-4096"]
    torch_backend = build(
        TableSpec(family="rope", variant="keras-hub", d_model=128, seq_len=4096, base=500000.0,
                  rope=LLAMA3, part="cos")
    ).float64().astype(np.float32)[:, :64]  # fmt: skip
    assert not np.array_equal(torch_backend, cos)


def test_compare_names_keras_hub_on_jax(cli, tmp_path, keras_hub_jax_tables):
    for name in ("theta-1e6", "linear", "llama3.1"):
        cos, _ = keras_hub_jax_tables[f"keras-hub-jax-{name}-float32-4096"]
        best, _ = _named(cli, tmp_path, np.concatenate([cos, cos], axis=1)[:1024], name)
        assert best == "library keras-hub-jax"


def test_keras_hub_jax_refuses_yarn():
    with pytest.raises(BadInput, match="XLA's log"):
        build(TableSpec(family="rope", variant="keras-hub-jax", d_model=128, seq_len=16, rope=YARN))
