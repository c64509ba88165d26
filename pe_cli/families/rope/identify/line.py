"""Reading a 1-D rotary table back: a cos or sin part starting at position 0 (after rows at
position 0 where a batch padded the prompt, as OmniGen's: --ids), its pairing, attention
factor, theta and scaling fitted from the angles; each in the exact table, transformers'
arithmetic and its polar one."""

from __future__ import annotations

import math

from ....core.dtypes import FORMATS, match_margin
from ....core.names import few
from ...proposals import Proposal, answers, changed
from ...reading import plausible_bases
from ..family import FAMILY
from ..pairing import pair_columns
from ..transformers import VARIANTS
from .common import BASES, Fit
from .grids import cos_sin_cos, may_be_angles, rotation_sin
from .reread import reread
from .reversed import reversed_yarn
from .scalings import READ, rotary_dims, scalings


def line(view, notes):
    """A cos or sin part starting at position 0 (after rows at position 0 where a batch
    padded the prompt, as OmniGen's: --ids): its pairing, attention factor, theta and
    scaling (linear, llama3, YaRN or LongRoPE) fitted from the angles; each in the exact
    table, transformers' arithmetic and its polar one."""
    import numpy as np

    values = view.values
    same = np.all(values == values[:1], axis=1)
    lead = (
        max(int(np.argmin(same)) - 1, 0) if not same.all() else 0
    )  # rows before the table's own 0
    values = values[lead:]
    rows, cols = values.shape
    if rows == 1 and view.length == 1:
        yield from _vector(view, values[0], notes)
        return
    if rows < 3:
        after = f" after {lead} repeated first rows" if lead else ""
        notes.append(
            f"it has {rows} rows{after}: a 1-D RoPE table's frequencies are read from 3 "
            "positions at least"
        )
        return
    if np.all(same):
        # a sampled table's first rows only: those after them are not all read here
        where = f"its first {rows} of {view.length:,}" if view.sampled else f"all {rows}"
        notes.append(
            f"every column holds one value at {where} positions: nothing turns there, as a "
            "RoPE table's first columns do (by 1 radian a position)"
        )
        return
    sin = rotation_sin(values)
    if sin is not None:  # --part rotation: [cos, -sin, sin, cos] of each frequency
        yield from _part_read(view, sin[:, 0::2], notes, lead, "sin", "interleaved", "rotation")
        return
    cos = cos_sin_cos(values)
    if cos is not None:  # --part cos-sin: [cos | sin], one column per frequency each
        yield from _part_read(view, cos, notes, lead, "cos", "single", "cos-sin")
        return
    values, made_up = _mended(values, notes, view.dtype)
    head = values[0]
    if not (np.all(head == head[0]) and head[0] > 0) and np.any(head):
        notes.append(_unstarted(values, view.dtype))
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
        readings = _refined(plane, _readings(plane, angles, scratch), view.dtype)
        unread = made_up[first] & (np.arange(n) > 0)  # not read (but the fastest)
        for part, attention, w, resolved in readings:
            resolved = resolved & ~unread
            made = yield from answers(
                _fitted(view, plane, convention, part, attention, w, resolved, scratch, lead)
            )
            angled = angled or (part == "angle" and bool(made))
            if part == "angle":
                scratch.clear()
        notes += [] if angled else scratch  # (the scorer says each note once)


def _part_read(view, plane, notes, lead: int, part: str, convention: str, shown: str):
    """The proposals of a table made of cos and sin (`shown`: a rotation table, read from its
    sin columns; a [cos | sin] one, from its cos half), read from its `part` plane (one column
    per frequency)."""
    scratch = []
    readings = [r for r in _readings(plane, False, scratch) if r[0] == part]
    readings = _refined(plane, readings, view.dtype)
    for part, attention, w, resolved in readings:
        args = (view, plane, convention, part, attention, w, resolved, scratch, lead)
        yield from _fitted(*args, shown=shown)
    notes += scratch


