"""The other frequency dtype of a table diffusers computes: get_1d_rotary_pos_embed's freqs_dtype
is the model's choice (float64 in FLUX and Wan, float32 on Apple's MPS and in HunyuanVideo), so
a table pe-cli reads as exactly RoPE but not bit for bit may be diffusers' in the dtype its
preset does not name (Wan's per-axis tables of float64 frequencies, FLUX on MPS)."""

from __future__ import annotations

from ...proposals import Proposal

TRIED = 3  # the best exact candidates whose other frequency dtype is tried


def other_dtypes(found: list):
    """The library variants of the best exact readings (the scorer's answers, `found`) in the
    frequency dtype they were not read in (a 1-D table's: float64, its default being float32),
    where none is bit for bit already."""
    if any(s.named for s in found):
        return
    exact = sorted((s for s in found if s.spec.variant == "exact"), key=lambda s: s.max_abs)
    for s in exact[:TRIED]:
        dtype = "float32" if s.spec.freqs_dtype == "float64" else "float64"
        yield Proposal("", s.spec, itself=False, library_changes={"freqs_dtype": dtype})
