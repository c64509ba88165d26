"""show --precision DTYPE: what serving a RoPE table in bfloat16, float16 or float32 does, each
figure held against an independent computation: positions rounded in whole numbers here, the
frequencies, their dtype values, the angles and cos/sin in mpmath (tests/reference.py), and
transformers' float32 angles from its own rotary module's inv_freq."""

import json
import math

import mpmath
import numpy as np
import pytest

from pe_cli.analysis.serving import of_spec
from pe_cli.spec import spec_from_keywords

from .published import PUBLISHED
from .reference import rope_frequencies, round_to
from .rope_models import LLAMA3

BITS = {"bfloat16": 8, "float16": 11, "float32": 24}
LARGEST = {"bfloat16": None, "float16": 65504, "float32": None}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}
SHOWN = ["show", "--family", "rope", "-d", 128, "-l", 4096]  # head dim 128, theta 10^4


def held(p: int, dtype: str) -> float:
    """Whole position p in the dtype: its top bits, to nearest, ties to even; inf past float16's
    largest value."""
    bits = BITS[dtype]
    shift = p.bit_length() - bits
    if shift > 0:
        top, rest = divmod(p, 1 << shift)
        top += rest > 1 << (shift - 1) or (rest == 1 << (shift - 1) and top % 2)
        p = top << shift
    largest = LARGEST[dtype]
    return float("inf") if largest is not None and p > largest else float(p)


def edges(length: int) -> list[tuple[int, int]]:
    """Rows [0, 1), [1, 4), [4, 16), ...: bands growing by 4, the last cut at the length."""
    cuts = [0, 1]
    while cuts[-1] < length:
        cuts.append(4 * cuts[-1])
    cuts[-1] = length
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if a < b]


def view(dim, base, length, dtype, rope=None, offset=0, variant="exact"):
    rope = rope or {}
    spec = spec_from_keywords(
        family="rope",
        d_model=dim,
        base=base,
        seq_len=length,
        offset=offset,
        rope=rope,
        variant=variant,
    )
    return of_spec(spec, dtype)


def deltas(dim, base, rope, end, dtype):
    frequencies, attention = rope_frequencies(dim, base, rope, end)
    return frequencies, attention, [abs(mpmath.mpf(round_to(w, dtype)) - w) for w in frequencies]


def drift_by_band(delta_list, first, length):
    """Each band's largest p |w~ - w| wrapped to [0, pi], over every position, in float64 from
    a two-part |w~ - w| (within about 1e-13 rad of the truth at these lengths)."""
    p = np.arange(first, first + length, dtype=np.float64)
    worst = np.zeros(length)
    for delta in delta_list:
        hi = float(delta)
        lo = float(delta - mpmath.mpf(hi))
        turn = np.mod(p * hi + p * lo, 2 * math.pi)
        worst = np.maximum(worst, np.minimum(turn, 2 * math.pi - turn))
    return [worst[a:b].max() for a, b in edges(length)], worst


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize(
    "length, offset", [(1024, 0), (131072, 0), (5000, 60000), (300, 2**24 - 150)]
)
def test_positions_held_in_the_dtype(dtype, length, offset):
    found = view(64, 10000.0, length, dtype, offset=offset).positions
    values = [held(p, dtype) for p in range(offset, offset + length)]
    same = [values[k] == values[k + 1] for k in range(length - 1)]
    assert found.distinct == len(set(values))
    assert found.first_collapse == (offset + same.index(True) if True in same else None)
    assert found.merged == sum(same) / (length - 1)
    for band, (a, b) in zip(found.bands, edges(length)):
        assert (band.first, band.stop) == (offset + a, offset + b)
        assert band.distinct == len(set(values[a:b]))
        pairs = same[a : min(b, length - 1)]
        assert band.merged == (sum(pairs) / len(pairs) if pairs else 0.0)


