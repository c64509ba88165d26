"""Figures that depend on the CPU, recomputed on the machine the tests run on.

torch computes float32 exp, sin and cos with different kernels on AVX-512, AVX2, aarch64 and
plain builds (ATEN_CPU_CAPABILITY), so a float32 recipe's error against the true table is not
the same number everywhere. Tests that check such figures run the notebook's or library's own
code here and measure it against the independent reference below; they never compare with
numbers recorded on one machine.

Nothing here imports pe_cli. The figures are the ones `pe-cli compare` prints, as its README
defines them, formatted as it prints them.
"""

import mpmath
import numpy as np

_PIECE_BITS = 28  # positions below 2**20 times a 28-bit piece: exact in float64
_PIECES = 5


def sin_cos(positions, frequencies):
    """sin and cos of p*w for integer positions below 2**20 (rows) and mpmath frequencies
    (columns), as float64 within about 4e-15 absolute: w/(2*pi) to 256 bits is cut into
    28-bit pieces, each product p*piece is exact, its fractional part too, and only the sum
    of those (a few roundings below 2**-50 turns) and numpy's sin and cos of the reduced angle
    are rounded."""
    positions = np.asarray(positions, dtype=np.float64)
    assert positions.max(initial=0) < 2**20
    with mpmath.workprec(256):
        turns = [mpmath.mpf(w) / (2 * mpmath.pi) for w in frequencies]
        fixed = [int(mpmath.floor(t * mpmath.mpf(2) ** (_PIECE_BITS * _PIECES))) for t in turns]
    mask = (1 << _PIECE_BITS) - 1
    frac = np.zeros((len(positions), len(frequencies)))
    for k in range(_PIECES):
        shift = _PIECE_BITS * (_PIECES - 1 - k)
        piece = np.array([((f >> shift) & mask) * 2.0 ** (-_PIECE_BITS * (k + 1)) for f in fixed])
        part = positions[:, None] * piece[None, :]
        frac += part - np.round(part)
        frac -= np.round(frac)
    angle = 2 * np.pi * frac
    return np.sin(angle), np.cos(angle)


def ulp32(values):
    """The spacing of float32 at each value's magnitude (2**-149 at zero)."""
    _, exponent = np.frexp(np.abs(values))  # |x| = m * 2**e, 0.5 <= m < 1
    exponent = np.where(values == 0, -149 + 24, exponent)
    return np.ldexp(1.0, np.maximum(exponent - 24, -149))


def difference(candidate, reference, threshold=1e-4):
    """compare's figures for a candidate table against a reference of the same 2-D shape:
    largest, mean and RMS error, largest error in float32 ulps (at the larger magnitude of
    the two), where the largest error is, the first row above `threshold`, and the largest
    error in rows [0, 1), [1, 4), [4, 16), ... (the last band ending at the last row)."""
    candidate = np.asarray(candidate, dtype=np.float64)
    error = np.abs(candidate - reference)
    ulps = error / ulp32(np.maximum(np.abs(candidate), np.abs(reference)))
    worst = np.unravel_index(int(np.argmax(error)), error.shape)
    rows = error.max(axis=1)
    over = np.nonzero(rows > threshold)[0]
    edges = [0, 1]
    while edges[-1] < len(rows):
        edges.append(edges[-1] * 4)
    edges[-1] = len(rows)
    return {
        "max": error.max(),
        "mean": error.mean(),
        "rms": np.sqrt(np.mean(error**2)),
        "ulps": ulps.max(),
        "worst": (int(worst[0]), int(worst[1])),
        "first_over": int(over[0]) if len(over) else None,
        "bands": [rows[a:b].max() for a, b in zip(edges, edges[1:]) if a < b],
    }


def _e(value) -> str:
    return f"{value:.3g}"


def audit_row(name: str, d: dict) -> str:
    """A row of `compare`'s table of recipes against the exact table."""
    first = "-" if d["first_over"] is None else str(d["first_over"])
    cells = [
        name,
        _e(d["max"]),
        _e(d["mean"]),
        _e(d["rms"]),
        f"{d['ulps']:.4g}",
        f"({d['worst'][0]}, {d['worst'][1]})",
        first,
    ]
    return " │ ".join(cells)


def band_row(name: str, d: dict) -> str:
    """A row of `compare`'s table of the largest error by position band."""
    return " │ ".join([name, *(_e(m) for m in d["bands"])])


def comparison_lines(d: dict, threshold=1e-4) -> dict[str, str]:
    """The lines of `compare A B` that carry figures, by their label."""
    if d["max"] == 0:
        verdict = "bit-identical"
    elif d["ulps"] <= 1:
        verdict = f"equal within {d['ulps']:.3g} ulp of float32"
    else:
        verdict = f"differ: max {d['ulps']:.4g} ulp of float32"
    return {
        "verdict": f"verdict {verdict}",
        "max |A-B|": f"max |A-B| {_e(d['max'])} at position {d['worst'][0]}, dimension {d['worst'][1]}",
        f"first p > {threshold:g}": f"first p > {threshold:g} "
        + ("-" if d["first_over"] is None else str(d["first_over"])),
    }
