"""`pe_cli.probe`: a rotary op called on unit vectors, so that the cos and sin it applies come
back as they are; and `assert_rotation`'s check of them against a model's layer.

A rotation of the unit vector e_i, the real part of pair k, gives that pair's cos and sin as the
op computed them: x cos + rotate(x) sin of e_i is cos in dim i and sin in its partner, nothing
rounded beyond the op's own cos and sin (x is 1 or 0). The batch of head_dim unit vectors goes in
as heads, in torch's layout (1, head_dim, positions, head_dim), with positions 0..P-1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import BadInput
from .rotation import activations
from .rotation_report import Expected, Report, expected_of, report

DTYPES = ("float32", "bfloat16", "float16")


def probe(
    fn,
    *,
    head_dim: int,
    seq_len: int | None = None,
    dtype: str = "float32",
    device: str = "cpu",
    expected: Expected | None = None,
    positions=None,
) -> Report:
    """Call `fn(x, positions) -> rotated x` on unit vectors and read back what it applied:
    x is (1, head_dim, seq_len, head_dim) of `dtype` (head h at every position is e_h),
    positions a (seq_len,) int64 tensor 0..seq_len-1, or the `positions` given: (seq_len,)
    or (axes, seq_len) integers, M-RoPE's (3, seq_len) of t, h and w, handed to fn as an int64
    tensor of that shape. Returns the report of compare AFTER --before BEFORE (.pairing,
    .rotary_dims, .candidates, .findings), whose table is named from the op's own cos, bit for
    bit where it is a library's."""
    import torch

    if dtype not in DTYPES:
        raise BadInput(f"dtype {dtype!r}: probe takes {', '.join(DTYPES)}")
    ids = None
    if positions is not None:
        ids = np.asarray(positions.cpu() if hasattr(positions, "cpu") else positions)
        if ids.dtype.kind not in "iu" or ids.ndim not in (1, 2):
            raise BadInput(
                f"positions of shape {ids.shape} and dtype {ids.dtype}: integers, (seq_len,) "
                "or (axes, seq_len)"
            )
        seq_len = seq_len or ids.shape[-1]
        if ids.shape[-1] != seq_len:
            raise BadInput(f"positions of shape {ids.shape} for seq_len {seq_len}")
    if seq_len is None:
        raise BadInput("probe needs seq_len or positions")
    if head_dim < 2 or head_dim % 2 or seq_len < 2:
        raise BadInput(f"head_dim {head_dim}, seq_len {seq_len}: an even head_dim and 2 positions")
    kind = getattr(torch, dtype)
    eye = torch.eye(head_dim, dtype=kind, device=device)
    x = eye[None, :, None, :].expand(1, head_dim, seq_len, head_dim).contiguous()
    if ids is None:
        handed = torch.arange(seq_len, device=device)
    else:
        handed = torch.as_tensor(ids.astype(np.int64), device=device)
    rotated = fn(x.clone(), handed)
    if not isinstance(rotated, torch.Tensor) or tuple(rotated.shape) != tuple(x.shape):
        shape = getattr(rotated, "shape", type(rotated).__name__)
        raise BadInput(f"the op returned {shape} for x of shape {tuple(x.shape)}")
    before = x.double().cpu().numpy()
    after = rotated.detach().double().cpu().numpy()
    act = activations(before, after, dtype, ids, ("x", "fn(x, positions)"))
    act.vectors[:] = [f"e_{h}" for h in range(head_dim)]
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    labels = ("x", "fn(x)")
    return report(act, f"{name} on unit vectors", expected, exact=True, labels=labels)


# ---------------------------------------------------------------------------------------------
# The one-line parity test


@dataclass(frozen=True)
class Mismatch:
    """Where the op's cos or sin is not the expected table's."""

    part: str  # "cosine" or "sine"
    positions: list[int]
    dims: list[int]
    max_abs: float


def check_rotation(
    fn,
    *,
    rope_config: str,
    variant: str | None = None,
    layer: int | None = None,
    seq_len: int = 256,
    dtype: str = "float32",
    device: str = "cpu",
    positions=None,
) -> tuple[Report, list[str]]:
    """The op probed against what the model's layer applies: (report, the sentences that say
    how it differs; none where it is the layer's rotation). With `variant` the op's cos and
    sin must be that library's bit for bit; without, the exact table's within the error
    arithmetic in `dtype` makes of the angles (core.dtypes.match_margin, as compare FILE)."""
    ids = None if positions is None else np.asarray(positions)
    if ids is not None:
        seq_len = ids.shape[-1]
    several = ids if ids is not None and ids.ndim == 2 else None
    expected = expected_of(rope_config, layer, seq_len, several)
    if not expected.head_dim:
        raise BadInput(f"{rope_config}: no head dim to probe the op with")
    found = probe(
        fn,
        head_dim=expected.head_dim,
        seq_len=seq_len,
        dtype=dtype,
        device=device,
        expected=expected,
        positions=ids,
    )
    wrong = [f.text for f in found.findings]
    if expected.spec is None or found.reading.fit is None or found.reading.axes is not None:
        return found, wrong  # at several axes: the findings hold the layout's check
    for miss in _mismatches(found, expected, variant):
        wrong.append(
            f"its {miss.part} differs from {variant or 'the exact table'}'s at "
            f"{len(miss.positions)} positions ({_few(miss.positions)}), dims {_few(miss.dims)}, "
            f"by up to {miss.max_abs:.3g}"
        )
    return found, wrong


def _mismatches(found: Report, expected: Expected, variant: str | None) -> list[Mismatch]:
    from ..core.dtypes import match_margin
    from .rotation_report import planes

    reading = found.reading
    rows = len(reading.act.positions)
    spec = expected.spec
    pairing = reading.fit.pairing
    said = []
    if variant is None:
        exact = planes(spec.replace(variant="exact", dtype="float64"), rows, None)
        # the error float32 (or half) arithmetic makes of an angle p * w: compare's rule
        limit = match_margin(rows, reading.act.dtype)
    else:
        exact, limit = planes(spec, rows, variant), 0.0
    parts = ("cosine", "sine")
    for part, values, want in zip(parts, (reading.fit.c.real, reading.fit.c.imag), exact):
        if want.shape != values.shape:
            continue  # another number of pairs: the rotary-dims finding has said so
        gap = np.abs(values - want)  # the table holds its attention factor (YaRN's) itself
        bad = gap > limit
        if bad.any():
            rows_off, pairs_off = np.nonzero(bad)
            dims = sorted(
                {int(d) for k in set(pairs_off) for d in (pairing.first[k], pairing.second[k])}
            )
            said.append(Mismatch(part, sorted(set(rows_off.tolist())), dims, float(gap.max())))
    return said


def _few(values: list[int]) -> str:
    from ..core.names import compact

    return compact(values) if len(values) < 40 else f"{compact(values[:12])}, ..."