def test_the_published_position_figures():
    """256 and 257 are one bfloat16 value, 2048 and 2049 one float16 value; 1,024 positions
    are 513 bfloat16 values; float32 keeps every position to 2**24."""
    assert view(128, 10000.0, 1024, "bfloat16").positions.first_collapse == 256
    assert view(128, 10000.0, 4096, "float16").positions.first_collapse == 2048
    assert view(128, 10000.0, 1024, "bfloat16").positions.distinct == 513
    found = view(128, 10000.0, 131072, "float32").positions
    assert found.first_collapse is None and found.distinct == 131072 and found.merged == 0


@pytest.mark.parametrize(
    "dim, base, rope, length, dtype",
    [
        (128, 10000.0, {}, 4096, "bfloat16"),
        (128, 500000.0, LLAMA3, 131072, "bfloat16"),
        (64, 150000.0, YARN, 131072, "float16"),
        (256, 1000000.0, {}, 131072, "float32"),
        (96, 10000.0, {"rope_type": "linear", "factor": 2.0}, 20000, "float16"),
    ],
)
def test_inv_freq_drift_against_mpmath(dim, base, rope, length, dtype):
    frequencies, _, delta_list = deltas(dim, base, rope, length, dtype)
    expected, worst = drift_by_band(delta_list, 0, length)
    found = view(dim, base, length, dtype, rope).drift
    assert found.bands == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert found.max == pytest.approx(max(expected), rel=1e-9)
    assert worst[found.position] == pytest.approx(found.max, rel=1e-9)
    assert found.frequency == float(frequencies[found.index])
    assert found.held == round_to(frequencies[found.index], dtype)
    for name, threshold in (("0.1", mpmath.mpf("0.1")), ("pi/2", mpmath.pi / 2)):
        first = min(int(mpmath.floor(threshold / d)) + 1 for d in delta_list if d)
        assert found.passes[name] == first
        if first < length:  # the unwrapped drift passes it there and not before
            assert worst[first] > float(threshold) >= worst[:first].max()


def test_the_published_drift_figures():
    """Modalities PR #462: inv_freq in bfloat16, head dim 128, theta 10^4: 0.625 rad at 512
    positions, 2.50 at 2,048, a full pi by 4,096; and a quarter turn from position 1,285."""
    assert round(view(128, 10000.0, 512, "bfloat16").drift.max, 3) == 0.625
    assert round(view(128, 10000.0, 2048, "bfloat16").drift.max, 2) == 2.50
    at_4096 = view(128, 10000.0, 4096, "bfloat16")
    assert math.pi - 1e-3 < at_4096.drift.max <= math.pi
    assert at_4096.drift.passes["pi/2"] == 1285
    assert at_4096.verdict[0] == (
        "served in bfloat16 with inv_freq in bfloat16, this table is off by a quarter turn "
        "from position 1,285"
    )


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("rope, base", [({}, 10000.0), (YARN, 150000.0)])
def test_cache_error_against_mpmath(dtype, rope, base):
    """Every element's |cos, sin (times the attention factor) held in the dtype - exact|, to
    the 1e-15 the float64 cos and sin pe-cli rounds have (the float32 errors, about 3e-8, to
    7 digits)."""
    dim, length, first = 16, 600, 40
    frequencies, attention, _ = deltas(dim, base, rope, first + length, dtype)
    found = view(dim, base, length, dtype, rope, offset=first)
    for k, (a, b) in enumerate(edges(length)):
        worst = mpmath.mpf(0)
        for p in range(first + a, first + b):
            for w in frequencies:
                for value in (attention * mpmath.cos(p * w), attention * mpmath.sin(p * w)):
                    worst = max(worst, abs(mpmath.mpf(round_to(value, dtype)) - value))
        assert found.cache[k] == pytest.approx(float(worst), rel=0, abs=1e-15)


