"""Output and compute dtypes: their formats, how tables of them live in host memory, exact
casts of values already on a dtype's grid, and a dtype's unit in the last place.

numpy has no bfloat16, so on the host a bfloat16 table is held as its uint16 bit patterns;
everything that leaves the engine as numpy goes through `host_bits` / `host_float`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    name: str
    itemsize: int
    precision: int  # significand bits, the implicit one included
    min_exponent: int  # exponent of the smallest subnormal: values are multiples of 2**min_exponent
    max_value: float
    safetensors: str  # dtype code in a .safetensors header
    npy: str | None  # numpy descr, None where numpy has no such type
    host: str  # numpy dtype the host holds (bits for bfloat16)

    @property
    def epsilon(self) -> float:
        return 2.0 ** (1 - self.precision)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("float32", 4, 24, -149, 3.4028234663852886e38, "F32", "<f4", "float32"),
        Format("float64", 8, 53, -1074, 1.7976931348623157e308, "F64", "<f8", "float64"),
        Format("float16", 2, 11, -24, 65504.0, "F16", "<f2", "float16"),
        Format("bfloat16", 2, 8, -133, 3.3895313892515355e38, "BF16", None, "uint16"),
    )
}

DTYPE_NAMES = tuple(FORMATS)
# what people type (torch's and numpy's short names), taken as the name each stands for
DTYPE_ALIASES = {"fp32": "float32", "fp64": "float64", "fp16": "float16", "bf16": "bfloat16"}


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def host_bits(values):
    """A block as a host numpy array in its storage type (bfloat16 as uint16 bits)."""
    import numpy as np

    if isinstance(values, np.ndarray):
        return values
    import torch

    values = values.detach().cpu().contiguous()
    if values.dtype == torch.bfloat16:
        return values.view(torch.int16).numpy().view(np.uint16)
    return values.numpy()


def host_float(values, dtype: str):
    """A block as numbers numpy can compute with (bfloat16 widened exactly to float32)."""
    import numpy as np

    bits = host_bits(values)
    if dtype == "bfloat16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return bits


def cast_exact(values, dtype: str):
    """float64 values that already lie on dtype's grid, in dtype (exact: no rounding happens);
    numpy arrays stay numpy (bfloat16 as uint16 bits), torch tensors stay torch."""
    import numpy as np

    if not isinstance(values, np.ndarray):
        return values.to(torch_dtype(dtype))
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(dtype)


def as_torch(block, dtype: str):
    """A host block (numpy, bfloat16 as bits) as a torch tensor; a tensor as it is."""
    import numpy as np
    import torch

    if not isinstance(block, np.ndarray):
        return block
    if dtype == "bfloat16":
        return torch.from_numpy(block.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(block)


def ulp(reference, dtype: str, out=None):
    """The spacing of dtype's values at each reference value (its unit in the last place);
    `out`: a float64 array of the reference's shape to write it into (no allocation)."""
    import numpy as np

    fmt = FORMATS[dtype]
    if fmt.min_exponent > -1022:  # every such spacing is a normal float64: from the exponent bits
        values = np.ascontiguousarray(reference, np.float64)  # at least 1-D
        spacing = np.empty(values.shape) if out is None else out
        # 2**floor(log2|x|) (0 for zero and subnormals), times 2**(1 - precision)
        np.bitwise_and(values.view(np.int64), 0x7FF0000000000000, out=spacing.view(np.int64))
        np.multiply(spacing, 2.0 ** (1 - fmt.precision), out=spacing)
        np.maximum(spacing, 2.0**fmt.min_exponent, out=spacing)
        return spacing if np.ndim(reference) else float(spacing[0])
    _, exponent = np.frexp(np.abs(reference))  # |x| = m * 2**e, 0.5 <= m < 1
    exponent = np.where(reference == 0, fmt.min_exponent + fmt.precision, exponent)
    spacing = np.ldexp(1.0, np.maximum(exponent - fmt.precision, fmt.min_exponent))
    if out is None:
        return spacing
    out[...] = spacing
    return out


MATCH_AT_MOST = 0.1  # the largest |error| a table is said to match a candidate within


def match_margin(reach: int, dtype: str) -> float:
    """How far a table may be from a candidate and still match it (compare's rule): the error
    float32, float16 or bfloat16 arithmetic makes of an angle p * w at positions below
    `reach`, about p ulps, 16 (p + 1) units of the dtype's epsilon at most (a margin over
    every seed recipe's); and MATCH_AT_MOST at most: in a half dtype over thousands of
    positions that margin passes the values' own size, where any table would match."""
    return min(16 * reach * FORMATS[dtype].epsilon, MATCH_AT_MOST)
