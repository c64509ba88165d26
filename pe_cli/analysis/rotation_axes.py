"""A rotation of tokens at several positions (M-RoPE's (t, h, w)) read back: which position
axis drives each pair of dims, and the layout and sections that put them there.

M-RoPE turns pair k of a token at positions (t, h, w) by p_a(k) w_k: one frequency a pair, as
plain RoPE, but each pair reads the position on its own axis a(k). A pair follows axis a where
every token at one position on a is turned by one angle, and those angles lie on the line w_k p
through 0. Text tokens sit at (p, p, p), where every axis explains every pair: only tokens whose
axes differ (an image's or a video's) tell the axes apart. A pair slow enough that its angles at
the positions given stay within their rounding is explained by every axis too: it is read as
allowing each, and the sections are claimed only where one layout and one split fit all pairs.

Nothing here prints; rotation_report.py says it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

AXES = ("t", "h", "w")


@dataclass
class AxesReading:
    follows: list[set[int] | None]  # each pair: the axes whose positions explain its angles
    #                                 (None: a pair that does not turn)
    rates: np.ndarray  # each pair's w_k (radians per position) on its axis (the first allowed)
    phases: np.ndarray  # each pair's angle at position 0 of its axis
    worst: float  # the largest angle (radians) a pair's line leaves, over its axis's tokens
    # each axis's whole offset: the op turned by the ids given plus it (0: as given, or no
    # pair follows the axis alone, so it is not read)
    offsets: np.ndarray | None = None

    def shifted(self, ids: np.ndarray) -> np.ndarray:
        """The ids the op turned by: those given, each axis moved by its offset."""
        return ids if self.offsets is None else ids + self.offsets[:, None]

    @property
    def unread(self) -> list[int]:
        """Pairs that turn and that no one axis explains."""
        return [k for k, allowed in enumerate(self.follows) if allowed is not None and not allowed]

    def axis_of(self) -> np.ndarray:
        """Each pair's axis (the first allowed; 0 where none: a pair that does not turn)."""
        return np.array([min(allowed) if allowed else 0 for allowed in self.follows])

    def said(self) -> str:
        """Which pairs follow which axis, as runs: 'pairs 0-15 t, 16-39 h, 40-63 w'."""
        from ..core.names import compact

        parts = []
        for a, name in enumerate(AXES):
            pairs = [k for k, allowed in enumerate(self.follows) if allowed == {a}]
            if pairs:
                parts.append(f"{name} {compact(pairs)}")
        shared = [k for k, allowed in enumerate(self.follows) if allowed and len(allowed) > 1]
        if shared:
            parts.append(f"any axis {compact(shared)} (too slow here to tell)")
        return "pairs on " + "; ".join(parts)


def read_axes(angles: np.ndarray, ids: np.ndarray, turning: np.ndarray, unit: float, bound: float):
    """Each turning pair's axes and rate, from its angles (rows, pairs) at the rows' `ids`
    (axes, rows). A token's angle is allowed `bound` (the dump's rounding) and, where the op
    computes p w in its own dtype of unit roundoff `unit`, 8 units of the angle itself."""
    pairs = angles.shape[1]
    follows: list[set[int] | None] = [None] * pairs
    for k in turning:
        follows[k] = set()
    rates, phases, worst = np.zeros(pairs), np.zeros(pairs), 0.0
    fits = {}
    for a in range(len(ids)):
        fits[a] = _along(angles[:, turning], ids[a], unit, bound)
    for j, k in enumerate(turning):
        for a, fit in fits.items():
            if fit[0][j]:
                follows[k].add(a)
        chosen = min(follows[k]) if follows[k] else None
        if chosen is not None:
            ok, rate, phase, left = fits[chosen]
            rates[k], phases[k] = rate[j], phase[j]
            worst = max(worst, float(left[j]))
    return AxesReading(follows, rates, phases, worst)


def _along(angles: np.ndarray, positions: np.ndarray, unit: float, bound: float):
    """Whether each pair's angles are a line in these positions: (each pair's yes or no, rate,
    phase, largest miss). Tokens at one position must share one angle; the rate is read from
    the nearest positions (turning less than pi between them) and refined over all."""
    count = angles.shape[1]
    values, group = np.unique(positions, return_inverse=True)
    if len(values) < 2:
        return np.zeros(count, bool), np.zeros(count), np.zeros(count), np.full(count, np.inf)
    turns = np.exp(1j * angles)
    sums = np.zeros((len(values), count), complex)
    np.add.at(sums, group, turns)
    mean = np.angle(sums)  # each position's angle, (values, pairs)
    spread = np.abs(_wrap(angles - mean[group]))
    steps = np.diff(values)
    near = steps == steps.min()
    rate = np.mean(_wrap(np.diff(mean, axis=0)[near]) / steps[near, None], axis=0)
    unwrapped = rate * values[:, None] + _wrap(mean - rate * values[:, None])
    centred = values - values.mean()
    rate = centred @ (unwrapped - unwrapped.mean(axis=0)) / float(centred @ centred)
    phase = unwrapped.mean(axis=0) - rate * values.mean()
    miss = np.abs(_wrap(mean - rate * values[:, None] - phase))
    allowed = bound + 8 * unit * np.abs(rate * values[:, None])
    ok = np.all(miss <= allowed, axis=0) & np.all(spread <= allowed[group], axis=0)
    left = np.maximum(miss.max(axis=0), spread.max(axis=0))
    return ok, rate, phase, left


