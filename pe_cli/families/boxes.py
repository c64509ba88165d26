"""The boxes family: GLIGEN's Fourier features of bounding boxes (diffusers'
get_fourier_embeds_from_boundingbox). Each row is a box (x0, y0, x1, y1), its corners as
fractions of the image; its n = d_model / 8 frequencies rise, base**(i/n) (base 100), and for
each frequency the table holds the sines of the four coordinates, then their cosines: column
8i + 4s + c. A box's coordinates are the float32 numbers the model holds (GLIGEN's pipeline
makes a float32 tensor of them); each is a binary fraction, taken exactly."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from ..core.dtypes import FORMATS
from ..core.errors import BadInput
from ..core.params import Param
from ..numerics.frequencies import context, power_law
from .base import Family, Frequencies, axes_facts, variant
from .positions import binary_fractions, positions_file
from .reading import float32_near, plausible_bases, read_positions

COORDINATES = ("x0", "y0", "x1", "y1")
BASE = 100.0  # diffusers' get_fourier_embeds_from_boundingbox


@lru_cache(maxsize=4)
def box_values(text: str):
    """The boxes of --boxes as float32 values (in float64), (count, 4): a .npy file (count, 4), or
    boxes written x0,y0,x1,y1 and joined by ';', each number rounded to float32."""
    import numpy as np

    if "," in text:
        try:
            values = np.array(
                [[float(v) for v in box.split(",")] for box in text.split(";")], dtype=np.float64
            )
        except ValueError:
            raise BadInput(
                f"--boxes {text!r}: not boxes x0,y0,x1,y1 joined by ';' (or a .npy file)"
            ) from None
        if values.ndim != 2 or values.shape[1] != 4:
            raise BadInput(f"--boxes {text!r}: each box is four numbers x0,y0,x1,y1")
        if not np.all(np.isfinite(values)):
            raise BadInput(f"--boxes {text!r}: coordinates must be finite")
    else:
        values = positions_file(text, "--boxes", 4)
    rounded = values.astype(np.float32)
    if not np.all(np.isfinite(rounded)):
        raise BadInput(f"--boxes {text}: coordinates past float32's range")
    return rounded.astype(np.float64)


class Fractions(NamedTuple):
    """Each coordinate's values as integers over its power of two."""

    numerators: object  # (count, 4) int64
    denominators: tuple[int, int, int, int]  # x0's, y0's, x1's, y1's


@lru_cache(maxsize=4)
def _fractions(text: str) -> Fractions:
    import numpy as np

    values = box_values(text)
    found = [
        binary_fractions(values[:, c], f"--boxes, {name}") for c, name in enumerate(COORDINATES)
    ]
    return Fractions(np.stack([n for n, _ in found], axis=1), tuple(q for _, q in found))


def boxes_text(values) -> str:
    """Boxes (float32 values) as --boxes writes them: each number the shortest that reads back
    as the same float32."""
    import numpy as np

    return ";".join(
        ",".join(np.format_float_positional(np.float32(v), trim="-") for v in box) for box in values
    )


def _columns(n: int) -> dict:
    """{(coordinate, "sin" or "cos"): [column of each frequency]}."""
    return {
        (name, fn): [8 * i + 4 * s + c for i in range(n)]
        for c, name in enumerate(COORDINATES)
        for s, fn in enumerate(("sin", "cos"))
    }


VARIANTS: dict = {}


@variant(
    VARIANTS,
    "diffusers",
    source="diffusers 0.42 get_fourier_embeds_from_boundingbox (GLIGEN's "
    "GLIGENTextBoundingboxProjection), float32",
    conventions=("gligen",),
    refuse=lambda spec: (
        None
        if spec.base == BASE
        else f"diffusers' get_fourier_embeds_from_boundingbox has base {BASE:g}, not {spec.base:g}"
    ),
    parameters=frozenset({"base"}),
)
def _diffusers(spec, device):
    import torch

    n = spec.d_model // 8
    box = torch.from_numpy(box_values(spec.boxes)).float()
    emb = BASE ** (torch.arange(n) / n)  # an int64 arange over an int: float32
    emb = emb[None, None] * box[..., None]  # (count, 4, n)
    emb = torch.stack((emb.sin(), emb.cos()), dim=-1)  # (count, 4, n, 2)
    return emb.permute(0, 2, 3, 1).reshape(len(box), 8 * n)


