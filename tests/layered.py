"""What the tests that run transformers' own small models hold pe-cli to, layer by layer: a
config.json's model view (show --json) against what each layer of the model applied
(tools/transformers_layers.Schedule), each treatment's table built once."""

import dataclasses
import io
import json

import numpy as np

from tools import transformers_layers as tl


def _rows(tensor) -> np.ndarray:
    """A recorded cos or sin as (positions, width): the first sequence's."""
    return tensor.reshape(-1, *tensor.shape[-2:])[0].numpy()


def parts(recorded) -> list:
    """(config part, its Schedule) for each part of a model made of parts (BLT), else
    [(None, the model's)]."""
    if not recorded.parts:
        return [(None, recorded)]
    return [
        (key, dataclasses.replace(recorded, layers=layers, parts={}))
        for key, layers in recorded.parts.items()
    ]


def holds(cli, path, recorded, what="", part=None) -> None:
    """pe-cli's view of the config at `path` says each layer's treatment as the model applied
    it: NoPE where it applied none (and --layer N is refused so), else a table that is, bit for
    bit, its cos and sin (built once per treatment, from the command the view prints, at as
    many positions as the layer saw). A model made of parts (BLT) is held so part by part,
    each with --config-part."""
    if recorded.parts and part is None:
        for key, one in parts(recorded):
            holds(cli, path, one, what, key)
        return
    chosen = ("--config-part", part) if part else ()
    code, out, err = cli("show", "--rope-config", path, *chosen, "--json", "-l", tl.TOKENS)
    assert code == 0, (what, part, err)
    model = json.loads(out)["model"]
    assert len(model["layers"]) == len(recorded.layers), (what, part)
    built: dict = {}
    refused = False
    for index, applied in enumerate(recorded.layers):
        name = model["layers"][index]
        assert (name is None) == (applied is None), (what, part, index, name)
        if applied is None:
            if not refused:  # the first NoPE layer: one line, exit 2, nothing written
                code, out, err = cli("generate", "--rope-config", path, *chosen, "--layer", index)
                assert code == 2 and not out and "NoPE" in err, (what, part, index, err)
                refused = True
            continue
        theirs = [_rows(t) for t in applied.tables]
        if name not in built:
            first = model["treatments"][name]["layers"][0]
            built[name] = []
            for table in ("cos", "sin"):
                code, out, err = cli(
                    "generate", "--rope-config", path, *chosen, "--layer", first,
                    "--variant", "hf-rope", "--part", table, "-l", len(theirs[0]), "-o", "-",
                )  # fmt: skip
                assert code == 0, (what, part, index, err)
                built[name].append(np.load(io.BytesIO(out)))
        for table, mine, their in zip(("cos", "sin"), built[name], theirs):
            assert mine.shape == their.shape, (what, part, index, table)
            assert np.array_equal(mine, their), (what, part, index, table)
    encoder(cli, path, recorded, what)


def encoder(cli, path, recorded, what="") -> None:
    """An encoder-decoder model's encoder layers that rotate (Moonshine's) rotate by the table
    pe-cli gives for its decoder (the config's one set of rope parameters), at as many
    positions as the encoder had frames."""
    for index, applied in enumerate(recorded.encoder):
        if applied is None:
            continue
        for table, theirs in zip(("cos", "sin"), map(_rows, applied.tables)):
            code, out, err = cli(
                "generate", "--rope-config", path, "--layer", 0, "--variant", "hf-rope",
                "--part", table, "-l", len(theirs), "-o", "-",
            )  # fmt: skip
            assert code == 0, (what, "encoder", index, err)
            assert np.array_equal(np.load(io.BytesIO(out)), theirs), (what, "encoder", index)
