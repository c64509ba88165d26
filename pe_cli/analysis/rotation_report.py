"""What a rotation read back from activations is: the table its angles make, named as
`compare FILE` names tables; whether the named library's table, applied to BEFORE in the dump's
dtype, gives AFTER bit for bit; and findings, each a plain sentence with a code a test can hold.

A table named here is named from the angles, and the angles of a dump carry its rounding: its
candidates say which table the frequencies are, never that the dump is that table's bits. A dump's
table is named only where its exact angles are within the bound of the angles read back (the
dump's rounding, and the float32 arithmetic of p w the op computes its angles in): "within the
bound". Only the rebuild (the library's table applied to BEFORE) can say bit for bit, and says it
only where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..spec import TableSpec
from .rotation import (  # noqa: F401
    Activations,
    Finding,
    Reading,
    planes,
    read_rotation,
    whole_offset,
    wrapped,
)
from .rotation_rebuild import Rebuilt, factor_of, rebuild

SAMPLE_ROWS = 4096  # the rows of the named table identification reads
# The error an op's own float32 arithmetic puts into the angle p w_k of pair k, relative to the
# angle: inv_freq's power (ggml's theta_scale^k: k products), a scaling's blend, the product by
# p, each rounded to float32 (2^-24 relative). 8 + k units: measured at 4096 positions, head
# dim 128, transformers' llama3 and YaRN stay under 2, MLX's fast rope 14, ggml's 41 at pair
# 63. Over thousands of positions it passes a float32 dump's own rounding: the exact table's
# angles are held to the dump's bound past this.
ANGLE_UNITS = 8


@dataclass(frozen=True)
class Expected:
    """What a model's layer applies (--rope-config MODEL --layer N), to set the reading against."""

    label: str  # "llama layer 3"
    head_dim: int
    spec: TableSpec | None  # its cos table, convention single; None where it rotates nothing
    pairing: str | None
    rotary_dims: int
    rates: np.ndarray | None  # each pair's angular frequency, from the exact Decimals
    factor: float  # its attention factor: the amplitude of its cos and sin
    why: str | None  # why it rotates nothing
    command: str | None  # the generate command of its table
    axes: str | None = None  # its layout of several position axes (at the rows' ids), if any
    sections: tuple = ()  # its mrope_section there


@dataclass(frozen=True)
class Gap:
    """The angles read back against the named table's exact angles."""

    max_abs: float  # radians, the largest over every position and turning pair
    where: str  # "position 7, dims 3 and 35"
    # the largest of |gap| less the float32 arithmetic's share of each angle: within the dump's
    # bound, the read angles are the table's
    excess: float = 0.0


