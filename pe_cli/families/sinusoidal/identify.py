"""Identification of sinusoidal tables: what `compare FILE` proposes an unknown table could be.
Each layout the angles fit (fit.py) becomes a convention with a plausible base, first position
and padding row (the scorer tries the seed recipes and libraries that could have written it);
then the timestep tables read back at a scheduler's timesteps (identify_timesteps.py).

Registered in families/readers.py; building a table never imports it.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ...core.dtypes import FORMATS
from ...core.errors import BadInput
from ..proposals import Note, Proposal, answers
from ..reading import digits, float32_near, plausible_bases
from .conventions import CONVENTIONS
from .family import FAMILY
from .fit import LAYOUT_CONVENTIONS, MODEL_BASES, fit
from .identify_timesteps import schedules
from .timesteps import listed

_DRIFT = 0.1  # radians a power law's angles may stray from the measured ones and be the law


def read(view):
    """Each layout the angles fit, with a plausible base, offset and padding row (the seed
    recipes and libraries that could have written it are the scorer's to try); then timestep
    tables. Where none is the table bit for bit, what was measured is said."""
    values, misses = view.values, []
    fits = fit(values, misses, broken=True)
    found = yield from answers(_fitted(view, fits))
    found += yield from answers(_fourier_features(view))
    # timesteps, read back; consecutive ones too where no layout above made the table (the
    # angles of QwenImage's sigmas k / 1000 at scale 1000 read as k)
    said = []
    named = any(s.named for s in found)
    steady = any(f.drift <= _DRIFT for f in fits)  # consecutive positions: no timesteps to read
    found += yield from answers(schedules(values, said, view, named, not steady))
    if not any(s.named for s in found):
        for note in _measured(values, fits, misses) + said:
            yield Note(note)


def _measured(values, fits, misses) -> list[str]:
    """What the fit measured of a table no candidate names, in plain sentences: of the layout
    whose rates come nearest a power law, a law it misses or a base no model has; constant
    columns; else pairs whose length changes."""
    import numpy as np

    said = []
    constant = int(np.count_nonzero(np.ptp(values, axis=0) == 0))
    if fits:
        best = min(fits, key=lambda f: f.drift)
        convention = LAYOUT_CONVENTIONS[best.layout]
        if best.drift > _DRIFT:
            said.append(
                f"in the {convention} layout its (sin, cos) pairs turn at a steady rate, but at "
                f"rates that follow no power law base^-e: the nearest (base {best.base:.4g}) "
                f"strays up to {best.drift:.3g} radians from their angles over its rows"
            )
        if not MODEL_BASES[0] <= best.base <= MODEL_BASES[1]:
            said.append(
                f"in the {convention} layout its pairs' rates fit base {best.base:.3g}, outside "
                f"the bases of real models ({MODEL_BASES[0]:g} to {MODEL_BASES[1]:g}); "
                "base 10000 is put against it"
            )
    elif misses:
        miss = misses[0]
        said.append(
            f"in the {LAYOUT_CONVENTIONS[miss.layout]} layout its first (sin, cos) pair turns "
            "at 1 radian per row, as every layout's does, but its pairs' lengths are not one "
            f"number: from {miss.shortest:.4g} to {miss.longest:.4g}"
        )
    if constant and constant < values.shape[1]:
        are = "is" if constant == 1 else "are"
        said.append(f"{constant} of its {values.shape[1]} columns {are} constant")
    return said


def _fitted(view, fits):
    """Each layout the angles fit, at consecutive positions from an offset (a base outside
    MODEL_BASES as 10000, the paper's)."""
    d = view.cols
    for found in fits:
        if not MODEL_BASES[0] <= found.base <= MODEL_BASES[1]:
            found = replace(found, base=10000.0)
        names = [LAYOUT_CONVENTIONS[found.layout]]
        if found.layout == "timescale":
            names = ["fairseq"] if len(found.padding) else ["tensor2tensor", "whisper", "fairseq"]
        for name in names:
            try:
                CONVENTIONS[name].check(d)
            except BadInput:
                continue
            pad = (
                int(found.offset + found.padding[0])
                if CONVENTIONS[name].padding and len(found.padding)
                else None
            )
            spec = view.spec(
                d_model=d,
                seq_len=view.length,
                convention=name,
                base=found.base,
                offset=found.offset,
                padding_idx=pad,
                amplitude=1.0 if abs(found.amplitude - 1) < 1e-3 else found.amplitude,
            )
            if spec is None:
                continue
            spec = _choose_base(view, spec)
            if spec.amplitude != 1.0:
                spec = _choose_amplitude(view, spec, found)
            yield Proposal(name + (f" (padding_idx={pad})" if pad is not None else ""), spec)


def _fourier_features(view):
    """Tables whose column 0 is each row's position x and whose other columns are sin and cos
    of x at their convention's frequencies (NeRF-style Fourier features, whose high octaves
    turn too fast between rows to be fitted): x is read from column 0, a range of whole
    numbers as a first position, else as --timesteps."""
    import numpy as np

    values = view.values
    rows, d = values.shape
    x = values[:, 0]
    for name, convention in CONVENTIONS.items():
        if not convention.position_column:
            continue
        probe = view.spec(d_model=d, seq_len=1, convention=name)
        if probe is None:
            continue
        columns = convention.columns(d)
        w = float(FAMILY.frequencies(probe).values[0])
        lowest = values[:, [columns.sin[0], columns.cos[0]]]
        if not np.allclose(lowest, np.stack([np.sin(x * w), np.cos(x * w)], axis=1), atol=1e-2):
            continue
        steps = np.diff(x)
        if np.all(x == np.round(x)) and x[0] >= 0 and np.all(steps == 1):
            spec = view.spec(d_model=d, seq_len=view.length, convention=name, offset=int(x[0]))
        else:
            spec = view.spec(d_model=d, convention=name, timesteps=listed(x))
        yield Proposal(name, spec)


def _choose_base(view, spec):
    """The base the fit suggests, or the roundest number near it that explains the first
    rows as well (within float rounding): a cheap look before the whole table is built."""
    epsilon = FORMATS[view.dtype].epsilon
    return _roundest(
        view, spec, "base", plausible_bases(spec.base), lambda best: 2 * best + 4 * epsilon
    )


def _choose_amplitude(view, spec, found):
    """The amplitude the table says: at position 0 its cos column of frequency 0 holds it
    exactly (cos 0 = 1, in any arithmetic); else the float32 values near the measured one (a
    library multiplies by a float32 scale) and d^-0.5 (x-transformers' at init), the one that
    explains the first rows best, roundest among equals."""
    import numpy as np

    if spec.offset == 0 and 0 not in found.padding:
        at_zero = float(view.values[0, CONVENTIONS[spec.convention].columns(spec.d_model).cos[0]])
        if math.isclose(at_zero, spec.amplitude, rel_tol=1e-3):
            return spec.replace(amplitude=at_zero)
    near = float32_near(np.array([spec.amplitude]), 2)[0].tolist()
    tried = {float(a) for a in near} | {spec.d_model**-0.5, spec.amplitude}
    tried = [a for a in sorted(tried) if math.isclose(a, spec.amplitude, rel_tol=1e-3)]
    slack = FORMATS[view.dtype].epsilon * spec.amplitude / 4
    return _roundest(view, spec, "amplitude", tried, lambda best: best + slack)


def _roundest(view, spec, key: str, tried, allowed):
    """The spec with `key` the roundest of the `tried` values whose table is within
    allowed(best) of the table's first rows (at most 64), best the nearest one's distance."""
    import numpy as np

    head = min(len(view.values), 64)
    scored = [
        (np.abs(view.values[:head] - view.exact(spec.replace(seq_len=head, **{key: v}))).max(), v)
        for v in tried
    ]
    most = allowed(min(error for error, _ in scored))
    return spec.replace(
        **{key: min((v for e, v in scored if e <= most), key=lambda v: (digits(v), v))}
    )
