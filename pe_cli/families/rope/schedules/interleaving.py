"""Models whose rotary embedding returns a rotate_half table (each frequency in columns i and
i + n) while their attention turns interleaved pairs: their apply_rotary_pos_emb keeps the first
half of cos and sin, repeats each column twice (repeat_interleave) and rotates dims 2i with
2i + 1 (GLM, GLM-4, ERNIE 4.5, Helium, Moonshine in transformers 5.23). Read back from the op
itself by pe_cli.probe (tests/test_probe.py)."""

from .base import Schedule

SCHEDULES = (
    Schedule(
        ("glm", "glm4", "ernie4_5", "ernie4_5_moe", "helium", "moonshine"),
        applied=lambda settings, index, layer_type: "interleaved",
    ),
)
