"""What the tests that run transformers' own small models hold pe-cli to, layer by layer: a
config.json's model view (show --json) against what each layer of the model applied
(tools/transformers_layers.Schedule), each treatment's table built once."""

import io
import json

import numpy as np

from tools import transformers_layers as tl


def holds(cli, path, recorded, what="") -> None:
    """pe-cli's view of the config at `path` says each layer's treatment as the model applied
    it: NoPE where it applied none (and --layer N is refused so), else a table that is, bit for
    bit, its cos and sin (built once per treatment, from the command the view prints)."""
    code, out, err = cli("show", "--rope-config", path, "--json", "-l", tl.TOKENS)
    assert code == 0, (what, err)
    model = json.loads(out)["model"]
    assert len(model["layers"]) == len(recorded.layers), what
    built: dict = {}
    refused = False
    for index, applied in enumerate(recorded.layers):
        name = model["layers"][index]
        assert (name is None) == (applied is None), (what, index, name)
        if applied is None:
            if not refused:  # the first NoPE layer: one line, exit 2, nothing written
                code, out, err = cli("generate", "--rope-config", path, "--layer", index)
                assert code == 2 and not out and "NoPE" in err, (what, index, err)
                refused = True
            continue
        if name not in built:
            first = model["treatments"][name]["layers"][0]
            built[name] = []
            for part in ("cos", "sin"):
                code, out, err = cli(
                    "generate", "--rope-config", path, "--layer", first, "--variant", "hf-rope",
                    "--part", part, "-l", tl.TOKENS, "-o", "-",
                )  # fmt: skip
                assert code == 0, (what, index, err)
                built[name].append(np.load(io.BytesIO(out)))
        for part, mine, theirs in zip(("cos", "sin"), built[name], applied.tables):
            assert mine.shape == tuple(theirs.shape), (what, index, part)
            assert np.array_equal(mine, theirs.numpy()), (what, index, part)
    encoder(cli, path, recorded, what)


def encoder(cli, path, recorded, what="") -> None:
    """An encoder-decoder model's encoder layers that rotate (Moonshine's) rotate by the table
    pe-cli gives for its decoder (the config's one set of rope parameters), at as many
    positions as the encoder had frames."""
    for index, applied in enumerate(recorded.encoder):
        if applied is None:
            continue
        tables = [t.reshape(-1, *t.shape[-2:])[0].numpy() for t in applied.tables]
        for part, theirs in zip(("cos", "sin"), tables):
            code, out, err = cli(
                "generate", "--rope-config", path, "--layer", 0, "--variant", "hf-rope",
                "--part", part, "-l", len(theirs), "-o", "-",
            )  # fmt: skip
            assert code == 0, (what, "encoder", index, err)
            assert np.array_equal(np.load(io.BytesIO(out)), theirs), (what, "encoder", index)
