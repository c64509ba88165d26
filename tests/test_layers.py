"""Every decoder layer of every transformers language model with rope parameters, as the model
itself applies it: a small model is built from its config class, run, and the cos and sin each
layer's attention hands its rotary apply function recorded (tools/transformers_layers.py).
pe-cli, given that config.json and `--layer N --variant hf-rope`, builds those tables bit for
bit; a layer that applies none is refused as NoPE; `show --json`'s layers say the same."""

import json

import numpy as np
import pytest

pytest.importorskip("transformers", reason="transformers is not installed")

from tools import transformers_layers as tl  # noqa: E402


def _recorded(model_type):
    try:
        return tl.record(model_type)
    except Exception as e:  # transformers' own small model does not run: nothing to hold to
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("model_type", tl.candidates())
def test_each_layer_is_the_models_own(model_type, cli, tmp_path):
    recorded = _recorded(model_type)
    if isinstance(recorded, str):
        pytest.skip(f"transformers' small {model_type} does not run: {recorded[:160]}")
    path = tmp_path / "config.json"
    path.write_text(recorded.config.to_json_string())
    code, out, err = cli("show", "--rope-config", path, "--json")
    assert code == 0, err
    model = json.loads(out)["model"]
    assert len(model["layers"]) == len(recorded.layers)
    for index, applied in enumerate(recorded.layers):
        assert (model["layers"][index] is None) == (applied is None), index
        if applied is None:
            code, out, err = cli("generate", "--rope-config", path, "--layer", index)
            assert code == 2 and not out, index
            assert len(err.splitlines()) == 1 and "NoPE" in err, err
            continue
        for part, theirs in zip(("cos", "sin"), applied.tables):
            code, out, err = cli(
                "generate", "--rope-config", path, "--layer", index, "--variant", "hf-rope",
                "--part", part, "-l", tl.TOKENS, "-o", "-",
            )  # fmt: skip
            assert code == 0, (index, err)
            import io

            mine = np.load(io.BytesIO(out))
            assert mine.shape == tuple(theirs.shape), (index, part)
            assert np.array_equal(mine, theirs.numpy()), (index, part)
