"""The alibi family: the head slopes of Press et al. (2022) and the attention biases they imply,
-m_h * (i - j) for keys j <= query i (causal) or -m_h * |i - j| (symmetric).

Each bias is rounded once from its exact value: the distance times the slope as a double-double
product, the few elements that product cannot decide recomputed from the 70-digit slope.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from ...core.errors import BadInput
from ...core.params import Param
from ...numerics.frequencies import context
from ..base import Family, variant


def alibi_slopes(heads: int) -> list[Decimal]:
    """Press et al.: for n a power of two, m_k = 2**(-8k/n), k = 1..n; otherwise the slopes of
    the power of two c below n, then every other slope of 2c (2**(-4(2k-1)/c)) for the rest.
    BLOOM computes the same numbers as powers of 2**(-8/c); MPT as 1/2**(8k/2c), reordered."""
    c = 2 ** (heads.bit_length() - 1)
    exponents = [Fraction(8 * k, c) for k in range(1, c + 1)]
    exponents += [Fraction(4 * (2 * k - 1), c) for k in range(1, heads - c + 1)]
    with context():
        log2 = Decimal(2).ln()
        return [(-(Decimal(e.numerator) / e.denominator) * log2).exp() for e in exponents]


def distances(queries, keys, part: str):
    """The distance each bias multiplies, for query and key positions (broadcast together):
    |i - j| for the symmetric bias, max(i - j, 0) for the causal one (0 above the diagonal,
    where the causal mask goes)."""
    import numpy as np

    distance = queries - keys
    return np.abs(distance) if part == "symmetric" else np.maximum(distance, 0)


# ALiBi as BLOOM, Falcon and MPT compute it (transformers 5.23): each library's slopes, and
# each bias as the library multiplies a slope by an integer distance. The libraries write one
# row of biases, slope * key position (BLOOM, Falcon) or slope * (key - last query) (MPT), and
# leave the rest to softmax's shift invariance; the same products at the distances of
# --part causal or symmetric make pe-cli's (heads, L, L) tables (the sign is exact).

VARIANTS: dict = {}


def _bloom_float32(heads: int):
    # modeling_bloom _get_alibi_slopes: powers of 2**(-8/c) in float32 (torch.pow of a float32
    # base and int32 powers), then odd powers of 2**(-4/c) for the heads beyond the power of
    # two c (modeling_falcon build_alibi_tensor computes the same)
    import math

    import torch

    closest = 2 ** math.floor(math.log2(heads))
    base = torch.full((), 2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != heads:
        extra = torch.full((), 2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        remaining = min(closest, heads - closest)
        odd = torch.arange(1, 1 + 2 * remaining, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra, odd)], dim=0)
    return slopes


def _mpt_float32(heads: int):
    # modeling_mpt build_mpt_alibi_tensor: 1 / 2**(k * 8 / n2) for the power of two n2 >= n,
    # odd-indexed slopes first, then even-indexed, the first n kept
    import math

    import torch

    power = 2 ** math.ceil(math.log2(heads))
    exponents = torch.arange(1, power + 1, dtype=torch.int64).float() * (8 / power)
    slopes = 1.0 / torch.pow(2, exponents)
    if power != heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:heads]
    return slopes


def _biases(spec, slopes):
    """The part's table from a library's slopes: the slopes as a row, or each head's bias,
    -(slope * distance) with the distance an integer tensor, so that torch multiplies in the
    slopes' dtype and rounds once there, as the library does."""
    import numpy as np
    import torch

    if spec.part == "slopes":
        return slopes[None, :]
    positions = np.arange(spec.seq_len)
    distance = torch.from_numpy(distances(positions[:, None], positions[None, :], spec.part))
    table = -(slopes[:, None, None] * distance[None]) + 0  # + 0: no negative zeros
    return table.reshape(spec.heads * spec.seq_len, spec.seq_len)


_LIBRARY = dict(conventions=("press",), part="slopes")