@dataclass
class Report:
    source: str  # "AFTER.npy against BEFORE.npy", or the op probed
    reading: Reading
    identification: object | None  # compare.Identification of the angles' table
    findings: list[Finding]
    rebuilt: Rebuilt | None
    expected: Expected | None
    passed: str | None  # what the dims that do not turn are
    offset: int = 0  # the positions the angles are read at, less the positions given
    exact: bool = False  # the cos read back is the op's own bits (probe's unit vectors)
    labels: tuple[str, str] = ("BEFORE", "AFTER")  # what the two sides are called
    gap: Gap | None = None  # how far the angles are from the named table's exact ones
    notes: list[str] = field(default_factory=list)
    laid: object | None = None  # rotation_axes.Laid: the layout of several position axes
    # where the table is named from a dump's angles (not the op's own cos): the candidate whose
    # exact angles are within the bound of the angles read back, else None
    by_angles: bool = False
    within: object | None = None

    @property
    def table_spec(self) -> TableSpec | None:
        """The spec of the table the op applies: the layout's where the rows have several
        position axes, else the named one's."""
        if self.laid is not None:
            return self.laid.spec
        if self.reading.axes is not None:  # the 1-D table of its frequencies is not it
            return None
        return None if self.named is None else self.named.spec

    @property
    def pairing(self) -> str | None:
        return self.reading.pairing

    @property
    def rotary_dims(self) -> list[int]:
        return self.reading.rotary_dims

    @property
    def candidates(self) -> list:
        return [] if self.identification is None else self.identification.candidates

    @property
    def named(self):
        """The table the rotation is: of the op's own cos, the best candidate where it explains
        it; of a dump's angles, the candidate whose angles are within the bound of them."""
        found = self.identification
        if found is None:
            return None
        if self.by_angles:
            return self.within
        return found.best if found.explained else None

    @property
    def bound(self) -> float:
        return self.reading.act.bound

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_json(self):
        named = self.named
        rebuilt = self.rebuilt
        return {
            "source": self.source,
            "dtype": self.reading.act.dtype,
            "pairing": self.pairing,
            "written": None
            if self.reading.fit is None
            else self.reading.fit.pairing.written or None,
            "rotary_dims": self.rotary_dims,
            "passed_through": self.passed,
            "scale": None if self.reading.fit is None else self.reading.fit.scale,
            "angle_error_bound": self.bound,
            "exact": self.exact,
            "command": None if named is None else named.command,
            # named from a dump's angles, within the bound (never bit for bit), or from the
            # op's own cos
            "named_by": None if named is None else ("angles" if self.by_angles else "own-cos"),
            "rebuilt": None if rebuilt is None else rebuilt.__dict__,
            "angle_gap": None if self.gap is None else self.gap.__dict__,
            # what identification was handed: the candidates' figures are of that table
            "candidates_of": None
            if self.identification is None
            else self.identification.target.label,
            "candidates": [c.to_json() for c in self.candidates],
            "findings": [f.to_json() for f in self.findings],
            "expected": None
            if self.expected is None
            else {
                "model": self.expected.label,
                "pairing": self.expected.pairing,
                "rotary_dims": self.expected.rotary_dims,
                "command": self.expected.command,
            },
            "axes": None if self.laid is None else self.laid.to_json(),
            "notes": self.notes,
        }


# ---------------------------------------------------------------------------------------------


def report(
    act: Activations,
    source: str,
    expected: Expected | None = None,
    exact: bool = False,
    labels: tuple[str, str] = ("BEFORE", "AFTER"),
    rebuilt: bool = True,
) -> Report:
    """Read the rotation, name the table its angles make, and say what differs (from the
    expected layer's where one is given); with `rebuilt` False, no library rebuild. A long
    dump is read once (rotation_stream): its first rows name the table ahead of the pass."""
    from .rotation_stream import Ahead, first_rows

    first = None if exact else first_rows(act, SAMPLE_ROWS)
    # the table named from the first rows, ahead of the pass the rebuild then rides on
    ahead = (
        None if first is None else Ahead(report(first, source, labels=labels, rebuilt=False), act)
    )
    reading = read_rotation(act, None if ahead is None else ahead.tap)
    found = Report(source, reading, None, [], None, expected, None, exact=exact, labels=labels)
    if reading.fit is None:
        widths = ", ".join(
            f"{f.pairing.name} over {f.pairing.width} dims {f.misfit:.2g}" for f in reading.tried
        )
        found.findings.append(
            Finding(
                "not-a-rotation",
                "no pairing of dims turns BEFORE into AFTER: the pairs' lengths change "
                f"(misfit, relative: {widths})",
            )
        )
        return found
    if reading.turning is not None and not len(reading.turning):
        found.findings.append(Finding("none", "no rotation: AFTER is BEFORE at every position"))
    found.passed = _passed(reading)
    if len(reading.turning):
        from . import rotation_axes

        several = act.axes_differ
        if several:  # each pair's axis first: its line in that axis's positions
            found.findings += rotation_axes.read(reading)
        else:
            found.offset, said = _offset(reading)
            found.findings += said
            if act.ids is not None:
                found.notes.append(rotation_axes.SAME_AXES)
        said = None if ahead is None else ahead.identification(reading, found.offset)
        within = None if said is None else _within(reading, found.offset, said)
        if (
            within is not None
            and within.candidate is not None
            and within.candidate is ahead.first.within
        ):
            found.identification = said  # the first rows' name holds over the whole dump
        else:
            found.identification, within = _name(reading, found.offset, exact and not several)
        if within is not None:  # named from the dump's angles: within the bound, or not at all
            found.by_angles, found.within, found.gap = True, within.candidate, within.gap
            found.notes += [within.note] if within.note else []
        else:
            found.gap = _gap(reading, found.offset, found.named)
        # an attention factor is no finding where the table named or expected holds it
        held = [] if found.named is None else [factor_of(found.named.spec)]
        held += [expected.factor] if expected is not None and expected.spec is not None else []
        found.findings += _own_findings(reading, held)
        if expected is None:  # against a model, its rates say it of the model's own table
            found.findings += _twice(reading)
        if several and found.named is not None:
            found.laid, note = rotation_axes.laid_out(found)
            found.notes += [note] if note else []
        if rebuilt:
            found.rebuilt = rebuild(found) if ahead is None else ahead.rebuilt(found)
        if found.laid is not None:
            rotation_axes.settle(found)
    if expected is not None:
        found.findings += _against(found, expected)
    codes = {}
    for finding in found.findings:  # one sentence a kind: the reading's own comes first
        codes.setdefault(finding.code, finding)
    found.findings = list(codes.values())
    return found