@pytest.mark.parametrize("rope, base", [({}, 10000.0), (LLAMA3, 500000.0)])
def test_float32_angles_against_transformers_own_inv_freq(rope, base):
    """transformers' rotary forward: angles inv_freq (float32) times float32 positions, one
    rounding each; held against the exact p * w in mpmath."""
    transformers = pytest.importorskip("transformers")
    import torch

    dim, length = 64, 2048
    config = transformers.LlamaConfig(
        hidden_size=dim * 4,
        num_attention_heads=4,
        rope_parameters={"rope_theta": base, **(rope or {"rope_type": "default"})},
    )
    module = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(config)
    inv_freq = module.inv_freq.to(torch.float32).numpy()
    frequencies, _ = rope_frequencies(dim, base, rope, length)
    found = view(dim, base, length, "bfloat16", rope, variant="hf-rope")
    assert found.library == "transformers"
    positions = np.arange(length, dtype=np.float32)
    angles = positions[:, None] * inv_freq[None, :]  # float32 products, rounded once each
    for k, (a, b) in enumerate(edges(length)):
        worst = max(
            abs(mpmath.mpf(float(angles[p, i])) - p * w)
            for p in range(a, b)
            for i, w in enumerate(frequencies)
        )
        assert found.angles[k] == pytest.approx(float(worst), rel=1e-12, abs=1e-300)


def test_the_verdict_says_what_holds_and_nothing_that_does_not(cli):
    """Short of a quarter turn the verdict says where it comes; float32 positions never run
    together at these lengths, and no line says they do."""
    code, out, err = cli("show", "--family", "rope", "-d", 128, "-l", 1024, "--precision", "bf16")
    text = " ".join(out.decode().split())
    assert code == 0, err
    assert "off by a quarter turn from position 1,285" not in text
    assert "a quarter turn comes at position 1,285, past its last (1,023)" in text
    assert "positions held in bfloat16 run together from 256 (256 and 257 are one value): " in text
    assert "513 values for 1,024 positions" in text
    assert "transformers" not in text and "fp32 angles" not in text
    code, out, err = cli(
        "show",
        "--family",
        "rope",
        "-d",
        128,
        "-l",
        1024,
        "--precision",
        "bf16",
        "--variant",
        "hf-rope",
    )
    assert code == 0, err
    text = " ".join(out.decode().split())
    assert "fp32 angles" in text and "transformers' float32 angles by up to" in text
    code, out, err = cli(*SHOWN, "--precision", "float32")
    text = " ".join(out.decode().split())
    assert code == 0, err
    assert "positions held in float32 stay apart up to 4,095" in text
    assert "run together" not in text and "off by a quarter turn from" not in text


def test_json_carries_the_figures(cli):
    code, out, err = cli(*SHOWN, "--precision", "bf16", "--json")
    assert code == 0, err
    found = json.loads(out)["precision"]
    assert found["dtype"] == "bfloat16" and found["first_collapse"] == 256
    assert found["distinct_positions"] == 769
    assert found["adjacent_equal_share"] == (4096 - 769) / 4095
    assert math.pi - 1e-3 < found["inv_freq_phase_error"] <= math.pi
    assert found["inv_freq_phase_error_passes"] == {"0.1": 82, "pi/2": 1285}
    assert [b["positions"] for b in found["bands"]] == [[a, b - 1] for a, b in edges(4096)]
    assert found["float32_arithmetic"] is None and found["float32_angle_error"] is None
    assert all(b["float32_angle_error"] is None for b in found["bands"])
    code, out, err = cli(
        *SHOWN,
        "--precision",
        "bf16",
        "--json",
        "--variant",
        "hf-rope",
    )
    assert code == 0, err
    found = json.loads(out)["precision"]
    assert found["float32_arithmetic"] == "transformers" and found["float32_angle_error"] > 0
    code, out, err = cli(*SHOWN, "--json")
    assert code == 0 and "precision" not in json.loads(out)


