"""Models whose attention pairs the dims it rotates otherwise than their table's columns say:
- a rotate_half table (each frequency in columns i and i + n) turned in interleaved pairs: the
  apply function keeps the first half of cos and sin, repeats each column twice
  (repeat_interleave) and rotates dims 2i with 2i + 1 (GLM, GLM-4, ERNIE 4.5, Helium,
  Moonshine in transformers 5.23);
- a table of one column per pair (a complex freqs_cis, or cos and sin of half the head), which
  says no pairing of its own: Llama 4 and DeepSeek-V2 turn it by view_as_complex, in
  interleaved pairs, the privacy filter x[..., ::2] with x[..., 1::2]; gpt-oss turns its two
  halves (torch.chunk).
Each read back from the op itself by pe_cli.probe (tests/test_probe_models.py,
tests/test_probe_pairs.py)."""

from .base import Schedule

SCHEDULES = (
    Schedule(
        ("glm", "glm4", "ernie4_5", "ernie4_5_moe", "helium", "moonshine", "deepseek_v2",
         "openai_privacy_filter"),
        applied=lambda settings, index, layer_type: "interleaved",
    ),
    Schedule(("gpt_oss",), applied=lambda settings, index, layer_type: "half"),
)  # fmt: skip
