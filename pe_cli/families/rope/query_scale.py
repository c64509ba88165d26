"""--part query-scale: the factor a layer multiplies its queries by at each position, beside its
rotation, one value per position (a layer's schedule says which layers: schedules/):

    llama4-beta   1 + llama_4_scaling_beta * ln(1 + floor(p / original_max_position_embeddings))
                  (Ministral 3, Mistral 4: every layer, after the rotation)
    temperature   1 + attn_scale * ln(1 + floor((p + 1) / floor_scale))
                  (Llama 4's attn_temperature_tuning: its NoPE layers)

Exact: each distinct floor's logarithm to 70 digits, correctly rounded. hf-rope: transformers'
own float32 arithmetic (the division, floor and logarithm of float32 tensors, the Python floats
as scalars), before its cast to the query's dtype.
"""

from __future__ import annotations

from decimal import Decimal

from ...core.errors import BadInput

# the rope parameters each kind reads, by kind
KINDS = {
    "llama4-beta": ("llama_4_scaling_beta", "original_max_position_embeddings"),
    "temperature": ("floor_scale", "attn_scale"),
}


def kind_of(rope: dict) -> str:
    """The kind of query scale a table's rope parameters give, or BadInput naming the keys."""
    for kind, keys in KINDS.items():
        if keys[0] in rope:
            missing = [k for k in keys if k not in rope]
            if missing:
                raise BadInput(f"--part query-scale of kind {kind} needs {', '.join(missing)}")
            return kind
    raise BadInput(
        "--part query-scale needs a query scale's rope parameters: llama_4_scaling_beta and "
        "original_max_position_embeddings (Ministral 3), or floor_scale and attn_scale (Llama 4's "
        "NoPE layers; --rope-config MODEL --layer N gives a layer's)"
    )


def _step(kind: str, rope: dict, position: int) -> int:
    """The whole number whose logarithm the scale at a position takes."""
    if kind == "llama4-beta":
        return position // int(rope["original_max_position_embeddings"])
    return int((Decimal(position) + 1) // Decimal(float(rope["floor_scale"])))


def exact_values(rope: dict, positions) -> list[Decimal]:
    """The scale at each position, to 70 digits (a few logarithms: one per distinct step)."""
    from ...numerics.frequencies import context

    kind = kind_of(rope)
    # the parameter's float64 value, exactly (as every exact table takes its base)
    weight = Decimal(float(rope["llama_4_scaling_beta" if kind == "llama4-beta" else "attn_scale"]))
    found: dict[int, Decimal] = {}
    values = []
    with context():
        for position in positions:
            step = _step(kind, rope, int(position))
            if step not in found:
                found[step] = 1 + weight * Decimal(1 + step).ln()
            values.append(found[step])
    return values


def torch_values(torch, rope: dict, positions):
    """transformers 5.23's float32 scale at each position (int64 positions)."""
    kind = kind_of(rope)
    p = torch.as_tensor(positions, dtype=torch.int64)
    if kind == "llama4-beta":  # get_llama_4_attn_scale: int64 / int is a float32 division
        original = rope["original_max_position_embeddings"]
        return 1 + rope["llama_4_scaling_beta"] * torch.log(1 + torch.floor(p / original))
    # Llama4TextAttention: positions.float() + 1.0, over floor_scale, floored, log1p
    steps = torch.floor((p.float() + 1.0) / rope["floor_scale"])
    return torch.log1p(steps) * rope["attn_scale"] + 1.0
