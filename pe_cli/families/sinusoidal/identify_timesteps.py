"""Identification of timestep tables: a diffusion model's timestep embedding read back at a
scheduler's timesteps (999, 979, ...), in each of diffusers' layouts, as `compare FILE` names
them: a range (at diffusers' scales), else a list of the timesteps each row was made with.

Part of identification (identify.py); building a table never imports it.
"""

from __future__ import annotations

from typing import NamedTuple

from ...core.errors import BadInput
from ..positions import shown_timesteps
from ..proposals import Proposal
from ..reading import digits, float32_near, picked_per_row, plausible_bases, read_positions
from .conventions import CONVENTIONS
from .family import FAMILY, VARIANTS
from .timesteps import listed

_SCALES = (1.0, 10.0, 100.0, 1000.0)  # diffusers' timestep scales (QwenImage's and AuraFlow's 1000)
_MAX_PERIODS = (10000.0, 2000.0)  # diffusers' max_period: its default, T5Film's
_TURNS = 64  # whole turns of the lowest frequency's angle a timestep table's rows may have taken
_SOME = 64  # rows, spread over a table, that say whether turns are worth reading for all


class Reading(NamedTuple):
    """Timesteps a table was read at: a --timesteps value and the scale of its angles."""

    timesteps: str
    scale: float


def schedules(
    values, notes: list[str], view, consecutive_named: bool = False, nearest: bool = True
):
    """A timestep embedding at a scheduler's timesteps (999, 979, ...): in each of
    diffusers' layouts, the base from the two lowest frequencies' angles (atan2 of each
    sin and cos pair), each row's t read from the lowest frequency up, and t as a range.
    consecutive_named: a table at consecutive positions is already named bit for bit;
    nearest: where the angles follow timesteps that no reading makes, the exact table at them
    (and what was read, in `notes`)."""
    import numpy as np

    rows, d = values.shape
    if view.sampled or rows < 2:
        return
    unnamed = []  # (layout, base, t) where the angles follow t * w and no reading made the table
    named = False
    for name in ("timestep", "musicgen", "tensor2tensor", "concat"):
        try:
            CONVENTIONS[name].check(d)
        except BadInput:
            continue
        columns = CONVENTIONS[name].columns(d)
        exponents = CONVENTIONS[name].exponents(d)
        n = len(exponents)
        if n < 3 or min(columns.cos) < 0:
            continue
        angles = np.arctan2(values[:, columns.sin], values[:, columns.cos])  # (rows, n)
        at = int(np.argmax(np.abs(angles[:, -1])))
        low, lower = angles[at, -1], angles[at, -2]
        fitted = []  # (angles that wrapped, past pi over the lowest frequency, fit no base)
        if (low > 0 and lower > 0) or (low < 0 and lower < 0):
            fitted = plausible_bases(
                float((lower / low) ** (1 / float(exponents[-1] - exponents[-2])))
            )
        for base in [
            *sorted(fitted, key=lambda b: (digits(b), b)),  # roundest first, then max_period's
            *[b for b in _MAX_PERIODS if b not in fitted],
        ]:
            probe = view.spec(d_model=d, seq_len=2, convention=name, base=base)
            if probe is None:
                continue
            frequencies = FAMILY.frequencies(probe).values
            w = np.array([float(x) for x in frequencies])
            t = _read_timesteps(angles, w)
            if t is None:
                continue  # the angles do not follow t * w: not this layout and base
            whole = np.round(t)
            steps = np.diff(whole)
            near = np.all(
                np.abs(t - whole) <= 1e-3 + 2.0**-22 * np.abs(t)
            )  # (float32's large angles)
            ranged = near and np.all(steps == steps[0]) and steps[0] != 0
            # the angle is scale * t * w: a table of t = whole / scale times diffusers' scale
            # (QwenImage's 1000) is read as whole; those scales are tried where they divide it
            ranges = []
            for scale in [int(s) for s in _SCALES if not np.any(whole % s)] if ranged else ():
                step = int(steps[0]) // scale
                if step != 1 or scale != 1:  # (consecutive positions: the fit above)
                    ranges.append(
                        Reading(
                            f"{int(whole[0]) // scale}:{int(whole[-1]) // scale + step}:{step}",
                            scale,
                        )
                    )
            # else a list (after the ranges, which come first where both are the table)
            texts = (
                []
                if ranged and steps[0] == 1 and consecutive_named
                else _readings(values, t, whole if near else None, name, base, view)
            )
            for reading in ranges + texts:
                spec = view.spec(
                    d_model=d,
                    convention=name,
                    base=base,
                    timesteps=reading.timesteps,
                    timestep_scale=float(reading.scale),
                )
                scaled = f", scale {reading.scale:g}" if reading.scale != 1 else ""
                name_read = f"{name}, timesteps {shown_timesteps(reading.timesteps)}{scaled}"
                yield Proposal(name_read, spec)
            named = named or bool(ranges or texts)
            if ranged or texts:
                break
            unnamed.append((name, base, t))
    if nearest and not named and unnamed:
        yield from _nearest(values, notes, view, *unnamed[0])