def _passed(reading: Reading) -> str | None:
    """What the dims that do not turn are: a partial-rotary tail past the rotary dim, or pairs
    inside it whose angle is 0 at every position (proportional RoPE's zero frequencies)."""
    fit, dim = reading.fit, reading.act.head_dim
    said = []
    if fit.pairing.width < dim:
        said.append(
            f"dims {fit.pairing.width}..{dim - 1} pass through (a partial-rotary tail: "
            f"rotary dim {fit.pairing.width} of {dim})"
        )
    still = sorted(set(range(fit.pairing.pairs)) - set(int(k) for k in reading.turning))
    if still and len(reading.turning):
        dims = sorted(int(d) for k in still for d in (fit.pairing.first[k], fit.pairing.second[k]))
        said.append(
            f"{len(still)} of {fit.pairing.pairs} pairs turn by 0 at every position "
            f"(dims {_runs(dims)}: zero-frequency pairs, as proportional RoPE's)"
        )
    return "; ".join(said) or None


def _runs(values: list[int]) -> str:
    from ..core.names import compact

    return compact(values)


def _offset(reading: Reading) -> tuple[int, list[Finding]]:
    """Where each pair's angle at position 0 is not 0: the positions are offset by the integer
    that explains every pair's phase, found from the slowest turning pair."""
    line = reading.line
    if line is None:
        return 0, []
    turning = reading.turning
    rates, phases = line.rates[turning], line.phases[turning]
    bound = max(4 * reading.act.bound, 2 * line.worst)
    if np.max(np.abs(np.angle(np.exp(1j * phases)))) <= bound:
        return 0, []
    offset = whole_offset(rates, phases, len(reading.act.positions))
    left = np.angle(np.exp(1j * (phases - offset * rates)))
    if offset == 0 or np.max(np.abs(left)) > bound:
        return 0, [
            Finding(
                "phase",
                "the angles at position 0 are not 0 and no whole offset of the positions "
                f"explains them (up to {np.max(np.abs(phases)):.3g} rad)",
            )
        ]
    first = int(reading.act.positions[0])
    return offset, [
        Finding(
            "offset",
            f"positions offset by {offset:+d}: the rotation at position {first} is the "
            f"table's at position {first + offset}",
        )
    ]