def _mended(values, notes: list, dtype: str):
    """A cos or sin part broken in a few columns (a buffer overwritten), read with those columns
    mended, a note saying how (the scorer lists where the file differs), and which columns
    were made up (a mask: their frequencies are not read). Each is taken from its pair twin
    where that holds it whole; else (a table of one column per pair) made from the frequencies
    of its neighbours, read from them. Broken: the first row is one value (cos at position 0)
    or zeros (sin) but there; every other pair is equal. The values as they are where neither
    mends them so."""
    import numpy as np

    rows, cols = values.shape
    head = values[0]
    held, counts = np.unique(head, return_counts=True)
    start = held[np.argmax(counts)]
    broken = np.flatnonzero(head != start)
    made = np.zeros(cols, bool)
    if not (start >= 0 and few(len(broken), cols)):
        return values, made
    half = cols // 2
    for convention in ("half", "interleaved") if cols % 2 == 0 else ():
        twins = (broken + half) % cols if convention == "half" else broken ^ 1
        if np.any(head[twins] != start):
            continue
        mended = values.copy()
        mended[:, broken] = values[:, twins]
        first, second = pair_columns(half, convention)
        if np.array_equal(mended[:, first], mended[:, second]):
            pairs = ", ".join(f"{b} from {t}" for b, t in zip(broken.tolist(), twins.tolist()))
            one = len(broken) == 1
            notes.append(
                f"read with {len(broken)} of its columns taken from "
                + (f"its {convention} pair twin" if one else f"their {convention} pair twins")
                + f" ({pairs}): at position 0 {'it is' if one else 'they are'} not what the "
                "rest are"
            )
            return mended, made
    good = np.flatnonzero(head == start)
    part, scale = ("cos", start) if start > 0 else ("sin", np.max(np.abs(values[:, good])))
    w, _ = reread(values[:, good] / scale, part, dtype)
    good, w = good[w > 0], w[w > 0]  # the columns that turn
    if len(good) < 2:
        return values, made
    mended = values.copy()
    for k in broken:  # on the power law through its two nearest good columns
        i = min(max(int(np.searchsorted(good, k)), 1), len(good) - 1)
        slope = np.log(w[i] / w[i - 1]) / (good[i] - good[i - 1])
        rate = w[i - 1] * np.exp(slope * (k - good[i - 1]))
        mended[:, k] = scale * (np.cos if part == "cos" else np.sin)(np.arange(rows) * rate)
    made[broken] = True
    one = len(broken) == 1
    notes.append(
        f"read with column{'' if one else 's'} {', '.join(map(str, broken.tolist()))} made from "
        f"the frequencies of the columns beside {'it' if one else 'them'}: at position 0 "
        f"{'it is' if one else 'they are'} not what the rest are"
    )
    return mended, made


def _unsteady(values, dtype: str) -> int:
    """How many columns are not sinusoids of the position: each x[p + 1] + x[p - 1] =
    2 cos(w) x[p] at one w (at any start, any phase), to the dtype's rounding."""
    import numpy as np

    middle, around = values[1:-1], values[2:] + values[:-2]
    power = np.sum(middle * middle, axis=0)
    step = np.sum(around * middle, axis=0) / np.where(power > 0, power, 1)
    residual = np.sqrt(np.mean((around - step * middle) ** 2, axis=0))
    scale = np.sqrt(np.mean(values * values, axis=0))
    # the dtype's rounding, and angles rounded to float32 at each position (every library's
    # float32 arithmetic): rows * 2^-24 radians at the last, which no smooth law absorbs
    slack = max(1e-4, 8 * FORMATS[dtype].epsilon) + 4 * len(values) * 2.0**-24
    return int(np.count_nonzero(~(residual <= slack * np.maximum(scale, 1e-30))))


def _unsteady_note(count: int, cols: int) -> str:
    return (
        f"{count} of its {cols} columns "
        + ("is not a sinusoid" if count == 1 else "are not sinusoids")
        + " of the position (x[p + 1] + x[p - 1] = 2 cos(w) x[p] at no one w)"
    )


def _unstarted(values, dtype: str) -> str:
    """Why a table whose first row is neither one value (cos at position 0) nor zeros (sin) is
    read as no 1-D RoPE table, and whether its columns are sinusoids at all."""
    start = (
        "its first row is neither one value (cos at position 0) nor zeros (sin at position 0): "
        "a 1-D RoPE table is read from position 0"
    )
    import numpy as np

    count = _unsteady(values, dtype)
    if not count:
        still = int(np.count_nonzero(np.all(values == values[:1], axis=0)))
        which = f"its {values.shape[1] - still} columns that change" if still else "its columns"
        return (
            f"{which} are sinusoids of the position, each turning at a steady rate, but {start}"
            " (a table from another first position, --offset, is not read back)"
        )
    return f"{_unsteady_note(count, values.shape[1])}, and {start}"


