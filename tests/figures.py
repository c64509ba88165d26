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


def bands(length):
    """compare's position bands: rows [0, 1), [1, 4), [4, 16), ..., the last ending at `length`."""
    edges = [0, 1]
    while edges[-1] < length:
        edges.append(edges[-1] * 4)
    edges[-1] = length
    return [(a, b) for a, b in zip(edges, edges[1:]) if a < b]


def difference(candidate, reference, threshold=1e-4):
    """compare's figures for a candidate table against a reference of the same 2-D shape:
    largest, mean and RMS error, largest error in float32 ulps (at its column's size: the
    largest magnitude in that column of either table), where the largest error is, the first
    row above `threshold`, and the largest error in rows [0, 1), [1, 4), [4, 16), ... (the
    last band ending at the last row)."""
    candidate = np.asarray(candidate, dtype=np.float64)
    error = np.abs(candidate - reference)
    size = np.maximum(np.abs(candidate).max(axis=0), np.abs(reference).max(axis=0))
    ulps = error.max(axis=0) / ulp32(size)
    worst = np.unravel_index(int(np.argmax(error)), error.shape)
    rows = error.max(axis=1)
    over = np.nonzero(rows > threshold)[0]
    return {
        "max": error.max(),
        "mean": error.mean(),
        "rms": np.sqrt(np.mean(error**2)),
        "ulps": ulps.max(),
        "worst": (int(worst[0]), int(worst[1])),
        "first_over": int(over[0]) if len(over) else None,
        "bands": [rows[a:b].max() for a, b in bands(len(rows))],
        "rows": len(rows),
        "size": float(size.max()),
        # the largest error over position, at every position past 0: what "up to R x p" bounds
        "rate": float((rows[1:] / np.arange(1, len(rows))).max(initial=0.0)),
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
        f"{d['ulps']:.4g}" if d["max"] <= 1e-2 * d["size"] else "-",  # as large as the values
        f"({d['worst'][0]}, {d['worst'][1]})",
        first,
    ]
    return " │ ".join(cells)


def band_row(name: str, d: dict) -> str:
    """A row of `compare`'s table of the largest error by position band."""
    return " │ ".join([name, *(_e(m) for m in d["bands"])])


def comparison_lines(d: dict, threshold=1e-4) -> dict[str, str]:
    """The lines of `compare A B` that carry figures, by their label (the two `where` lines
    by their first words; `growth`, where the difference grows in proportion to position, up
    to its rate: the rest of the line may fold onto the next)."""
    if d["max"] == 0:
        verdict = "bit for bit identical"
    elif d["ulps"] <= 1:
        verdict = (
            f"equal within {_e(d['ulps'])} ulp of float32 at the values' size "
            f"(max |A-B| {_e(d['max'])}): rounding only"
        )
    elif d["max"] > 1e-2 * d["size"]:
        verdict = f"differ by up to {_e(d['max'])}, where the values reach {_e(d['size'])}"
    else:
        ulps = f"{d['ulps']:.0f}" if d["ulps"] >= 10 else f"{d['ulps']:.2g}"
        verdict = f"differ by up to {_e(d['max'])}, {ulps} ulp of float32 at the values' size"
    first = d["first_over"]
    if first is None:
        within = f"within {threshold:g} at every position"
    elif first == 0:
        within = f"beyond {threshold:g} already at position 0"
    else:
        within = (
            f"within {threshold:g} up to position {first - 1}; beyond it first at position {first}"
        )
    lines = {
        "verdict": f"verdict {verdict}",
        "the largest": f"the largest difference is at position {d['worst'][0]}, dimension "
        f"{d['worst'][1]}",
        "within": within,
    }
    # growth: the largest error per band, from the first band where it is not 0, over the
    # band's last position; said where it is in proportion to position (the rates within a
    # factor 4 of each other) and grows at least 8-fold, with the largest error / p over every
    # position as its bound
    live = [(b - 1, m) for (_, b), m in zip(bands(d["rows"]), d["bands"]) if b > 1]
    live = live[next((k for k, (_, m) in enumerate(live) if m > 0), len(live)) :]
    if d["ulps"] > 1 and len(live) >= 3 and min(m for _, m in live) > 0:
        rates = [m / p for p, m in live]
        if max(rates) <= 4 * min(rates) and live[-1][1] >= 8 * live[0][1]:
            lines["growth"] = f"growth grows in proportion to position, up to {_e(d['rate'])} x p"
    return lines