def _own_findings(reading: Reading, held: list[float]) -> list[Finding]:
    """What the reading shows on its own: a scale (not one of the factors `held`), turning
    backwards, heads apart."""
    said = []
    fit, act = reading.fit, reading.act
    if all(abs(fit.scale - f) > 8 * act.unit for f in (1.0, *held)):
        said.append(
            Finding(
                "scale",
                f"every pair is also scaled by {fit.scale:.7g} (an attention factor applied "
                "with the rotation, as YaRN's folded into q)",
            )
        )
    line = reading.line
    if line is not None:
        rates = line.rates[reading.turning]
        if np.all(rates < 0):
            said.append(
                Finding(
                    "negated",
                    "rotated by -theta: every pair turns backwards as position grows "
                    "(sin's sign flipped, or the inverse rotation applied)",
                )
            )
    if reading.heads:
        said.append(
            Finding(
                "heads",
                f"{', '.join(reading.heads)} turn otherwise than the rest, by up to "
                f"{reading.head_worst:.3g} rad",
            )
        )
    return said


# ---------------------------------------------------------------------------------------------
# The table the angles make


def _name(reading: Reading, offset: int, exact: bool):
    """compare FILE's identification of the cos table the angles make, as `--convention
    single` lays it out (one column a pair), and whether it is made of the dump's angles (its
    candidates then named only within the bound: _within). Where the cos read back is the op's
    own (exact, from unit vectors at positions 0, 1, ...) it is handed as it is; else each
    pair's line in position, rebuilt at positions 0.. in float32 (float16 for a half dump),
    whose rounding is what identification allows for."""
    from ..families import lay_out

    positions = reading.act.positions
    p = reading.fit.pairing
    scaled = abs(reading.fit.scale - 1) > 8 * reading.act.unit
    cos = reading.fit.c.real.astype(np.float64)
    own = exact and offset == 0 and np.array_equal(positions, np.arange(len(positions)))
    if own and scaled and np.array_equal(cos.astype(np.float32), cos):
        # a table that holds its attention factor (YaRN's, as transformers folds it into cos
        # and sin) is named as the op applies it, the scale in it
        found = _identified(cos.astype(np.float32), "the op's own cos, its scale in it")
        if found.best is not None and found.best.identical:
            return found, None
    cos = cos / reading.fit.scale if scaled else cos
    kind = None  # the dtype identification reads the table in: the float32 it is held in
    if own and np.array_equal(cos.astype(np.float32), cos):
        table, what = cos.astype(np.float32), "the op's own cos"
        if reading.act.dtype in ("bfloat16", "float16"):  # the op's own half cos, read as such
            kind = reading.act.dtype
    elif reading.line is not None:
        # the factor in the table first, as the exact path names it; where neither table's
        # candidates are within the bound, the one that holds the factor says the nearest
        tried = []
        for amplitude in [_amplitude(reading)] * scaled + [1.0]:
            table, what = _line_table(reading, reading.line.rates, amplitude)
            found = _identified(table, what)
            tried.append((found, _within(reading, offset, found)))
            if tried[-1][1].candidate is not None:
                return tried[-1]
        return tried[0]
    else:
        return None, None
    found = _identified(table, what, kind)
    if own and not (found.best is not None and found.best.identical) and not p.written:
        # a library that lays its table out only in pairs (llama.cpp's) is named from the
        # cos laid out in the pairing the op turns
        laid = _identified(lay_out(table, p.name), f"{what}, laid out in {p.name} pairs", kind)
        if laid.best is not None and laid.best.identical:
            return laid, None
    return found, None