@variant(
    VARIANTS,
    "bloom",
    source="transformers 5.23 modeling_bloom _get_alibi_slopes and build_alibi_tensor: "
    "float32 slopes, slope x distance in float32",
    **_LIBRARY,
)
def _bloom(spec, device):
    return _biases(spec, _bloom_float32(spec.heads))


@variant(
    VARIANTS,
    "falcon",
    source="transformers 5.23 modeling_falcon build_alibi_tensor: BLOOM's float32 slopes "
    "cast to bfloat16, slope x distance in bfloat16",
    **_LIBRARY,
)
def _falcon(spec, device):
    return _biases(spec, _bloom_float32(spec.heads).bfloat16())


@variant(
    VARIANTS,
    "mpt",
    source="transformers 5.23 modeling_mpt build_mpt_alibi_tensor: float32 slopes, "
    "slope x distance in float32",
    **_LIBRARY,
)
def _mpt(spec, device):
    return _biases(spec, _mpt_float32(spec.heads))


class Alibi(Family):
    name = "alibi"
    summary = "ALiBi head slopes and attention biases"
    conventions = {"press": "slopes 2**(-8k/n), non-powers of two completed as Press et al. do"}
    parts = {
        "causal": "-m_h*(i-j) for key j <= query i, 0 above the diagonal (heads, L, L)",
        "symmetric": "-m_h*|i-j| (heads, L, L)",
        "slopes": "m_h (heads,)",
    }
    params = (Param("heads", 8, "Number of attention heads.", int, minimum=1),)
    variants = VARIANTS

    def check(self, spec):
        if spec.offset:
            raise BadInput("ALiBi biases depend on distances only: --offset does not apply")
        if spec.base != 10000.0:
            raise BadInput("ALiBi slopes have no --base")

    def _vector(self, spec) -> bool:
        return spec.part == "slopes"

    def rows(self, spec):
        return 1 if self._vector(spec) else spec.heads * spec.seq_len

    def cols(self, spec):
        return spec.heads if self._vector(spec) else spec.seq_len

    def dims(self, spec):
        return (spec.heads,) if self._vector(spec) else (spec.heads, spec.seq_len, spec.seq_len)

    def exact_rows(self, spec, start, stop, work):
        import numpy as np

        from ...numerics import exact
        from ...numerics.sinusoids import round_decimals

        slopes = alibi_slopes(spec.heads)
        if self._vector(spec):
            return round_decimals(slopes, spec.dtype)
        length = spec.seq_len
        head, query = np.divmod(np.arange(start, stop), length)
        distance = distances(
            query[:, None].astype(np.float64),
            np.arange(length, dtype=np.float64)[None, :],
            spec.part,
        )
        hi = np.empty_like(distance)
        lo = np.empty_like(distance)
        for h in np.unique(head).tolist():
            rows = head == h
            hi[rows], lo[rows] = exact.product_dd(np, distance[rows], exact.dd(slopes[h]))
        if spec.dtype == "float64":
            rounded, suspect = exact.decide_float64(np, hi, lo)
        else:
            rounded, suspect = exact.round_to(np, hi + lo, spec.dtype)
        for r, c in zip(*np.nonzero(suspect)):
            true = Fraction(slopes[head[r]]) * int(distance[r, c])
            rounded[r, c] = exact.round_fraction(true, spec.dtype)
        return -rounded + 0.0  # + 0.0: no negative zeros

    def settings(self, spec):
        lines = [*super().settings(spec), ("heads", str(spec.heads))]
        return lines + (
            [("positions", f"0 .. {spec.seq_len - 1}")] if not self._vector(spec) else []
        )

    def row_label(self, spec):
        if self._vector(spec):
            return lambda i: "-"
        return lambda i: f"h{i // spec.seq_len} q{i % spec.seq_len}"

    def reading(self, shape, label):
        if len(shape) == 3 and shape[1] == shape[2]:
            heads, length, _ = shape
            return (
                heads * length,
                length,
                [
                    f"{label} is {heads} square (L, L) matrices (ALiBi heads); compared as rows of {length}"
                ],
            )
        return None


FAMILY = Alibi()
