"""Which columns hold frequency i: the pairing conventions, and the rotation part.

For n frequencies of angles a_i = p * w_i (c_i is cos a_i or sin a_i, times the factor):

    half         [c_0 c_1 ... c_n-1 | c_0 c_1 ... c_n-1]   GPT-NeoX, Hugging Face's rotate_half
    interleaved  [c_0 c_0 c_1 c_1 ... c_n-1 c_n-1]          GPT-J, RoFormer, Meta's llama
    single       [c_0 c_1 ... c_n-1]                        a complex table's real or imaginary part
    rotation     [cos_0 -sin_0 sin_0 cos_0 cos_1 ...]      each interleaved pair's 2x2 rotation

`pair_columns` is the one place that says so; a multi-axis layout says it through its
(axis, frequency) of each column instead (layouts.py).
"""

from __future__ import annotations


def pair_columns(n: int, convention: str) -> tuple[slice, slice]:
    """The first and second column of each frequency in a part of 2n columns."""
    if convention == "half":
        return slice(0, n), slice(n, 2 * n)
    if convention == "single":
        return slice(0, n), slice(0, n)
    return slice(0, 2 * n, 2), slice(1, 2 * n, 2)


def lay_out(plane, convention: str):
    """A (rows, n) plane, numpy or torch, as the part's (rows, 2n) columns."""
    import numpy as np

    rows, n = plane.shape
    if convention == "single":
        return plane
    if isinstance(plane, np.ndarray):
        out = np.empty((rows, 2 * n), dtype=plane.dtype)
    else:
        out = plane.new_empty((rows, 2 * n))
    for columns in pair_columns(n, convention):
        out[:, columns] = plane
    return out


def rotation_table(cos, sin):
    """Interleaved cos and sin planes, numpy or torch, as each pair's 2x2 rotation
    [[cos, -sin], [sin, cos]] flattened row-major: columns 2c and 2c + 1 hold column c's
    (HiDream, Kandinsky 5, FLUX's original EmbedND)."""
    pieces = (cos[:, 0::2], -sin[:, 0::2], sin[:, 1::2], cos[:, 1::2])
    if hasattr(cos, "numpy"):
        import torch

        return torch.stack(pieces, dim=-1).reshape(len(cos), -1)
    import numpy as np

    return np.stack(pieces, axis=-1).reshape(len(cos), -1)


def cos_sin(cos, sin):
    """cos and sin planes, numpy or torch, side by side: vLLM's cos_sin_cache."""
    if hasattr(cos, "numpy"):
        import torch

        return torch.cat([cos, sin], dim=-1)
    import numpy as np

    return np.concatenate([cos, sin], axis=-1)


BOTH = {"rotation": rotation_table, "cos-sin": cos_sin}  # the parts made of cos and sin


def part_of(part: str, cos, sin, angle):
    """The part asked for, of planes made when called."""
    if part in BOTH:
        return BOTH[part](cos(), sin())
    return {"cos": cos, "sin": sin, "angle": angle}[part]()


def both_parts(compute):
    """A variant that builds cos or sin, made to build the parts made of both."""

    def run(spec, device):
        if spec.part not in BOTH:
            return compute(spec, device)
        return BOTH[spec.part](
            compute(spec.replace(part="cos"), device), compute(spec.replace(part="sin"), device)
        )

    return run


def reordered(n: int, have: str, want: str):
    """The columns of a part laid out `have` that make it laid out `want` (the same values in
    another pairing); None where the two hold different columns (single against paired)."""
    import numpy as np

    if have == want:
        return None
    if "single" in (have, want):
        return None
    order = np.empty(2 * n, dtype=np.int64)
    for mine, theirs in zip(pair_columns(n, have), pair_columns(n, want)):
        order[theirs] = np.arange(2 * n)[mine]
    return order


def spread(n: int, want: str):
    """The columns of a single part (one per frequency) that lay it out `want`: each
    frequency's column where `want` pairs it (a complex table's real part beside a paired
    one)."""
    import numpy as np

    order = np.empty(2 * n, dtype=np.int64)
    for columns in pair_columns(n, want):
        order[columns] = np.arange(n)
    return order


# The pairings a rotary op applies, as a rotation is read back from activations
# (analysis/rotation.py), in the order tried: over the rotary dim R, dim i turns with
# i + R/2 (half) or 2i with 2i + 1 (interleaved).
ROTARY = ("half", "interleaved")


def rotary_pairs(width: int, convention: str):
    """The dims (first, second) of each pair a rotary op turns over `width` dims."""
    import numpy as np

    first, second = pair_columns(width // 2, convention)
    dims = np.arange(width)
    return dims[first], dims[second]
