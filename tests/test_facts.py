"""`show --json` reports the frequencies a table was built with: each one is read back from the
built table itself (the angle of its sin and cos columns at position 1), for every family,
convention and parameter that changes them."""

import io
import json
import math

import numpy as np
import pytest

from .test_families import ROPE_CASES

SINUSOIDAL = [
    ["--convention", "vaswani", "-d", "8"],
    ["--convention", "vaswani", "-d", "9", "--base", "500000"],
    ["--convention", "concat", "-d", "11", "--base", "2.5"],
    ["--convention", "tensor2tensor", "-d", "8", "--min-timescale", "2"],  # w_0 = 2, w_3 = 4e-4
    ["--convention", "tensor2tensor", "-d", "9", "--base", "1e6", "--min-timescale", "0.5"],
    ["--convention", "fairseq", "-d", "10", "--padding-idx", "3"],
    ["--convention", "whisper", "-d", "12", "--base", "7000"],
]


def _json(cli, *args):
    code, out, err = cli(*args)
    assert code == 0, err
    return json.loads(out)


def _table(cli, *args):
    code, out, err = cli("generate", *args, "--dtype", "float64", "-o", "-")
    assert code == 0, err
    return np.load(io.BytesIO(out))


def _angle(sin: float, cos: float) -> float:
    return math.atan2(sin, cos)  # every frequency here is below pi: position 1's angle is w


@pytest.mark.parametrize("args", SINUSOIDAL)
def test_sinusoidal_frequencies_are_the_tables(cli, args):
    args = [*args, "-l", "4"]
    reported = _json(cli, "show", *args, "--json")["frequencies"]
    row = _table(cli, *args)[1]
    assert reported
    for f in reported:
        sin = row[f["sin_column"]]
        measured = math.asin(sin) if f["cos_column"] is None else _angle(sin, row[f["cos_column"]])
        assert math.isclose(f["frequency"], measured, rel_tol=1e-12), (f, measured)
        assert math.isclose(f["wavelength"], 2 * math.pi / measured, rel_tol=1e-12)


@pytest.mark.parametrize("case", ROPE_CASES)
@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_rope_frequencies_are_the_tables(cli, case, convention):
    rope = [
        a
        for k, v in ROPE_CASES[case].items()
        for a in ("--rope", f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}")
    ]
    args = [
        "--family",
        "rope",
        "-d",
        "16",
        "-l",
        "4097",
        "--base",
        "500000",
        "--convention",
        convention,
        *rope,
    ]
    report = _json(cli, "show", *args, "--json")
    cos, sin = (_table(cli, *args, "--part", part) for part in ("cos", "sin"))
    assert report["frequencies"]
    for f in report["frequencies"]:
        for column in f["columns"]:
            measured = _angle(sin[1, column], cos[1, column])  # the attention factor scales both
            assert math.isclose(f["frequency"], measured, rel_tol=1e-12), (f, column)
    assert report["attention_factor"] == cos[0, 0]  # cos 0 times the factor


@pytest.mark.parametrize(
    "convention, d",
    [("mae", 16), ("timm", 16), ("timm-interleaved", 16), ("pairs", 16), ("pairs", 13)],
)
def test_sincos2d_frequencies_are_the_tables(cli, convention, d):
    args = [
        "--family",
        "sincos2d",
        "--grid",
        "3x5",
        "-d",
        d,
        "--base",
        "300",
        "--convention",
        convention,
        "--cls-token",
    ]
    reported = _json(cli, "show", *args, "--json")["frequencies"]
    row = _table(cli, *args)[1 + 1 * 5 + 1]  # after the class row: patch (1, 1), x = y = 1
    assert len(reported) == -(-d // 4)
    read = 0
    for f in reported:
        for axis in ("x", "y"):
            if f"cos {axis}" in f["columns"]:  # a column cut off by d_model is not listed
                measured = _angle(
                    row[f["columns"][f"sin {axis}"]], row[f["columns"][f"cos {axis}"]]
                )
                assert math.isclose(f["frequency"], measured, rel_tol=1e-12), (f, axis)
                read += 1
    assert read >= len(reported)  # every frequency of y at least