def _wrap(angles):
    return np.angle(np.exp(1j * angles))


SAME_AXES = (
    "every row's position axes are equal (text tokens at (p, p, p)): M-RoPE turns them as "
    "plain RoPE does, so which axis drives each pair, and the sections, cannot be read here"
)


@dataclass
class Laid:
    """The layout of several position axes the rotation is, at the rows' ids."""

    spec: object  # its table's spec (cos, --rope-axes, mrope_section, --ids)
    summary: str  # the layout's one line
    said: str  # which pairs follow which axis
    identical: bool = False  # the op's own cos is this table's bits (probe's unit vectors)

    @property
    def sections(self) -> tuple[int, ...]:
        return tuple(int(s) for s in dict(self.spec.rope).get("mrope_section", ()))

    @property
    def command(self) -> str:
        from ..spec import generate_command

        return generate_command(self.spec)

    def to_json(self):
        return {
            "layout": self.spec.axes,
            "sections": list(self.sections),
            "follows": self.said,
            "command": self.command,
        }


def read(reading) -> list:
    """Each turning pair's axis and its line there, set on the reading (its `axes`, and its
    `line` of each pair's rate, which names the frequencies); findings where a pair follows no
    one axis, or where its angle at position 0 is not 0."""
    from .rotation import Finding, Line

    act = reading.act
    found = read_axes(reading.angles, act.ids, reading.turning, act.unit, 4 * act.bound)
    reading.axes = found
    reading.line = Line(found.rates, found.phases, found.worst)
    said = []
    if found.unread:
        from ..core.names import compact

        said.append(
            Finding(
                "axes",
                f"pairs {compact(found.unread)} turn by angles that no one position axis "
                "explains (each token's angle is not its position on t, h or w times one rate)",
            )
        )
    turning = reading.turning
    phases = found.phases[turning]
    limit = max(4 * act.bound, 2 * found.worst)
    found.offsets, told, explained = _offsets(found, act.ids, turning, limit)
    if np.any(found.offsets):
        said.append(Finding("offset", _offset_said(found.offsets, told)))
    if not explained:
        said.append(
            Finding(
                "phase",
                "the angles at position 0 of each pair's axis are not 0 and no whole offset of "
                f"that axis's positions explains them (up to {np.max(np.abs(phases)):.3g} rad)",
            )
        )
    return said


def _offsets(found: AxesReading, ids: np.ndarray, turning, limit: float):
    """Each axis's whole offset o_a, from the pairs that follow it alone: they turn by
    (p_a + o_a) w_k, so their angles at p_a = 0 are o_a w_k. (offsets, the axes read: those
    some pair follows alone, whether every such pair's phase is explained.) A pair several
    axes explain (too slow to tell them apart) turns by less than the rounding over any
    offset one of them finds, so tells nothing of it."""
    from .rotation import whole_offset

    offsets, told, explained = np.zeros(len(ids), np.int64), [], True
    for a in range(len(ids)):
        own = np.array([k for k in turning if found.follows[k] == {a}], dtype=int)
        if not len(own):
            continue
        told.append(a)
        rates, phases = found.rates[own], found.phases[own]
        if np.max(np.abs(phases)) <= limit:
            continue
        offset = whole_offset(rates, phases, ids.shape[1])
        if offset and np.max(np.abs(_wrap(phases - offset * rates))) <= limit:
            offsets[a] = offset
        else:
            explained = False
    return offsets, told, explained


def _alone(axes: list[str]) -> str:
    return "it alone" if len(axes) == 1 else "one of them alone"


def _axis(a: int) -> str:
    return AXES[a] if a < len(AXES) else f"axis {a}"