def _amplitude(reading: Reading) -> float:
    """The attention factor the rotation's cos and sin hold, from the pairs that turn through
    a whole turn over the rows: a half dtype rounds a slow pair's cos near the factor alike at
    every position (bfloat16 gives 1.34375 for gpt-oss's 1.346574 at angle 0), so the fit's
    one scale, over every pair, is off by up to a rounding, where a turning pair's roundings
    average out. The fit's scale where no pair turns so far."""
    positions = reading.act.positions
    span = float(positions[-1] - positions[0])
    rates = np.abs(reading.line.rates[reading.turning])
    around = reading.turning[rates * span >= 2 * np.pi]
    if not len(around):
        return reading.fit.scale
    return float(np.mean(np.abs(reading.fit.c[:, around].astype(complex))))


def _line_table(reading: Reading, rates: np.ndarray, amplitude: float = 1.0):
    """The cos table of each pair's line at these rates, at positions 0.., times `amplitude`
    (an attention factor the op's cos holds), and what it is."""
    positions = reading.act.positions
    rates = np.abs(rates)
    rates[np.setdiff1d(np.arange(len(rates)), reading.turning)] = 0.0
    rows = np.arange(min(max(int(positions[-1]) + 1, 16), SAMPLE_ROWS), dtype=np.float64)
    # the rates of a half-precision dump are good to what its rounding leaves: a table in
    # float16 lets identification allow for that (a float32 one would be held to float32's)
    kind = np.float32 if reading.act.dtype in ("float32", "float64") else np.float16
    table = (amplitude * np.cos(np.outer(rows, rates))).astype(kind)
    what = f"each pair's line through its angles, at positions 0.. in {np.dtype(kind).name}"
    return table, what + (f", times {amplitude:.6g}" if amplitude != 1.0 else "")


def _twice(reading: Reading) -> list[Finding]:
    """Angles twice a table's, found without a model: RoPE's fastest pair turns theta^0 = 1 rad
    a position at any base (YaRN, Llama 3 and NTK keep it, linear scaling slows it), so a
    fastest pair at 2 is no RoPE table's; where the angles halved are a named table's, the
    rotation was applied twice, or at twice the positions given (the two read alike)."""
    line = reading.line
    if line is None or not len(reading.turning):
        return []
    fastest = float(np.max(np.abs(line.rates[reading.turning])))
    positions = reading.act.positions
    span = float(positions[-1] - positions[0]) or 1.0
    if abs(fastest - 2) > 8 * (reading.act.bound + line.worst) / span + 4e-5:
        return []
    table, what = _line_table(reading, line.rates / 2)
    halved = _identified(table, f"{what}, halved")
    if not halved.explained:
        return []
    named = halved.best
    return [
        Finding(
            "twice",
            f"rotated twice, or at twice the positions given: every angle is twice those of "
            f"{named.name}, {named.identity} (its fastest pair turns {fastest:.4g} rad a "
            "position; a RoPE table's fastest turns 1 at any base)",
        )
    ]


def _identified(table: np.ndarray, what: str, dtype: str | None = None):
    from .api import _array
    from .compare import DEFAULT_THRESHOLD, Identification
    from .identify import identify

    target = _array(table)
    target.label = what
    if dtype is not None:  # values of a narrower dtype, held in float32
        target.dtype = dtype
    return Identification(target, identify(target, DEFAULT_THRESHOLD))


NEAREST = 8  # the candidates a dump's angles are set against, best first


class Within(NamedTuple):
    """A dump's table named by its angles: the candidate within the bound and its gap, or
    none and a note of the nearest where identification would have named it."""

    candidate: object | None
    gap: Gap | None
    note: str | None = None


