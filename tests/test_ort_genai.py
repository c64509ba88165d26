"""--variant ort-genai against ONNX Runtime GenAI 0.18.0's model builder itself: the cos_cache and
sin_cache its model classes bake into the graph (tests/ortgenai_tables.py, every case in one
process), bit for bit in float32 and the io dtypes it casts them to; where its table is
transformers' and where not; what the variant refuses; and compare FILE naming a cache the
builder made and rebuilding it."""

import numpy as np
import pytest

from pe_cli.core.errors import BadInput
from pe_cli.engine import build
from pe_cli.spec import TableSpec

from .rope_models import DEEPSEEK_YARN, GPT_OSS_YARN, LLAMA3

# a factor no power of two: the builder's inv_freq / factor is not transformers' 1 / (factor *
# base**x)
YARN_40 = {**GPT_OSS_YARN, "factor": 40.0}
# name: the builder's model class, head dim, theta, rope parameters
MODELS = {
    "llama3.1": ("llama", 128, 500000.0, LLAMA3),
    "theta-1e4": ("llama", 128, 10000.0, {}),
    "theta-1e6": ("mistral", 128, 1000000.0, {}),
    "gpt-oss-yarn": ("gpt-oss", 64, 150000.0, GPT_OSS_YARN),
    "yarn-40": ("mistral", 128, 10000.0, YARN_40),
    "deepseek-yarn": ("mistral", 64, 10000.0, DEEPSEEK_YARN),
    "linear": ("mistral", 128, 10000.0, {"rope_type": "linear", "factor": 3.0}),
    "partial": ("mistral", 80, 10000.0, {"partial_rotary_factor": 0.4}),
}
LONG = ("llama3.1", "theta-1e4", "theta-1e6", "gpt-oss-yarn", "yarn-40")
# where the builder's table is transformers' own, bit for bit, and where it is not
SAME_AS_TRANSFORMERS = ("llama3.1", "theta-1e4", "theta-1e6", "gpt-oss-yarn", "partial")


def _cases():
    for name, (builder, head_dim, theta, rope) in MODELS.items():
        for dtype in ("float32", "float16", "bfloat16"):
            long = name in LONG and dtype != "bfloat16"
            for rows in (4096, 131072) if long else (4096,):
                yield {
                    "name": f"{name}-{dtype}-{rows}",
                    "model": name,
                    "builder": builder,
                    "head_dim": head_dim,
                    "rows": rows,
                    "base": theta,
                    "rope": rope,
                    "dtype": dtype,
                }


@pytest.fixture(scope="session")
def ort_genai_tables():
    """Every case's cos and sin caches, from one run of the builder."""
    from . import ortgenai_tables

    why = ortgenai_tables.unavailable()
    if why:
        pytest.skip(why)
    return ortgenai_tables.tables(list(_cases()))


def _spec(case, part, variant="ort-genai"):
    return TableSpec(
        family="rope",
        variant=variant,
        d_model=case["head_dim"],
        seq_len=case["rows"],
        base=case["base"],
        rope=case["rope"],
        convention="single",
        dtype=case["dtype"],
        part=part,
    )


def _bits(table):
    return np.ascontiguousarray(table, dtype=np.float32).view(np.uint32)


@pytest.mark.parametrize("case", list(_cases()), ids=lambda case: case["name"])
def test_ort_genai_is_the_builders_cache_bit_for_bit(ort_genai_tables, case):
    cos, sin = ort_genai_tables[case["name"]]
    for part, theirs in (("cos", cos), ("sin", sin)):
        ours = build(_spec(case, part)).float64().astype(np.float32)
        assert ours.shape == theirs.shape
        assert np.array_equal(_bits(ours), _bits(theirs)), part


@pytest.mark.parametrize("name", list(MODELS))
def test_the_builders_table_is_transformers_only_where_said(ort_genai_tables, name):
    """Llama 3.1's, the plain tables, gpt-oss's YaRN (factor 32 divides exactly) and partial
    rotary are --variant hf-rope's; linear and YaRN by another factor are not."""
    case = next(c for c in _cases() if c["model"] == name and c["dtype"] == "float32")
    theirs = ort_genai_tables[case["name"]][0]
    transformers = build(_spec(case, "cos", "hf-rope")).float64().astype(np.float32)
    same = np.array_equal(_bits(transformers), _bits(theirs))
    assert same == (name in SAME_AS_TRANSFORMERS)


@pytest.mark.parametrize(
    "rope, d_model, said",
    [
        (
            {k: v for k, v in YARN_40.items() if k != "beta_fast"},
            128,
            "beta_fast from the config and fails without it",
        ),
        ({**YARN_40, "truncate": True}, 128, "never rounds YaRN's correction bounds"),
        ({**YARN_40, "partial_rotary_factor": 0.5}, 128, "no partial rotary"),
        ({**YARN_40, "attention_factor": 1.2}, 128, "reads no attention_factor"),
        ({**YARN_40, "beta_fast": 1.0, "beta_slow": 32.0}, 128, "asserts 0 < low < high"),
        (
            {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 8},
            128,
            "no rope_type dynamic",
        ),
        ({**LLAMA3, "mscale": 1.0}, 128, "reads no mscale for rope_type llama3"),
        ({"partial_rotary_factor": 0.3}, 90, "the rotary dim 27 must be even"),
    ],
)
def test_ort_genai_refuses_what_the_builder_cannot_bake(rope, d_model, said):
    with pytest.raises(BadInput, match=said):
        build(TableSpec(family="rope", variant="ort-genai", d_model=d_model, seq_len=16, rope=rope))


def test_the_refused_yarn_is_what_the_builder_fails_on(ort_genai_tables):
    """The builder itself divides by zero without beta_fast and beta_slow (Qwen2.5's config)."""
    from . import ortgenai_tables

    qwen = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    case = {**next(_cases()), "name": "qwen", "builder": "mistral", "rope": qwen, "rows": 16}
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ortgenai_tables.tables([case])


def _named(cli, tmp_path, table, what):
    from .test_engines import _named_and_rebuilt

    folder = tmp_path / what
    folder.mkdir()
    found = _named_and_rebuilt(cli, folder, np.ascontiguousarray(table), every=True)
    assert found[0]["confirmed"] and found[0]["differing"] == 0
    same = {c["name"] for c in found if c["confirmed"] and c["differing"] == 0}
    return found[0]["name"], same


@pytest.mark.parametrize(
    "name, dtype, best",
    [
        ("llama3.1", "float32", "library hf-rope"),
        ("theta-1e6", "float16", "library hf-rope"),
        ("gpt-oss-yarn", "float32", "library hf-rope"),
        ("yarn-40", "float32", "library ort-genai"),
        ("linear", "float16", "library ort-genai"),
    ],
)
def test_compare_names_the_builders_cache(cli, tmp_path, ort_genai_tables, name, dtype, best):
    """Where the builder's cache is transformers' table, transformers is named and ort-genai
    beside it; where it is not, ort-genai is named; the printed command rebuilds the file."""
    cos, _ = ort_genai_tables[f"{name}-{dtype}-4096"]
    table = cos[:1024].astype(np.float16 if dtype == "float16" else np.float32)
    found, same = _named(cli, tmp_path, table, name)
    assert found == best
    assert "library ort-genai" in same
