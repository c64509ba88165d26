"""What the rope family's identification modules share: how near two readings are the same,
and the common values of the scaled rope types' parameters that a fit chooses among."""

from __future__ import annotations

from typing import NamedTuple

CLOSE = 1e-3  # positions read back within this are the same
# and, far from 0, within what float32 angles move them: p * w rounded to float32 is off by up to
# p * w * 2^-24, which reads as p * 2^-24 on any frequency (0.004 at Ideogram 4's 65536)
FLOAT32_ANGLES = 4 * 2.0**-24


def near(read, expected, slack=0.0):
    """Where positions read back are the expected ones (elementwise), `slack` more where the
    reading tells them no better (axial._slack)."""
    import numpy as np

    return np.abs(read - expected) < CLOSE + FLOAT32_ANGLES * np.abs(expected) + slack


def is_whole(positions, slack=0.0) -> bool:
    import numpy as np

    return bool(np.all(near(positions, np.round(positions), slack)))


RUNS_NEAR = (
    1e-2  # a table named by runs is this near (float32 angles at large positions), else not offered
)


MOST_RUNS = 64  # runs of tokens identification writes as --ids


REAL_BASES = (100.0, 1e8)  # the least and greatest real models' (transformers.json's configs)


BASES = (10000.0, 100000.0, 500000.0, 1000000.0, 5000000.0, 10000000.0)


# common values of the scaled rope_types' parameters, for the fit to choose among
ORIGINAL_LENGTHS = (2048, 4096, 8192, 16384, 32768, 65536)


FACTORS = (2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0, 128.0)


class Fit(NamedTuple):
    """A rope type's settings that explain a 1-D table's frequencies."""

    dim: int  # the rotary dim: the exponents are 2i / dim
    base: float
    rope: dict  # the rope parameters
    law: str = ""  # how the base is made, where it is not written as itself (NTK-by-base)
    nearest: bool = False  # no fit: the plain law nearest the frequencies of a table unexplained