def _within(reading: Reading, offset: int, identification) -> Within:
    """Of a dump's candidates (the best NEAREST), the first whose exact angles are within the
    bound of the angles read back (Gap.excess: past what float32 arithmetic of p w leaves,
    the dump's rounding at most). A half dump's values match a candidate within a margin that
    grows with the positions (match_margin: 0.1 for bfloat16 over 2048), wide enough for a
    port whose angles are another table's: the angles hold it to the rounding alone."""
    bound = reading.act.bound
    nearest = None
    for candidate in identification.candidates[:NEAREST]:
        gap = _gap(reading, offset, candidate)
        if gap is None:
            continue
        if gap.excess <= bound:
            return Within(candidate, gap)
        nearest = nearest or (candidate, gap)
    if nearest is None or not identification.explained:
        return Within(None, None)
    candidate, gap = nearest
    return Within(
        None,
        None,
        f"nearest: {candidate.name}, {candidate.identity}; its angles are up to "
        f"{gap.max_abs:.2g} rad from those read back (at {gap.where}), past the {bound:.2g} "
        f"rad {reading.act.dtype}'s rounding leaves: not named",
    )


def _gap(reading: Reading, offset: int, named) -> Gap | None:
    """The angles read back against the `named` candidate's exact ones (from its frequencies
    in Decimal): _angle_gap."""
    from ..families import FAMILIES

    if named is None:
        return None
    exact = FAMILIES[named.spec.family].frequencies(named.spec)
    if exact is None:
        return None
    return _angle_gap(reading, offset, np.array([float(w) for w in exact.values]))


def _angle_gap(reading: Reading, offset: int, rates: np.ndarray) -> Gap | None:
    """The largest difference between the angles read back and (position + offset) w_k at
    these exact rates (turned backwards where the reading is), where, and what is left past
    float32's arithmetic of each angle; None where the rates are of another number of pairs.
    Rows at several position axes: each pair at the axis, of those that explain its angles,
    they are nearest on (a slow pair's angles fit several within a half dtype's rounding)."""
    if len(rates) != reading.fit.pairing.pairs:
        return None
    turning = reading.turning
    if reading.line is not None and np.all(reading.line.rates[turning] < 0):  # -theta
        rates = -rates
    if reading.axes is not None:
        tried = [ids.astype(np.float64) for ids in reading.axes.shifted(reading.act.ids)]
        allowed = [reading.axes.follows[k] or {0} for k in turning]
    else:
        tried, allowed = [(reading.act.positions + offset).astype(np.float64)], [{0}] * len(turning)
    arithmetic = (ANGLE_UNITS + turning) * 2.0**-24  # each pair's share, relative
    shape = (len(tried), len(turning))
    largest, row, excess = np.full(shape, -1.0), np.zeros(shape, int), np.full(shape, np.inf)
    for a, positions in enumerate(tried):
        if not any(a in each for each in allowed):
            continue
        excess[a] = -np.inf
        for start in range(0, len(positions), 8192):  # in slices of rows: a long dump's are many
            wanted = np.outer(positions[start : start + 8192], rates[turning])
            gaps = np.abs(wrapped(reading.angles[start : start + 8192, turning] - wanted))
            excess[a] = np.maximum(excess[a], np.max(gaps - arithmetic * np.abs(wanted), axis=0))
            at = np.argmax(gaps, axis=0)
            top = gaps[at, np.arange(len(turning))]
            better = top > largest[a]
            largest[a, better], row[a, better] = top[better], start + at[better]
    held = np.array([[a in each for each in allowed] for a in range(len(tried))])
    axis = np.argmin(np.where(held, excess, np.inf), axis=0)  # each pair's nearest axis
    pairs = np.arange(len(turning))
    worst = int(np.argmax(largest[axis, pairs]))
    k, p = int(turning[worst]), reading.fit.pairing
    first = int(reading.act.positions[row[axis[worst], worst]])
    where = f"position {first}, dims {int(p.first[k])} and {int(p.second[k])}"
    return Gap(float(largest[axis[worst], worst]), where, float(np.max(excess[axis, pairs])))


# ---------------------------------------------------------------------------------------------
# Against what a model's layer applies


