"""The other frequency dtype of a table diffusers computes: get_1d_rotary_pos_embed's freqs_dtype
is the model's choice (float64 in FLUX and Wan, float32 on Apple's MPS and in HunyuanVideo), so
a table pe-cli reads as exactly RoPE but not bit for bit may be diffusers' in the dtype its
preset does not name (Wan's per-axis tables of float64 frequencies, FLUX on MPS)."""

from __future__ import annotations

from dataclasses import asdict

from ..family import FAMILY

TRIED = 3  # the best exact candidates whose other frequency dtype is tried


def other_dtypes(bench, found: list):
    """Library candidates of the best exact candidates' specs in the frequency dtype they were
    not read in (a 1-D table's: float64, its default being float32), where none is bit for
    bit already."""
    if any(c.identical or (not c.confirmed and c.difference.identical) for c in found):
        return
    exact = sorted(
        (c for c in found if c.spec.variant == "exact"), key=lambda c: c.difference.max_abs
    )
    for c in exact[:TRIED]:
        dtype = "float32" if c.spec.freqs_dtype == "float64" else "float64"
        reference = None
        for name, variant in FAMILY.variants.items():
            if variant.kind != "library" or c.spec.convention not in variant.conventions:
                continue
            # only a variant that computes in a frequency dtype takes one
            spec = bench.spec(
                **{**asdict(c.spec), "variant": name, "freqs_dtype": dtype, "dtype": bench.dtype}
            )
            if spec is not None:
                reference = bench.reference(c.spec) if reference is None else reference
                yield bench.candidate(f"library {name}", spec, variant.source, reference)
