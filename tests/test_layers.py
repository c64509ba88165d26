"""Every decoder layer of every transformers token model with rope parameters, as the model
itself applies it: a small model is built from its config class, run, and the cos and sin each
layer's attention hands its rotary apply function recorded (tools/transformers_layers.py).
pe-cli, given that config.json and `--layer N --variant hf-rope`, builds those tables bit for
bit; a layer that applies none is refused as NoPE; `show --json`'s layers say the same
(tests/layered.py).

Then no config key that moves a rotation is silently ignored: each key of the model's config
class is moved (tools/transformers_layers.moves: a flag flipped, a number changed, None, a
per-layer list reordered), the small model run again, and where what some layer applies
changes, pe-cli from that config.json holds to it in the same way, or refuses the config in
one line."""

import pytest

pytest.importorskip("transformers", reason="transformers is not installed")

from tools import transformers_layers as tl  # noqa: E402

from .layered import holds, parts  # noqa: E402


@pytest.mark.parametrize("model_type", tl.candidates())
def test_each_layer_and_each_key_that_moves_one(model_type, cli, tmp_path):
    recorded = tl.default(model_type)  # every type's small model runs: none is left out
    path = tmp_path / "config.json"
    path.write_text(recorded.config.to_json_string())
    holds(cli, path, recorded, model_type)
    for key, found in tl.moved(model_type):
        path = tmp_path / f"{key}.json"
        path.write_text(found.config.to_json_string())
        for part, one in parts(found):  # a model made of parts (BLT): each part
            chosen = ("--config-part", part) if part else ()
            code, out, err = cli("show", "--rope-config", path, *chosen, "--json", "-l", tl.TOKENS)
            if code != 0:  # refused: one line that says why
                assert code == 2 and len(err.splitlines()) == 1 and err.startswith("Error: "), key
                continue
            holds(cli, path, one, key, part)