def expected_of(rope_config: str, layer: int | None, rows: int, ids=None) -> Expected:
    """What --rope-config MODEL [--layer N] rotates by: its table's spec and exact frequencies,
    the pairing its attention applies, its rotary dims; or why it rotates nothing. With `ids`
    ((axes, rows): the rows' positions on several axes), its table at those tokens (the
    model's M-RoPE layout and sections)."""
    from ..families import FAMILIES
    from ..families.positions import inline_runs
    from ..options import Options

    options = Options(rope_config=rope_config, layer=layer)
    if ids is not None and np.any(ids != ids[:1]):
        options = options.but(ids=inline_runs(np.asarray(ids).T))
        rows = ids.shape[1]
    model = options.model or {}
    index = 0 if layer is None else layer
    label = f"{model.get('model_type', rope_config)} layer {index}"
    treatments = model.get("treatments", {})
    names = model.get("layers", [])
    if names and index < len(names) and names[index] is None:
        why = next((u["why"] for u in model.get("unrotated", []) if index in u["layers"]), None)
        head_dim = next(iter(treatments.values()), {}).get("head_dim", 0)
        return Expected(label, head_dim, None, None, 0, None, 1.0, why or "no rotation", None)
    treatment = treatments.get(names[index]) if names and index < len(names) else None
    spec = options.spec(seq_len=rows)
    family = FAMILIES[spec.family]
    spec = family.rotation_planes(spec, rows)[0]  # its cos, one column a pair
    exact = family.frequencies(spec)
    rates = np.array([float(w) for w in exact.values])
    pairing = treatment["applied_pairing"] if treatment else None
    dims = treatment["rotary_dims"] if treatment else 2 * int(np.count_nonzero(rates))
    factor = treatment["attention_factor"] if treatment else float(exact.factor)
    command = treatment["command"] if treatment else None
    head_dim = treatment["head_dim"] if treatment else spec.d_model
    sections = tuple(int(s) for s in dict(spec.rope).get("mrope_section", ()))
    return Expected(
        label, head_dim, spec, pairing, dims, rates, factor, None, command, spec.axes, sections
    )


def _against(found: Report, expected: Expected) -> list[Finding]:
    reading = found.reading
    turning = reading.turning if reading.turning is not None else []
    if expected.spec is None:
        if len(turning):
            return [
                Finding(
                    "nope-rotated",
                    f"{expected.label} applies no rotation ({expected.why}), and these "
                    f"activations are rotated ({len(reading.rotary_dims)} dims turn)",
                )
            ]
        return []
    said = []
    if reading.fit is None or not len(turning):
        return [
            Finding(
                "not-rotated",
                f"{expected.label} rotates {expected.rotary_dims} dims in "
                f"{expected.pairing} pairing; these activations are not rotated",
            )
        ]
    if expected.pairing is not None and reading.pairing != expected.pairing:
        said.append(
            Finding(
                "pairing",
                f"paired {reading.pairing}; {expected.label} applies {expected.pairing} pairing",
            )
        )
    theirs = _turning_dims(expected, reading.pairing)
    unseen = sorted(set(theirs) - set(reading.rotary_dims))
    if unseen and set(reading.rotary_dims) <= set(theirs) and set(unseen) <= _too_slow(found):
        from ..core.names import compact

        found.notes.append(
            f"dims {compact(unseen)} turn by less than {reading.act.dtype}'s rounding at these "
            f"positions in {expected.label}: not seen turning here"
        )
    elif reading.rotary_dims != theirs:
        from ..core.names import compact

        said.append(
            Finding(
                "rotary-dims",
                f"turns dims {compact(reading.rotary_dims)}; {expected.label} turns dims "
                f"{compact(theirs)}",
            )
        )
    if reading.line is not None and expected.rates is not None:
        said += _rates(reading, expected)
    if found.laid is not None or reading.axes is not None:
        from .rotation_axes import against

        said += against(found, expected)
    if not said and not found.findings and expected.rates is not None:
        said += _angles_apart(found, expected)
    if abs(reading.fit.scale - expected.factor) > 8 * reading.act.unit:
        said.append(
            Finding(
                "scale-differs",
                f"scaled by {reading.fit.scale:.7g}; {expected.label}'s attention factor is "
                f"{expected.factor:.7g}",
            )
        )
    return said


