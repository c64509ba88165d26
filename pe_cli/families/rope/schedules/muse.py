"""Muse Spark and Glimmer: a layer whose layer_rope_theta is 0 applies no rotation (by
default every fourth counted back from the last); any other value rotates by the model's one
table, whatever theta it says."""

from .base import Schedule, flags


def _rotates(settings, index: int, layer_type):
    count = settings.get("num_hidden_layers")
    theta = flags(
        settings, "layer_rope_theta", index, lambda i: 0 if (count - 1 - i) % 4 == 0 else 1
    )
    return f"NoPE: layer_rope_theta[{index}] = 0" if theta == 0 else None


SCHEDULES = (
    Schedule(
        ("muse_spark_text", "muse_glimmer_text"), keys=("layer_rope_theta",), rotates=_rotates
    ),
)
