"""The sinusoidal family: the 1-D tables of "Attention Is All You Need" and the libraries after it.

For positions p and angular frequencies w_i = base**(-e_i), a convention (conventions.py)
computes the planes sin(p*w_i) and cos(p*w_i) and places them into d_model columns. The rows'
positions are --offset onwards, or --timesteps (timesteps.py). Each seed notebook's formula
(seeds.py) and each library's table (libraries.py, timesteps.py) is one entry in VARIANTS beside
its function. Reading a table back (identify.py) lives apart; this module is the family's
interface.
"""

from __future__ import annotations

import math
from decimal import Decimal

from ...core.errors import BadInput
from ...core.params import Param
from ...numerics.frequencies import context, power_law
from ..base import Audit, Family, Frequencies, Norm
from ..positions import shown_timesteps
from .conventions import CONVENTIONS
from .libraries import LIBRARIES
from .seeds import SEEDS
from .timesteps import TIMESTEP_SCALE, TIMESTEPS, row_groups, timesteps

# the seed formulas, then the libraries: --help, errors and identification list them in order
VARIANTS = {**SEEDS, **LIBRARIES}


def _zero_padding_row(spec, block, start: int, stop: int):
    """Rows start..stop of a table with fairseq's padding row, when it falls among them, zeroed."""
    if spec.padding_idx is not None and start <= spec.padding_idx - spec.offset < stop:
        block[spec.padding_idx - spec.offset - start] = 0
    return block


def _base(spec) -> float:
    """The base of the table's frequencies: its convention's own (nerf's 2), else --base."""
    fixed = CONVENTIONS[spec.convention].fixed_base
    return spec.base if fixed is None else fixed


