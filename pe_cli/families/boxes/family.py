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

from ...core.errors import BadInput
from ...core.params import Param
from ...numerics.frequencies import context, power_law
from ..base import Family, Frequencies, axes_facts, variant
from ..positions import binary_fractions, positions_file

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


FAMILY = Boxes()