def test_each_treatment_of_a_model_is_served(cli, tmp_path):
    """Gemma 3's sliding layers (theta 10^4) and full layers (linear 8, theta 10^6): a view
    each, in the text and in --json; --layer-type looks at one."""
    config = {
        "architectures": ["Gemma3ForCausalLM"],
        "model_type": "gemma3_text",
        "hidden_size": 640,
        "head_dim": 256,
        "num_attention_heads": 4,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        },
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("show", "--rope-config", path, "-l", 2048, "--precision", "bf16")
    assert code == 0, err
    text = out.decode()
    assert "served in bfloat16: sliding_attention, layers 0-4" in text
    assert "served in bfloat16: full_attention, layers 5" in text
    code, out, err = cli("show", "--rope-config", path, "-l", 2048, "--precision", "bf16", "--json")
    treatments = json.loads(out)["model"]["treatments"]
    sliding = view(256, 10000.0, 2048, "bfloat16").to_json()
    full = view(256, 1000000.0, 2048, "bfloat16", {"rope_type": "linear", "factor": 8.0})
    assert treatments["sliding_attention"]["precision"] == sliding
    assert treatments["full_attention"]["precision"] == full.to_json()
    code, out, err = cli(
        "show",
        "--rope-config",
        path,
        "-l",
        2048,
        "--precision",
        "bf16",
        "--layer-type",
        "full_attention",
    )
    assert code == 0, err
    assert "served in bfloat16" in out.decode() and "sliding_attention, layers" not in out.decode()


