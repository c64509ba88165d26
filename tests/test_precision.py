"""What a serving dtype does to positions (compare --rope-config CFG --dtype bfloat16): positions
held in bfloat16 or float16, checked against whole-number rounding written here, and the angle
and cos, sin errors they make, checked against mpmath."""

import json

import mpmath
import numpy as np
import pytest

from pe_cli.analysis.metrics import position_bands
from pe_cli.analysis.precision import precision

BITS = {"bfloat16": 8, "float16": 11}
LARGEST = {"bfloat16": None, "float16": 65504}


def held(p: int, dtype: str) -> float:
    """Position p rounded to the dtype's significant bits, to nearest, ties to even; inf past
    float16's largest value (ties there go up: 65504's last bit is odd)."""
    bits = BITS[dtype]
    if p < 1 << bits:
        q = p
    else:
        shift = p.bit_length() - bits
        top, rest = divmod(p, 1 << shift)
        half = 1 << (shift - 1)
        top += rest > half or (rest == half and top % 2)
        q = top << shift
    largest = LARGEST[dtype]
    if largest is not None and q > largest:
        return float("inf")
    return float(q)


def merged_share(length: int, dtype: str, first: int = 0, stop: int | None = None) -> float:
    stop = length if stop is None else stop
    pairs = [(p, p + 1) for p in range(first, min(stop, length - 1))]
    return sum(held(a, dtype) == held(b, dtype) for a, b in pairs) / len(pairs)


@pytest.mark.parametrize("length", [1024, 16384, 131072])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_share_of_adjacent_positions_held_as_one(length, dtype):
    found = precision(dtype, length, [1.0])
    assert found.merged == merged_share(length, dtype)
    for band, (first, stop) in zip(found.bands, position_bands(length)):
        assert (band.first, band.stop) == (first, stop)
        if stop - first > 1:
            assert band.merged == merged_share(length, dtype, first, stop)


def test_bfloat16_holds_8188_to_8191_as_8192():
    """The published figure, and the whole run around it pe-cli names."""
    assert {held(p, "bfloat16") for p in range(8188, 8192)} == {8192.0}
    found = precision("bfloat16", 16384, [1.0])
    first, last, value = found.run
    assert value == 8192 and first <= 8188 and last >= 8192
    on = [p for p in range(4096, 16384) if held(p, "bfloat16") == 8192]
    assert (first, last) == (on[0], on[-1])


def test_the_published_shares_of_positions_bfloat16_cannot_tell_apart():
    """Positions 0 .. 2^k - 1 in bfloat16: 257 values up to 256, then 128 more per octave, so
    2^k - 1 - 256 - 128 (k - 8) of the 2^k - 1 adjacent pairs share one: 49.95% of 1,024,
    93.75% of 16,384, 98.93% of 131,072."""
    for k in (10, 14, 17):
        pairs = 2**k - 1
        assert precision("bfloat16", 2**k, [1.0]).merged == (pairs - 256 - 128 * (k - 8)) / pairs
    shares = [precision("bfloat16", n, [1.0]).merged for n in (1024, 16384, 131072)]
    assert [round(100 * s, 2) for s in shares] == [49.95, 93.75, 98.93]


def test_float16_holds_positions_from_65520_as_inf():
    found = precision("float16", 70000, [1.0])
    assert found.lost == 65520 and held(65519, "float16") == 65504
    assert precision("float16", 65520, [1.0]).lost is None
    assert np.isinf(found.bands[-1].angle) and np.isnan(found.bands[-1].value)


def test_no_position_is_lost_where_the_dtype_holds_them_all():
    """Up to 256 positions bfloat16 holds each one: nothing merged, no error, no run named."""
    found = precision("bfloat16", 256, [1.0, 0.01])
    assert found.merged == 0 and found.run is None and found.lost is None
    assert all(b.merged == 0 and b.angle == 0 and b.value == 0 for b in found.bands)


def test_angle_and_value_errors_against_mpmath():
    """Each band's largest |angle error| and |cos or sin error| (times the factor) of the
    angles computed from positions held in bfloat16, against mpmath over every position."""
    w = [float(mpmath.power(10000, -mpmath.mpf(2 * i) / 16)) for i in range(8)]
    factor = 1.25
    found = precision("bfloat16", 2048, w, factor)
    with mpmath.workdps(30):
        for band in found.bands:
            angle = value = mpmath.mpf(0)
            for p in range(band.first, band.stop):
                h = held(p, "bfloat16")
                for f in w:
                    a, b = mpmath.mpf(p) * f, mpmath.mpf(h) * f
                    angle = max(angle, abs(b - a))
                    value = max(
                        value,
                        factor * abs(mpmath.cos(b) - mpmath.cos(a)),
                        factor * abs(mpmath.sin(b) - mpmath.sin(a)),
                    )
            assert band.angle == pytest.approx(float(angle), rel=1e-12, abs=1e-300)
            assert band.value == pytest.approx(float(value), rel=1e-9, abs=1e-300)


def _config(tmp_path):
    config = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "rope_theta": 10000.0,
        "max_position_embeddings": 8192,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path / "config.json"


def test_the_view_says_what_bfloat16_does_to_positions(cli, tmp_path):
    code, out, err = cli(
        "compare", "--rope-config", _config(tmp_path), "-l", 16384, "--dtype", "bf16"
    )
    assert code == 0, err
    text = " ".join(out.decode().split())
    assert "positions held in bfloat16 (8 significant bits)" in text
    assert "93.75% of adjacent positions in 0 .. 16383 are one bfloat16 value" in text
    first, last, _ = precision("bfloat16", 16384, [1.0]).run
    assert f"positions {first} .. {last} are all 8192" in text


def test_the_float32_view_and_a_short_one_have_no_such_lines(cli, tmp_path):
    config = _config(tmp_path)
    code, out, err = cli("compare", "--rope-config", config, "-l", 256)
    assert code == 0, err
    assert "held in" not in out.decode()
    code, out, err = cli("compare", "--rope-config", config, "-l", 256, "--dtype", "bf16")
    assert code == 0, err
    text = " ".join(out.decode().split())
    assert "0% of adjacent positions in 0 .. 255 are one bfloat16 value" in text
    assert "are all" not in text and "inf" not in text


@pytest.mark.parametrize(
    "args, reason",
    [
        (["--dtype", "float64"], "--dtype float64: engines serve a table in float32, bfloat16"),
        (["--dtype", "bf16", "--family", "rope"], "--dtype is the dtype of compare --rope-config"),
    ],
)
def test_dtype_outside_the_every_engine_view_is_refused(cli, tmp_path, args, reason):
    if args[1] == "float64":
        args = ["--rope-config", _config(tmp_path), *args]
    code, out, err = cli("compare", *args)
    assert code == 2 and not out
    assert err.startswith(f"Error: {reason}")
    assert len(err.strip().splitlines()) == 1