class Sinusoidal(Family):
    name = "sinusoidal"
    summary = "1-D sin/cos tables (Vaswani et al. and the libraries after it)"
    conventions = {name: c.summary for name, c in CONVENTIONS.items()}
    params = (
        Param(
            "padding_idx",
            None,
            "The position whose row is all zeros (the fairseq convention).",
            int,
            minimum=0,
            fixed="has no padding row",
        ),
        Param(
            "min_timescale",
            1.0,
            "tensor2tensor's min_timescale (--base is its max_timescale).",
            float,
            fixed="has no min_timescale",
        ),
        Param(
            "amplitude",
            1.0,
            "Every sin and cos multiplied by this (x-transformers' ScaledSinusoidalEmbedding: "
            "its learned scale, d^-0.5 at init).",
            float,
            fixed="has no amplitude",
        ),
        TIMESTEP_SCALE,
        TIMESTEPS,
    )
    variants = VARIANTS
    shapes = ("2d", "batch-first", "seq-first")
    paired_columns = True

    def check(self, spec) -> None:
        convention = CONVENTIONS[spec.convention]
        convention.check(spec.d_model)
        if convention.fixed_base is not None and spec.base != self.default_base:
            raise BadInput(
                f"--base does not apply to the {spec.convention} convention: its frequencies "
                f"are {convention.fixed_base:g}^k"
            )
        if spec.padding_idx is not None and not convention.padding:
            padded = ", ".join(c.name for c in CONVENTIONS.values() if c.padding)
            raise BadInput(
                f"--padding-idx belongs to the {padded} convention, not {spec.convention!r}"
            )
        if not (0 < spec.amplitude < math.inf):
            raise BadInput(f"--amplitude must be a positive number, got {spec.amplitude}")
        if not (0 < spec.timestep_scale < math.inf):
            raise BadInput(f"--timestep-scale must be a positive number, got {spec.timestep_scale}")
        if spec.min_timescale != 1.0:
            if not convention.timescales:
                timed = ", ".join(c.name for c in CONVENTIONS.values() if c.timescales)
                raise BadInput(f"--min-timescale belongs to the {timed} convention")
            if not (0 < spec.min_timescale < spec.base):
                raise BadInput(
                    f"--min-timescale must be between 0 and --base, got {spec.min_timescale}"
                )
        if spec.timesteps is not None:
            if spec.offset or spec.padding_idx is not None:
                raise BadInput(
                    "--timesteps gives every row's position: drop --offset and --padding-idx"
                )
            timesteps(spec)

    def rows(self, spec):
        return spec.seq_len if spec.timesteps is None else len(timesteps(spec).values)

    def frequencies(self, spec):
        convention = CONVENTIONS[spec.convention]
        exponents = convention.exponents(spec.d_model)
        frequencies = power_law(exponents, _base(spec), spec.min_timescale)
        if spec.timestep_scale != 1.0:
            with context():
                frequencies = [w * Decimal(spec.timestep_scale) for w in frequencies]
        return Frequencies(frequencies, Decimal(spec.amplitude))

    def exact_rows(self, spec, start, stop, work):
        place = CONVENTIONS[spec.convention].place
        out = work.zeros(stop - start, spec.d_model)
        for group in row_groups(spec, start, stop):  # t = k / q: whole k at frequencies w / q
            sin, cos = work.planes(group.positions, group.denominator)
            if isinstance(group.rows, slice):
                place(out, sin, cos, spec.d_model)
            else:
                block = work.zeros(len(group.positions), spec.d_model)
                place(block, sin, cos, spec.d_model)
                out[group.rows.tolist()] = block
            if CONVENTIONS[spec.convention].position_column:  # the positions themselves
                out[group.rows if isinstance(group.rows, slice) else group.rows.tolist(), 0] = (
                    work.rounded([k / group.denominator for k in group.positions])
                )
        return _zero_padding_row(spec, out, start, stop)

    def fast_columns(self, spec):
        if spec.timesteps is not None:  # the kernel steps through consecutive positions
            return None
        if CONVENTIONS[spec.convention].position_column:  # a column the kernel does not fill
            return None
        return CONVENTIONS[spec.convention].columns(spec.d_model)

    def fast_finish(self, spec, block, start, stop):
        return _zero_padding_row(spec, block, start, stop)

    def settings(self, spec):
        lines = [("convention", spec.convention), ("base", f"{_base(spec):g}")]
        if spec.min_timescale != 1.0:
            lines.append(("min timescale", f"{spec.min_timescale:g}"))
        if spec.amplitude != 1.0:
            lines.append(("amplitude", f"{spec.amplitude!r} (every sin and cos multiplied by it)"))
        if spec.timestep_scale != 1.0:
            lines.append(("angle scale", f"{spec.timestep_scale:g} (every angle multiplied by it)"))
        if spec.timesteps is None:
            lines.append(("positions", f"{spec.offset} .. {spec.last_position}"))
        else:
            values = timesteps(spec).values
            lines.append(
                (
                    "positions",
                    f"timesteps {shown_timesteps(spec.timesteps)} ({len(values)}: {values[0]:g} .. "
                    f"{values[-1]:g})",
                )
            )
        if spec.padding_idx is not None:
            lines.append(("padding row", f"position {spec.padding_idx} (all zeros)"))
        return lines

    def row_norm(self, spec):
        found = super().row_norm(spec)
        if found is None or spec.amplitude == 1.0:
            return found
        return Norm(
            found.value * spec.amplitude, f"{spec.amplitude!r} * {found.formula}", found.reason
        )

    def identity(self, spec) -> str:
        where = (
            f"first position {spec.offset}"
            if spec.timesteps is None
            else f"timesteps {shown_timesteps(spec.timesteps)}"
        )
        amplitude = f", amplitude {spec.amplitude!r}" if spec.amplitude != 1.0 else ""
        return f"base {_base(spec):g}{amplitude}, {where}"

    def row_label(self, spec):
        if spec.timesteps is None:
            return super().row_label(spec)
        values = timesteps(spec).values
        return lambda i: f"{values[i]:g}"

    def facts(self, spec) -> dict:
        frequencies = self.frequencies(spec).values
        columns = CONVENTIONS[spec.convention].columns(spec.d_model)
        return {
            "frequencies": [
                {
                    "index": i,
                    "sin_column": int(columns.sin[i]),
                    "cos_column": int(columns.cos[i]) if columns.cos[i] >= 0 else None,
                    "frequency": float(w),
                    "wavelength": 2 * math.pi / float(w),
                }
                for i, w in enumerate(frequencies)
            ],
            "positions": [spec.offset, spec.last_position]
            if spec.timesteps is None
            else [float(timesteps(spec).values.min()), float(timesteps(spec).values.max())],
        }

    def audit(self, spec, compute):
        compute = compute or "float32"
        recipes = [
            (name, spec.replace(variant=name, compute_dtype=compute, dtype=compute))
            for name, found in VARIANTS.items()
            if found.kind == "seed"
        ]
        title = (
            f"seed formulas computed in {compute} vs the exact table (d_model={spec.d_model}, "
            f"positions {spec.offset}..{spec.last_position}, base {spec.base:g})"
        )
        return Audit(title, compute, recipes)

    def explain(self, va, vb, la, lb):
        """Another base, or another frequency layout, where both tables' angles are clean lines."""
        from .fit import explain  # compare's alone: building and --help never load the fit

        return explain(va, vb, la, lb)

    def prefix(self, spec, rows):
        return spec.replace(seq_len=rows) if spec.timesteps is None else None


FAMILY = Sinusoidal()