def _offset_said(offsets: np.ndarray, told: list[int]) -> str:
    """The offset finding: every axis by one offset, or each axis moved, those as given, and
    those no pair follows alone (not read here)."""
    if len(told) == len(offsets) and len(set(offsets.tolist())) == 1:
        o = int(offsets[0])
        moved = ", ".join(f"{_axis(a)}{o:+d}" for a in range(len(offsets)))
        return (
            f"positions offset by {o:+d} on every axis: the rotation at the ids given is the "
            f"table's at ({moved})"
        )
    moved = [f"{_axis(a)} by {int(offsets[a]):+d}" for a in told if offsets[a]]
    kept = [_axis(a) for a in told if not offsets[a]]
    unread = [_axis(a) for a in range(len(offsets)) if a not in told]
    return (
        f"positions offset on {', '.join(moved)}"
        + (f" ({' and '.join(kept)} as given)" if kept else "")
        + (
            f"; {' and '.join(unread)} not read here (no pair follows {_alone(unread)})"
            if unread
            else ""
        )
        + ": the op turned other positions than the ids given (a port that drops rope_deltas, "
        "or moves one axis)"
    )


def laid_out(found):
    """The layout and sections of the named frequencies that put each pair on the axis read:
    (Laid, None) where exactly one fits, else (None, a note saying why none is claimed)."""
    from ..families import FAMILIES
    from ..families.positions import inline_runs

    reading = found.reading
    axes = reading.axes
    if axes is None or axes.unread:
        return None, None
    act = reading.act
    spec = found.named.spec.replace(dtype="float32")  # the named table is a cos
    ids = inline_runs(axes.shifted(act.ids).T)  # the positions the op turned by
    fits = FAMILIES[spec.family].axes_layouts(
        spec, axes.follows, reading.fit.pairing.name, ids, act.shape[0]
    )
    if len(fits) != 1:
        if not fits:
            return None, (
                f"{axes.said()}: no M-RoPE layout pe-cli builds puts its pairs on these axes"
            )
        shown = "; ".join(
            f"{s.axes} {','.join(str(int(v)) for v in dict(s.rope)['mrope_section'])}"
            for s, _ in fits[:4]
        )
        return None, (
            f"{axes.said()}: {len(fits)} layouts and sections fit ({shown}"
            f"{', ...' if len(fits) > 4 else ''}); positions that move every axis further "
            "would tell them apart"
        )
    spec, summary = fits[0]
    return Laid(spec, summary, axes.said()), None


def settle(found) -> None:
    """The variant of the layout's table the op applied, where one is bit for bit: the op's
    own cos (probe's unit vectors), else the rebuild's library (BEFORE turned into AFTER)."""
    from ..families import FAMILIES
    from .rotation import planes

    laid, reading = found.laid, found.reading
    if found.exact:
        cos = reading.fit.c.real
        family = FAMILIES[laid.spec.family]
        names = [laid.spec.variant] + [n for n, v in family.variants.items() if v.kind == "library"]
        for name in dict.fromkeys(names):
            try:
                made = planes(laid.spec, len(cos), name)[0]
            except Exception:  # a variant that does not build this layout (BadInput)
                continue
            if made.shape == cos.shape and np.array_equal(made, cos):
                laid.spec, laid.identical = laid.spec.replace(variant=name), True
                return
    rebuilt = found.rebuilt
    if rebuilt is not None and rebuilt.identical:
        laid.spec = laid.spec.replace(variant=rebuilt.variant)


def against(found, expected) -> list:
    """The layout and sections against the model's at these tokens: another layout or other
    sections (Qwen3-VL's interleaved sections given to Qwen2-VL, mlx-vlm PR #576)."""
    from .rotation import Finding

    laid = found.laid
    if expected.axes is None or laid is None:
        return []
    if laid.spec.axes == expected.axes and laid.sections == tuple(expected.sections):
        return []
    # other sections that change nothing here (at the ids given: an offset is its own finding)
    if _same_table(laid.spec.replace(ids=expected.spec.ids), expected.spec):
        return []
    return [
        Finding(
            "sections",
            f"its pairs follow {laid.spec.axes} sections {_listed(laid.sections)} "
            f"({laid.summary}); {expected.label} applies {expected.axes} sections "
            f"{_listed(expected.sections)}",
        )
    ]


def _same_table(spec, other) -> bool:
    """Whether two layouts' exact cos at these tokens are one table (Qwen3-VL's sections past a
    third of the frequencies, which change no column)."""
    from .rotation import planes

    try:
        mine, theirs = (
            planes(s.replace(variant="exact"), s.seq_len, None)[0] for s in (spec, other)
        )
    except Exception:  # a spec that does not build (BadInput): not shown to be the same
        return False
    return mine.shape == theirs.shape and bool(np.array_equal(mine, theirs))


def _listed(sections) -> str:
    return ",".join(str(s) for s in sections)