def test_the_facts_people_look_up(cli, tmp_path):
    """gpt-oss's YaRN correction range as transformers computes it, unrounded (truncate false)
    and floored and ceiled; its attention factor; Phi-4-mini's LongRoPE attention factor
    sqrt(1 + ln 32 / ln 4096) and the length where it switches to long_factor."""
    gpt_oss = {
        "rope_type": "yarn",
        "factor": 32.0,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "original_max_position_embeddings": 4096,
        "truncate": False,
    }
    args = ["show", "--family", "rope", "-d", 64, "--base", 150000, "-l", 8, "--json"]
    rope = [x for k, v in gpt_oss.items() for x in ("--rope", f"{k}={v}")]
    code, out, err = cli(*args, *rope)
    assert code == 0, err
    found = json.loads(out)
    assert found["yarn_correction_range"] == [8.092779115512402, 17.39802450158856]
    assert found["attention_factor"] == 1.3465735902799727
    truncated = [x.replace("truncate=False", "truncate=True") for x in rope]
    code, out, err = cli(*args, *truncated)
    assert json.loads(out)["yarn_correction_range"] == [8, 18]
    code, out, err = cli(*args[:-1], *rope)
    assert "yarn ramp         dims 8.092779115512402 .. 17.39802450158856 (not truncated)" in (
        out.decode()
    )
    code, out, err = cli(*args[:-1], *truncated)
    assert "yarn ramp         dims 8 .. 18 (floor and ceil)" in out.decode()
    # a range that 0 .. dim - 1 clamps, unrounded: whole ends, and still not truncated
    clamped = ["--rope", "original_max_position_embeddings=64", "--base", "1e9"]
    code, out, err = cli(*args[:-1], *rope, *clamped)
    assert code == 0, err
    assert "yarn ramp         dims 0 .. 3.5840003755583014 (not truncated)" in out.decode()
    low = 64 * mpmath.log(4096 / (32 * 2 * mpmath.pi)) / (2 * mpmath.log(150000))
    high = 64 * mpmath.log(4096 / (1 * 2 * mpmath.pi)) / (2 * mpmath.log(150000))
    assert [8.092779115512402, 17.39802450158856] == pytest.approx([low, high], rel=1e-15)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PUBLISHED["gpt-oss-20b"]))  # its positional keys as published
    code, out, err = cli("show", "--rope-config", path, "-l", 8, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["yarn_correction_range"] == [8.092779115512402, 17.39802450158856]
    assert found["attention_factor"] == 1.3465735902799727
    path.write_text(json.dumps(PUBLISHED["phi-4-mini-instruct"]))
    expected = float(mpmath.sqrt(1 + mpmath.log(32) / mpmath.log(4096)))
    for length, used in ((4096, "short_factor"), (4097, "long_factor")):
        code, out, err = cli("show", "--rope-config", path, "-l", length, "--json")
        assert code == 0, err
        found = json.loads(out)
        assert found["attention_factor"] == expected
        assert (found["longrope_switch"], found["longrope_factors"]) == (4096, used)
    code, out, err = cli("show", "--family", "rope", "-d", 64, "-l", 8)
    assert "yarn ramp" not in out.decode() and "longrope" not in out.decode()


def test_the_precision_figure(cli, tmp_path):
    pytest.importorskip("matplotlib")
    from pe_cli.analysis.figures import precision
    from pe_cli.analysis.tables import from_spec

    spec = spec_from_keywords(family="rope", d_model=128, seq_len=4096)
    found = of_spec(spec, "bfloat16", figure=True)
    figure = precision(found, from_spec(spec, "table"))
    assert [s.label.split(" (")[0] for s in figure.series] == [
        "w_0 to w_15",
        "w_16 to w_31",
        "w_32 to w_47",
        "w_48 to w_63",
    ]
    assert [x for x, _ in figure.vlines] == [256.0, 512.0, 1024.0, 2048.0]
    top = np.nanmax([np.nanmax(s.y) for s in figure.series])
    assert top == pytest.approx(found.drift.max, rel=1e-6)
    cache = np.nanmax([np.nanmax(s.y) for s in figure.below.series])
    assert cache == max(found.cache)
    path = tmp_path / "precision.png"
    code, out, err = cli(
        *SHOWN,
        "--precision",
        "bf16",
        "--plot",
        path,
        "--plot-kind",
        "precision",
    )
    assert code == 0, err
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, reason",
    [
        (["--plot-kind", "precision", "--plot", "x.png"], "--plot-kind precision draws what"),
        (["--precision", "float64"], "--precision float64: the dtype a table is served in"),
        (["--precision", "bf16", "--heatmap"], "--precision prints its figures and --heatmap"),
        (["--precision", "bf16", "--variant", "rope-table"], "--precision works out the exact"),
        (["--precision", "bf16", "--family", "sinusoidal"], "--precision reads a table of sinus"),
        (["--precision", "bf16", "--family", "alibi"], "--precision reads a table of sinusoids"),
        (["--precision", "bf16", "--part", "inv_freq"], "--precision reads a table of cos and"),
        (["--precision", "bf16", "--plot", "x.png"], "--precision draws with --plot-kind"),
        (
            ["--precision", "bf16", "--preset", "flux", "--grid", "4x4"],
            "--precision reads a table over one position axis; this one's run over 3 (t, h, w)",
        ),
    ],
)
def test_what_precision_refuses(cli, args, reason, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    family = [] if "--family" in args else ["--family", "rope"]
    code, out, err = cli("show", *family, *args)
    assert code == 2 and not out, err
    assert err.startswith(f"Error: {reason}")
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


def test_float16_positions_past_its_largest_value_are_said_to_be_inf(cli):
    """From 65,520 on float16 holds a position as inf: the verdict says so where the table
    reaches it, and not where it stops short or the dtype is bfloat16."""
    found = view(64, 10000.0, 70000, "float16").positions
    assert found.lost == 65520 and held(65520, "float16") == float("inf") != held(65519, "float16")
    assert view(64, 10000.0, 65520, "float16").positions.lost is None
    assert view(64, 10000.0, 70000, "bfloat16").positions.lost is None
    for dtype, length, said in (
        ("fp16", 70000, True),
        ("fp16", 65520, False),
        ("bf16", 70000, False),
    ):
        code, out, err = cli(
            "show", "--family", "rope", "-d", 64, "-l", length, "--precision", dtype
        )
        assert code == 0, err
        assert ("from 65,520 on they are inf" in " ".join(out.decode().split())) == said


def test_bfloat16_holds_8176_to_8191_as_8192():
    """docs/precision.md's figure: 8,176 is the midpoint of 8,160 and 8,192 and goes to the
    even one; below it, 8,160. pe-cli's whole-number rounding against the one written here."""
    from pe_cli.analysis.precision import held_position

    assert {held(p, "bfloat16") for p in range(8176, 8192)} == {8192.0}
    assert held(8175, "bfloat16") == 8160.0
    for dtype in BITS:
        for p in [*range(0, 5000), *range(8000, 9000), 65519, 65520, 70000, 2**24 + 1]:
            assert held_position(p, dtype) == held(p, dtype), (dtype, p)