def _vector(view, w, notes):
    """A vector of frequencies (--part inv_freq), w_0 the highest: the rope settings that
    explain it (no attention factor, no length: neither dynamic NTK nor LongRoPE), exactly
    and as each library and precision recipe writes it."""
    import numpy as np

    from ....numerics.float32 import round_to

    w = w.astype(np.float64)
    if not (w[0] > 0 and np.all(w >= 0) and np.all(np.diff(w) <= 0) and w[-1] < w[0]):
        notes.append(
            "its one row does not fall from a positive first value, as a vector of rotary "
            "frequencies (inv_freq) does"
        )
        return
    # the grid its values lie on: a recipe's frequencies cast to a half dtype are read as such
    grid = next(
        (low for low in ("bfloat16", "float16") if np.array_equal(round_to(w, low), w)),
        view.dtype,
    )
    fits = scalings(grid, w, w > 0, 1.0, "inv_freq", 0, notes)
    for fit in fits:
        spec = view.spec(
            family=FAMILY.name,
            d_model=fit.dim,
            base=fit.base,
            rope=fit.rope,
            part="inv_freq",
        )
        if spec is None:
            continue
        said = _said(fit, len(w))
        yield Proposal("rope inv_freq", spec, detail=said, libraries=not fit.nearest)
        if fit.nearest:
            continue
        yield from _wide(view, spec, said)
        # a precision recipe's frequencies cast to a half dtype (its --compute-dtype)
        for name, found in FAMILY.variants.items():
            for low in ("bfloat16", "float16") if found.kind == "recipe" else ():
                if not np.array_equal(round_to(w, low).astype(np.float64), w):
                    continue
                recipe = changed(spec, variant=name, compute_dtype=low, dtype=view.dtype)
                yield Proposal(
                    f"recipe {name} ({low})", recipe, found.source, detail=said, against=spec
                )


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
        # the peak of every column bounds the factor from below; one within 1e-4 of 1 is 1 (a
        # column's peak misses it by (p w - pi/2)^2 / 2 at the nearest whole position)
        part, attention = "sin", float(np.max(np.abs(plane)))
        attention = 1.0 if math.isclose(attention, 1, rel_tol=1e-4) else attention
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
    the same, the frequency's 0.3 / e times smaller. Resolved: read to _RESOLVED. Other
    dtypes' readings as they are."""
    for part, attention, w, resolved in readings:
        if part == "angle" or dtype not in _COARSE:
            yield part, attention, w, resolved
            continue
        w, error = reread(plane / attention, part, dtype)
        yield part, attention, w, (error <= _RESOLVED * w) & (w > 0)


def _still(notes: list) -> None:
    notes.append(
        "the first rotary column pair never turns (a zero frequency, as on an axis whose positions "
        "are all 0 in a multi-axis table): not a 1-D RoPE table"
    )


def _fitted(
    view, plane, convention, part, attention, w, resolved, notes, lead: int = 0, shown: str = ""
):
    """The candidates of fitted frequencies w (the `resolved` ones to 1e-3) of a plane (one
    column per frequency, positions 0 .. after `lead` rows at 0) of `part` (the table's own
    part is `shown`, where the plane is read from it: a rotation's sin): each power law and
    scaling that explains them, exactly and in the libraries' arithmetic; where none does, the
    nearest plain law's exact table alone."""
    dtype, end = view.dtype, view.length - lead
    ids = f"{lead}*0; 0:{end}" if lead else None
    table = shown or part

    recipes = yield from answers(_recipes(view, plane, convention, table, w, resolved, end, ids))
    slip, read = any(s.named for s in recipes), []  # what this reading measured

    def search(base):  # LongRoPE's factors in each library's arithmetic, where no other fits
        if slip:
            return []
        found = _factors(view, plane, convention, part, attention, base, end, read)
        return found or reversed_yarn(w, resolved)

    _constant(plane, w, resolved, read)
    fits = scalings(dtype, w, resolved, attention, part, end, read, search)
    if not slip and all(fit.nearest for fit in fits):  # position ids a half dtype rounded?
        held = _positions_refit(view, plane, convention, part, table, lead, ids)
        recipes += yield from answers(held)
        slip = any(s.named for s in recipes)
    count = _unsteady(plane, dtype)
    if count:  # the frequencies were read from a few rows: what every row does
        read.append(_unsteady_note(count, plane.shape[1]))
    if not slip:  # a port's precision slip, read: nothing to say of the scaling it seemed to have
        notes += read
    for fit in fits:
        spec = _law_spec(view, fit, convention, table, ids)
        if spec is None:
            continue
        said, name = _said(fit, len(w)), f"rope {table}, {convention} pairing"
        if fit.nearest:  # no law fits: no library's arithmetic of it is the table
            if view.distance(spec) > match_margin(view.length, view.dtype):  # only as nearest
                yield Proposal(name, spec, detail=said, libraries=False)
            continue
        yield Proposal(name, spec, detail=said)
        yield from _wide(view, spec, said)
        yield from _positions_slips(view, spec, said)
        if dtype == "float32" and part != "angle":
            polar = changed(spec, variant="hf-rope", arithmetic="polar", dtype="float32")
            source = VARIANTS["hf-rope"].source
            yield Proposal(
                "library hf-rope, polar", polar, source, detail=said, libraries=False, against=spec
            )


