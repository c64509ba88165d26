"""Helpers for a port's own test suite.

    from pe_cli.testing import assert_rotation

    def test_rotary_matches_llama():
        assert_rotation(my_rope, rope_config="config.json", variant="hf-rope")

`assert_rotation` probes the op on unit vectors (pe_cli.probe) and raises an AssertionError whose
message is the report: which dims turn and how, which positions and dims differ from the model's
layer, and the generate command of the expected table.
"""

from __future__ import annotations


def assert_rotation(
    fn,
    *,
    rope_config: str,
    variant: str | None = None,
    layer: int | None = None,
    seq_len: int = 256,
    dtype: str = "float32",
    device: str = "cpu",
    positions=None,
):
    """Raise AssertionError unless `fn(x, positions) -> rotated x` applies what layer `layer`
    of the model in `rope_config` (a config.json) applies: its pairing, its rotary dims, and
    its cos and sin (the library `variant`'s bit for bit; without one, the exact table's
    within the error arithmetic in `dtype` makes, compare FILE's rule). `positions`, (seq_len,)
    or M-RoPE's (3, seq_len), are handed to fn (see pe_cli.probe). Returns the report where
    it does."""
    import textwrap

    from .analysis.probe import check_rotation
    from .render import _folded
    from .render.rotation import lines

    found, wrong = check_rotation(
        fn,
        rope_config=str(rope_config),
        variant=variant,
        layer=layer,
        seq_len=seq_len,
        dtype=dtype,
        device=device,
        positions=positions,
    )
    if not wrong:
        return found
    said = lines(found)
    for text in wrong[len(found.findings) :]:  # how its cos and sin differ, beyond the findings
        said += textwrap.wrap(f"- {text}", 80, subsequent_indent="    ")
    expected = found.expected
    if expected is not None and expected.spec is not None:
        said.append("the expected table (its cos):")
        said += _folded(_command(expected, variant, seq_len), 80).split("\n")
    raise AssertionError("\n".join(said))


def _command(expected, variant, seq_len) -> str:
    """The generate command of the cos plane the layer applies (its spec's part and
    convention: rotation_planes')."""
    import shlex

    spec = expected.spec
    words = shlex.split(expected.command) if expected.command else ["pe-cli", "generate"]
    words += ["--variant", variant] if variant else []
    words += ["--part", spec.part, "--convention", spec.convention]
    # at several position axes the table's rows are the tokens of its --ids
    words += ["--ids", spec.ids] if spec.ids is not None else ["-l", str(seq_len)]
    return shlex.join(words)