def _angles_apart(found: Report, expected: Expected) -> list[Finding]:
    """Angles past the bound of the model's exact ones, where no rate, pairing or section
    differs enough to say so: a scaling's setting a little off (YaRN's beta_fast 32.1 for 32
    moves a few pairs' rates by under 1e-3, their angles by 0.06 rad over 2048 positions)."""
    reading = found.reading
    gap = _angle_gap(reading, found.offset, expected.rates)
    bound = reading.act.bound
    if gap is None or gap.excess <= bound:
        return []
    return [
        Finding(
            "angles",
            f"its angles are up to {gap.max_abs:.2g} rad from {expected.label}'s exact ones "
            f"(at {gap.where}), past the {bound:.2g} rad {reading.act.dtype}'s rounding "
            "leaves: another table, near the model's",
        )
    ]


def _too_slow(found: Report) -> set[int]:
    """The model's dims whose pair turns, at the largest position of these rows, by no more
    than twice the angle the dump's rounding hides: AFTER may hold BEFORE's own values there."""
    from ..families import rotary_pairs

    expected, act = found.expected, found.reading.act
    largest = float(np.max(np.abs(act.ids if act.ids is not None else act.positions)))
    first, second = rotary_pairs(2 * len(expected.rates), expected.pairing or found.pairing)
    slow = (expected.rates != 0) & (np.abs(expected.rates) * largest <= 2 * act.bound)
    return {int(d) for d in (*first[slow], *second[slow])}


def _turning_dims(expected: Expected, pairing: str) -> list[int]:
    """The dims the model's layer turns: its pairs of nonzero frequency, in its pairing."""
    from ..families import rotary_pairs

    first, second = rotary_pairs(2 * len(expected.rates), expected.pairing or pairing)
    moving = expected.rates != 0
    return sorted(int(d) for d in (*first[moving], *second[moving]))


def _rates(reading: Reading, expected: Expected) -> list[Finding]:
    """Each pair's rate against the model's, pair for pair in the order the pairing reads
    them: twice, negated, or other frequencies."""
    rates = reading.line.rates
    model = expected.rates
    if len(model) != len(rates):
        return [
            Finding(
                "frequencies",
                f"{len(rates)} pairs; {expected.label}'s table has {len(model)} frequencies",
            )
        ]
    moving = np.flatnonzero(model != 0)
    if not len(moving):
        return []
    # a rate read from a line over P positions is good to about the angles' error over P
    span = float(reading.act.positions[-1] - reading.act.positions[0]) or 1.0
    slack = 4 * (reading.act.bound + reading.line.worst) / span
    for factor, code, text in (
        (1.0, None, None),
        (2.0, "twice", "rotated twice: every angle is twice {model}'s"),
        (-1.0, "negated", "rotated by -theta: every angle is minus {model}'s"),
        (-2.0, "twice", "rotated twice by -theta: every angle is -2 times {model}'s"),
    ):
        want = factor * model[moving]
        if np.all(np.abs(rates[moving] - want) <= slack + 1e-5 * np.abs(want)):
            return [] if code is None else [Finding(code, text.format(model=expected.label))]
    allowed = slack + 1e-5 * np.abs(model[moving])
    off = moving[np.abs(rates[moving] - model[moving]) > allowed]
    # the pair furthest past what its reading allows (a slow pair's rate is read loosely)
    worst = moving[int(np.argmax(np.abs(rates[moving] - model[moving]) / allowed))]
    return [
        Finding(
            "frequencies",
            f"{len(off)} of {len(moving)} pairs turn at other rates than {expected.label}'s "
            f"(pair {worst}: {rates[worst]:.6g} rad a position, the model's "
            f"{model[worst]:.6g})",
        )
    ]