class Boxes(Family):
    name = "boxes"
    summary = "GLIGEN's Fourier features of bounding boxes (x0, y0, x1, y1)"
    conventions = {
        "gligen": "per frequency base**(i/n), rising: the sines of x0, y0, x1, y1, then their cosines "
        "(diffusers get_fourier_embeds_from_boundingbox)",
    }
    params = (
        Param(
            "boxes",
            None,
            "The boxes, one row each: x0,y0,x1,y1 joined by ';' (0.1,0.2,0.5,0.6;0,0,0,0), "
            "or a .npy file (count, 4); each coordinate rounded to float32, as GLIGEN holds them.",
            str,
        ),
    )
    variants = VARIANTS
    paired_columns = True
    default_base = BASE

    def check(self, spec):
        if spec.boxes is None:
            raise BadInput(
                "--family boxes needs --boxes: x0,y0,x1,y1 joined by ';', or a .npy file (count, 4)"
            )
        if spec.d_model % 8:
            raise BadInput(
                f"each frequency takes 8 columns (sin and cos of x0, y0, x1, y1): --d-model must be "
                f"a multiple of 8 (got {spec.d_model}; GLIGEN's 8 frequencies: 64)"
            )
        if spec.offset:
            raise BadInput("a boxes table's rows are its boxes: --offset does not apply")
        _fractions(spec.boxes)

    def rows(self, spec):
        return len(box_values(spec.boxes))

    def _law(self, spec) -> list[Decimal]:
        n = spec.d_model // 8
        return power_law([Fraction(-i, n) for i in range(n)], spec.base)  # base**(i/n)

    def frequencies(self, spec):
        # coordinate c at k / q_c: integers k at frequencies w / q_c, each coordinate in turn
        law = self._law(spec)
        with context():
            return Frequencies(
                [w / q for q in _fractions(spec.boxes).denominators for w in law], Decimal(1)
            )

    def exact_rows(self, spec, start, stop, work):
        numerators = _fractions(spec.boxes).numerators
        n = spec.d_model // 8
        out = work.zeros(stop - start, spec.d_model)
        for c in range(4):
            sin, cos = work.planes(numerators[start:stop, c].tolist())
            out[:, c::8] = sin[:, c * n : (c + 1) * n]
            out[:, 4 + c :: 8] = cos[:, c * n : (c + 1) * n]
        return out

    def settings(self, spec):
        count = self.rows(spec)
        if "," not in spec.boxes:
            shown = f"{count} from {spec.boxes}"
        else:
            shown = spec.boxes if len(spec.boxes) <= 80 else f"{count}: {spec.boxes[:60]} ..."
        return [*super().settings(spec), ("base", f"{spec.base:g}"), ("boxes", shown)]

    def row_label(self, spec):
        return lambda i: f"box {i}"

    def facts(self, spec):
        return {"frequencies": axes_facts(self._law(spec), _columns(spec.d_model // 8))}

    def candidates(self, values, dtype, notes, bench):
        """The layout's sin/cos pairs, the base from the two lowest frequencies (the first is 1:
        its angle is the coordinate), each box read back from the angles and rounded to float32."""
        import numpy as np

        count, cols = values.shape
        if cols % 8 or cols < 16:
            return
        n = cols // 8
        sin = np.stack([values[:, 8 * i : 8 * i + 4] for i in range(n)], axis=2)  # (count, 4, n)
        cos = np.stack([values[:, 8 * i + 4 : 8 * i + 8] for i in range(n)], axis=2)
        if not np.allclose(sin**2 + cos**2, 1, atol=1e-2):
            return
        angles = np.arctan2(sin, cos)
        first = np.abs(angles[..., 0])
        r, c = np.unravel_index(np.argmax(first), first.shape)
        if first[r, c] < 1e-3:  # every box at 0: any base fits
            bases = [BASE]
        else:
            # w_1 / w_0 = base**(1/n), where the second angle has not passed pi; it has where
            # that step times the coordinate is above pi (base 100 over 2 or 4 frequencies), so
            # each whole turn it may have made gives a step to try
            turns = angles[r, c, 1] + 2 * np.pi * np.arange(-2, 3)
            powers = (turns / angles[r, c, 0]) ** n
            powers = powers[np.isfinite(powers) & (turns / angles[r, c, 0] > 1)]
            if not len(powers):
                return
            bases = [b for power in powers.tolist() for b in plausible_bases(power)] + [BASE]
        for base in dict.fromkeys(bases):
            law = [float(w) for w in power_law([Fraction(-i, n) for i in range(n)], base)]
            estimate = np.stack([read_positions(angles[:, k], law) for k in range(4)], axis=1)
            for boxes in self._readings(values, estimate, base, bench):
                spec = bench.spec(
                    family=self.name,
                    d_model=cols,
                    base=base,
                    boxes=boxes_text(boxes),
                    convention="gligen",
                    dtype="float64",
                )
                if spec is None:
                    continue
                reference = bench.reference(spec)
                yield bench.candidate("GLIGEN box features", spec, reference=reference)
                yield from bench.libraries(spec, reference)

    def _readings(self, values, estimate, base: float, bench) -> list:
        """The float32 boxes the table's rows are, as the exact table and each library's arithmetic
        make them: each coordinate the float32 near its estimate (within 3 steps; in a half
        table, its shortest decimals first) whose sines and cosines that arithmetic makes as
        the table has them (a library's float32 angles put the estimate an ulp or two off)."""
        import numpy as np

        count, cols = values.shape
        tried = float32_near(estimate)  # (count, 4, 7)
        if FORMATS[bench.dtype].precision < 24:
            # a half table's angles place a coordinate to about 1e-3 only, far more than 3
            # float32 steps: its shortest decimals (boxes are written as 0.25 or 0.1) are tried
            # first, and any that makes the table's values is a reading of it
            rounded = [np.round(estimate, places) for places in range(1, 5)]
            tried = np.concatenate([np.stack(rounded, axis=2).astype(np.float32), tried], axis=2)
        boxes = np.moveaxis(tried, 2, 1).reshape(-1, 4)  # every row's candidate boxes in turn
        found = []
        for built_by in ("exact", *(v for v, f in VARIANTS.items() if f.kind == "library")):
            spec = bench.spec(
                family=self.name,
                d_model=cols,
                base=base,
                boxes=boxes_text(boxes),
                variant=built_by,
                dtype=bench.dtype,
            )
            if spec is None:
                continue
            made = bench.values_of(spec).reshape(count, tried.shape[2], cols)
            picked = np.empty((count, 4), dtype=np.float32)
            # the coordinate's own columns: its sines (8i + c) and cosines (8i + 4 + c)
            for c in range(4):
                same = np.all(made[:, :, c::4] == values[:, None, c::4], axis=2)  # (count, 7)
                if not same.any(axis=1).all():
                    break
                picked[:, c] = tried[np.arange(count), c, np.argmax(same, axis=1)]
            else:
                if not any(np.array_equal(picked, other) for other in found):
                    found.append(picked)
        return found


FAMILY = Boxes()