def _recipes(view, plane, convention, part, w, resolved, rows: int, ids):
    """A precision recipe's table (transformers' arithmetic with one stage in a half dtype, as
    ports slip), where the table shows the half dtype: its frequencies are that dtype's numbers
    (rope-inv-freq: inv_freq cast to it), fitted as an inv_freq vector of it is; or its values
    are, in a wider file or its own (rope-table: the angles and cos/sin in it, which tell the
    frequencies to about its epsilon), tried as plain and linearly scaled laws at the round
    bases near the frequencies' least-squares one."""
    import numpy as np

    from ....numerics.float32 import round_to

    at = resolved & (w > 0)
    if not at.any():
        return
    # a frequency read from float32 values is good to ~1e-7, from half ones to _RESOLVED
    close = _RESOLVED if view.dtype in _COARSE else 1e-5
    for low in _COARSE:
        grid = round_to(w, low).astype(np.float64)
        tries = []
        if np.all(np.abs(grid - w)[at] <= close * w[at]):
            tries.append(("rope-inv-freq", scalings(low, grid, at, 1.0, "inv_freq", rows, [])))
        if view.dtype == low or _on_grid(plane, low, view.dtype):
            tries.append(("rope-table", _coarse_laws(w, at, low)))
        for stage, fit in ((stage, f) for stage, fits in tries for f in fits if not f.nearest):
            recipe = _law_spec(
                view,
                fit,
                convention,
                part,
                ids,
                variant=stage,
                compute_dtype=low,
                dtype=view.dtype,
            )
            said = f"recipe {stage} ({low}){_said(fit, len(w))}"
            yield Proposal(said, recipe, FAMILY.variants[stage].source, now=True)


def _law_spec(view, fit, convention: str, part: str, ids, **more):
    """The spec of a fitted law's table laid out as the one read (exact, in float64, unless
    `more` says otherwise); None where no table is made so."""
    laid = dict(convention=convention, part=part, ids=ids)
    return view.spec(
        family=FAMILY.name,
        d_model=fit.dim,
        seq_len=view.length,
        base=fit.base,
        rope=fit.rope,
        **{**laid, **more},
    )


def _coarse_laws(w, at, low: str) -> list[Fit]:
    """Plain and linearly scaled (where w_0 is not 1) laws at the round bases near the base of
    frequencies read from angles rounded to `low`: the two highest frequencies' (read from
    the first rows, where the angles are still small) and the least-squares one (8 bits read
    slow frequencies 10% off: the common bases within 25% of either too)."""
    n = len(w)
    estimates = [rotary_dims(w, at, low)[0][1]]
    if n > 1 and at[1] and w[0] > w[1] > 0:
        estimates.append(float((w[0] / w[1]) ** n))
    bases = [b for e in estimates for b in plausible_bases(e)]
    bases += [b for b in BASES if any(abs(math.log(b / e)) < 0.25 for e in estimates)]
    factors = {float(f"{1 / w[0]:.{k}g}") for k in (1, 2)} - {1.0}
    scaled = [{}] + [{"rope_type": "linear", "factor": f} for f in sorted(factors)]
    return [Fit(2 * n, b, rope) for b in dict.fromkeys(bases) for rope in scaled]