def _nearest(values, notes: list[str], view, name: str, base: float, t):
    """The exact table at the float32 timesteps nearest those read back, where no reading made
    the table: the nearest candidate, and what was read."""
    import numpy as np

    read = np.asarray(t, dtype=np.float32).astype(np.float64)
    spec = view.spec(d_model=values.shape[1], convention=name, base=base, timesteps=listed(read))
    if spec is None:
        return
    shown = ", ".join(f"{v:.6g}" for v in read[:4]) + (", ..." if len(read) > 4 else "")
    notes.append(
        f"its rows are sin and cos in the {name} layout at base {base:g} at timesteps read back "
        f"as {shown}, which are not a range; no float32 timesteps within 3 ulps of them make "
        "every row bit for bit, exactly or in a library's arithmetic, at scale 1, 10, 100 or 1000"
    )
    yield Proposal(f"{name}, timesteps as read", spec, libraries=False)


def _readings(values, t, whole, name: str, base: float, view) -> list[Reading]:
    """The rows' timesteps as --timesteps lists at a scale, where the table is not a range of
    them: the whole numbers read (`whole`) where the exact table or a library's arithmetic
    makes every row with them and they are not a range; else, for each of diffusers'
    scales s, each row's t the float32 near the estimate over s (within 3 steps) that such
    arithmetic makes the row with (its own float32 angles put the estimate an ulp or two
    off: 980 read for linspace's 980.00006; QwenImage's sigma at scale 1000)."""
    import numpy as np

    rows, d = values.shape
    if whole is not None:
        made = _made(values, whole[:, None], name, base, view)
        if made:
            steps = np.diff(whole)
            return [] if np.all(steps == steps[0]) and steps[0] != 0 else made
    for scale in _SCALES:  # the first scale that makes the table (t / 10 at 10 is not t)
        found = _made(values, float32_near(t / scale), name, base, view, scale)
        if found:
            return found
    return []


def _made(values, tried, name: str, base: float, view, scale: float = 1.0) -> list[Reading]:
    """For the exact table and each library of this layout, the --timesteps list of the t
    among each row's `tried` (rows, k) that makes that row bit for bit at this scale, where
    every row has one; with the scale."""

    def make(built_by, tried):
        return view.spec(
            d_model=values.shape[1],
            convention=name,
            base=base,
            timesteps=listed(tried.ravel()),
            timestep_scale=scale,
            variant=built_by,
            dtype=view.dtype,
        )

    libraries = [v for v, f in VARIANTS.items() if f.kind == "library" and name in f.conventions]
    found = picked_per_row(view, values, tried[:, None, :], make, ["exact", *libraries])
    return list(dict.fromkeys(Reading(listed(t[:, 0]), scale) for t in found))


def _read_timesteps(angles, w):
    """Each row's position (scale * t) where the angles follow it at frequencies w: read from
    the lowest frequency up, or, past pi over the lowest frequency (QwenImage's scale 1000 for
    t past about 30), with up to _TURNS whole turns of it (tried on some rows first); None
    where they do not."""
    import numpy as np

    t = read_positions(angles, w)
    if _follows(t, angles, w):
        return t
    some = np.unique(np.linspace(0, len(angles) - 1, _SOME).astype(int))
    if not _follows(read_positions(angles[some], w, _TURNS), angles[some], w):
        return None
    t = read_positions(angles, w, _TURNS)
    return t if _follows(t, angles, w) else None


def _follows(t, angles, w) -> bool:
    """The angles are t * w, to 1e-2 and the rounding of float32 angles (2^-23 of each)."""
    import numpy as np

    angle = t[:, None] * w
    return bool(
        np.all(np.abs(np.exp(1j * angle) - np.exp(1j * angles)) <= 1e-2 + 2.0**-21 * np.abs(angle))
    )
