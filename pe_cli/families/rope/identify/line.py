"""Reading a 1-D rotary table back: a cos or sin part starting at position 0 (after rows at
position 0 where a batch padded the prompt, as OmniGen's: --ids), its pairing, attention
factor, theta and scaling fitted from the angles; each in the exact table, transformers'
arithmetic and its polar one."""

from __future__ import annotations

from dataclasses import asdict

from ..family import FAMILY
from ..pairing import pair_columns
from ..transformers import VARIANTS
from .factors import library_factors
from .grids import may_be_angles
from .reread import reread
from .scalings import scalings


def line_candidates(values, notes, bench):
    """A cos or sin part starting at position 0 (after rows at position 0 where a batch
    padded the prompt, as OmniGen's: --ids): its pairing, attention factor, theta and
    scaling (linear, llama3, YaRN or LongRoPE) fitted from the angles; each in the exact
    table, transformers' arithmetic and its polar one."""
    import numpy as np

    same = np.all(values == values[:1], axis=1)
    lead = (
        max(int(np.argmin(same)) - 1, 0) if not same.all() else 0
    )  # rows before the table's own 0
    values = values[lead:]
    rows, cols = values.shape
    if rows < 3:
        return
    duplicated, angles = False, may_be_angles(values)
    for convention in FAMILY.conventions:
        if convention == "single":
            if duplicated:  # a two-column layout explained it
                continue
            n = cols
        elif cols % 2:
            continue
        else:
            n = cols // 2
        first, second = pair_columns(n, convention)
        plane, twin = values[:, first], values[:, second]
        if not np.array_equal(plane, twin):
            continue
        duplicated = duplicated or convention != "single"
        # a first row of zeros past 1 reads as angles and as sin times a factor: the notes of a
        # reading are the table's only where the angles made no candidate
        scratch, angled = [], False
        readings = _readings(plane, angles, scratch)
        if bench.dtype in _COARSE:
            readings = _refined(plane, readings, bench.dtype)
        for part, attention, w, resolved in readings:
            made = [
                c
                for c in _fitted(
                    bench, plane, convention, part, attention, w, resolved, scratch, lead
                )
                if c is not None
            ]
            angled = angled or (part == "angle" and bool(made))
            if part == "angle":
                scratch.clear()
            yield from made
        notes += [] if angled else [note for note in scratch if note not in notes]


def _readings(plane, angles: bool, notes: list):
    """What one column per frequency of a 1-D table starting at position 0 may be: (part,
    attention factor, fitted frequencies w, which of them are resolved to 1e-3). A first row of
    zeros is sin (times its factor) or, where values pass 1, the angles themselves."""
    import numpy as np

    rows, n = plane.shape
    head = plane[0]
    if angles and not np.any(head):  # the angles: the last row's over its position
        w = plane[-1] / (rows - 1)
        yield "angle", 1.0, w, w * (rows - 1) >= 0.1
    if np.all(head == head[0]) and head[0] > 0:
        part, attention = "cos", float(head[0])
    elif not np.any(head):
        part, attention = "sin", float(np.max(np.abs(plane[:, 0])))
    else:
        return  # not starting at position 0: the fit assumes it does
    if not (0 < attention < np.inf):
        _still(notes)
        return
    inverse = np.arccos if part == "cos" else np.arcsin
    rough = inverse(np.clip(plane[1] / attention, -1, 1))
    at = np.clip(np.round(1 / np.maximum(rough, 1e-12)), 1, rows - 1).astype(int)
    w = inverse(np.clip(plane[at, np.arange(n)] / attention, -1, 1)) / at
    # only angles of at least 0.1 rad by row `at` say their frequency to 1e-3; below, float
    # rounding of cos near 1 (and a table shorter than a wavelength) hide it
    resolved = (w * at >= 0.1) & (w > 0)
    if not resolved[0]:  # a power law from w_0 = 1 (or 1/factor): its first pair must turn
        if not w[0] > 0:
            _still(notes)
        return
    yield part, attention, w, resolved


_COARSE = ("float16", "bfloat16")  # dtypes whose values one reading tells a frequency poorly
_RESOLVED = 2e-4  # a frequency read to this relative error is resolved (scalings fit to 1e-3)


def _refined(plane, readings, dtype: str):
    """Readings of a half-precision plane with each frequency read again, at later and later
    rows: a value rounded to 8 or 11 bits tells the angle at about 1 rad only to a few 1e-3,
    but an estimate good to e predicts the angle at row 0.3 / e to within 0.3 rad, which tells
    the turn it is in; read there (the best conditioned of a few rows), the angle's error is
    the same, the frequency's 0.3 / e times smaller. Resolved: read to _RESOLVED."""
    for part, attention, w, resolved in readings:
        if part == "angle":
            yield part, attention, w, resolved
            continue
        w, error = reread(plane / attention, part, dtype)
        yield part, attention, w, (error <= _RESOLVED * w) & (w > 0)


def _still(notes: list) -> None:
    note = (
        "the first rotary column pair never turns (a zero frequency, as on an axis whose positions "
        "are all 0 in a multi-axis table): not a 1-D RoPE table"
    )
    if note not in notes:
        notes.append(note)


def _fitted(bench, plane, convention, part, attention, w, resolved, notes, lead: int = 0):
    """The candidates of fitted frequencies w (the `resolved` ones to 1e-3) of a plane (one
    column per frequency, positions 0 .. after `lead` rows at 0): each power law and scaling
    that explains them, exactly and in the libraries' arithmetic."""
    dtype, end = bench.dtype, bench.length - lead
    ids = f"{lead}*0; 0:{end}" if lead else None

    def search():  # LongRoPE's factors in each library's arithmetic, where no other fits
        return library_factors(bench, plane, convention, part, attention, notes) if not lead else []

    fits = scalings(plane, dtype, w, resolved, attention, part, end, notes, search)
    for dim, base, rope in fits:
        spec = bench.spec(
            family=FAMILY.name,
            d_model=dim,
            seq_len=bench.length,
            base=base,
            rope=rope,
            convention=convention,
            part=part,
            ids=ids,
            dtype="float64",
        )
        if spec is None:
            continue
        reference = bench.reference(spec)
        yield bench.candidate(f"rope {part}, {convention} pairing", spec, reference=reference)
        yield from bench.libraries(spec, reference)
        if dtype == "float32" and part != "angle":
            polar = bench.spec(
                **{
                    **asdict(spec),
                    "variant": "hf-rope",
                    "arithmetic": "polar",
                    "dtype": "float32",
                }
            )
            if polar is not None:
                yield bench.candidate(
                    "library hf-rope, polar", polar, VARIANTS["hf-rope"].source, reference
                )
