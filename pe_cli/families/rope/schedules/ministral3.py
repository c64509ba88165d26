"""Ministral 3 and Mistral 4: every layer multiplies its queries, after the rotation, by 1 +
llama_4_scaling_beta * log(1 + floor(p / original_max_position_embeddings)), both keys of
rope_parameters."""

from .base import QueryScale, Schedule


def _scale(settings, index: int, layer_type, rope: dict):
    beta = rope.get("llama_4_scaling_beta")
    if not beta:  # 0 or absent: transformers multiplies by 1 (absent: its call fails)
        return None
    return QueryScale(
        "llama4-beta",
        (
            ("llama_4_scaling_beta", float(beta)),
            ("original_max_position_embeddings", int(rope["original_max_position_embeddings"])),
        ),
        "llama_4_scaling_beta, original_max_position_embeddings",
    )


def _engines(settings, layers) -> list[str]:
    if all(layer.scale is None for layer in layers):
        return []
    return [
        "vLLM reads llama_4_scaling_beta from a Mistral-format params.json only: from this "
        "config.json it multiplies the queries by no scale"
    ]


SCHEDULES = (
    Schedule(("ministral3",), keys=("llama_4_scaling_beta",), scale=_scale, engines=_engines),
    # Mistral 4's multi-head latent attention: DeepSeek-V3's interleaved pairs, by rope_interleave
    Schedule(
        ("mistral4",),
        keys=("llama_4_scaling_beta", "rope_interleave"),
        scale=_scale,
        engines=_engines,
        applied=lambda settings, index, layer_type: (
            "interleaved" if settings.get("rope_interleave") else None
        ),
    ),
)