def _positions_slips(view, spec, said: str, lows=_COARSE):
    """transformers' table with its position ids in a half dtype (rope-positions), where the
    table is longer than the whole numbers that dtype holds (256 in bfloat16, 2048 in
    float16): scored at once even on a long table's sample, since whether it is the table
    says which of the reading's notes are true of it."""
    for low in lows:
        if view.length - 1 > 2 ** FORMATS[low].precision:
            recipe = changed(spec, variant="rope-positions", compute_dtype=low, dtype=view.dtype)
            source = FAMILY.variants["rope-positions"].source
            yield Proposal(f"recipe rope-positions ({low}){said}", recipe, source, now=True)


def _positions_refit(view, plane, convention, part, table, lead: int, ids):
    """rope-positions where the ids a half dtype rounds make the whole table fit no law: the
    frequencies read again from the rows before the first position it rounds (257 in
    bfloat16, 2049 in float16), and each law they fit tried with its ids in that dtype."""
    for low in _COARSE:
        whole = 2 ** FORMATS[low].precision + 1
        if len(plane) <= whole:
            continue
        head = plane[:whole]
        readings = _refined(
            head, [r for r in _readings(head, False, []) if r[0] == part], view.dtype
        )
        for _, attention, w, resolved in readings:
            rows = view.length - lead

            def search(base, head=head, attention=attention, rows=rows):  # LongRoPE's factors,
                if view.dtype != "float32":  # of a float32 table's head only (a half table's
                    return []  # take minutes to read, every row rounded to its few bits)
                return _factors(view, head, convention, part, attention, base, rows, [])

            for fit in scalings(view.dtype, w, resolved, attention, part, rows, [], search):
                spec = None if fit.nearest else _law_spec(view, fit, convention, table, ids)
                if spec is not None:
                    yield from _positions_slips(view, spec, _said(fit, len(w)), (low,))


def _factors(*args) -> list:
    """What each READ reader reads from a plane in each library's arithmetic (LongRoPE's
    factors): (view, plane, convention, part, attention, base, length, notes)."""
    return [found for reader in READ.values() for found in reader(*args)]


def _on_grid(plane, low: str, dtype: str) -> bool:
    """Whether every value of a table of `dtype` is a number of the narrower dtype `low`."""
    import numpy as np

    from ....numerics.float32 import round_to

    wider = FORMATS[dtype].precision > FORMATS[low].precision
    return wider and bool(np.array_equal(round_to(plane, low).astype(np.float64), plane))


def _said(fit, n: int) -> str:
    """What a candidate's name says of its fit beyond its spec's settings: how its base is
    made (NTK-by-base), and a rotary dim other than the 2n its n frequencies fill."""
    law = f" ({fit.law})" if fit.law else ""
    return law + (f", rotary dim {fit.dim} for {n} frequencies" if fit.dim != 2 * n else "")


def _wide(view, spec, said: str):
    """Of a float64 table, the library variants that compute in float64 where asked (diffusers'
    freqs_dtype, kept as complex128; the scorer tries those that do by default), and, where
    every value is a float32 one, those whose float32 table it is (a float64 frequency law's
    table cast to float32: the scorer's float32 reading would name the exact one first)."""
    if view.dtype != "float64":
        return
    for name, found in FAMILY.variants.items():
        if found.kind != "library" or spec.convention not in found.conventions:
            continue
        for wide in ({}, {"freqs_dtype": "float64"}):
            library = changed(spec, variant=name, dtype="float64", **wide)
            if library is not None and (
                bool(wide) if found.ends_float64(library) else view.float32_numbers
            ):
                yield Proposal(f"library {name}", library, found.source, detail=said, against=spec)


def _constant(plane, w, resolved, notes: list) -> None:
    """A note where some columns hold one value at every position while lower frequencies (the
    columns after them) turn: a zero frequency amid the power law, which no rope type has (a
    zero tail, as proportional RoPE's, leaves nothing turning after it)."""
    import numpy as np

    still = np.all(plane == plane[:1], axis=0)
    turning = np.flatnonzero(resolved)
    if not len(turning):
        return
    inside = np.flatnonzero(still[: turning[-1]])
    if len(inside):
        columns = ", ".join(str(int(i)) for i in inside[:8]) + (" ..." if len(inside) > 8 else "")
        holds = "holds" if len(inside) == 1 else "hold"
        notes.append(
            f"{len(inside)} of its {len(w)} frequency columns ({columns}) {holds} one value at "
            "every position while columns of lower frequencies after them turn: a zero frequency amid "
            "a power law, which no rope type has"
        )
