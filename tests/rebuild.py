"""The rebuild property, held wherever a test runs `compare FILE`: a table compare calls bit for
bit (and one command builds: not a composed one) is rebuilt byte for byte by the generate
command it prints, by the command its --json gives, and by its --json spec. The `cli` fixture
(tests/conftest.py) runs this after every `compare FILE` that exits 0, so every table of the
conformance suites (transformers', diffusers', positional-encodings', timm's, the engines')
that a test identifies is held to it, whatever else that test asserts."""

import json
import shlex
import tempfile
from pathlib import Path

import numpy as np

from pe_cli.engine import build
from pe_cli.io.read import looks_like_file, open_table


def printed_command(text: str) -> str | None:
    """The command a text claim prints after 'rebuilt by:', its folded lines joined."""
    lines = text.splitlines()
    starts = [k for k, line in enumerate(lines) if line.rstrip().endswith("rebuilt by:")]
    if not starts:
        return None
    assert len(starts) == 1, f"more than one command printed:\n{text}"
    words = []
    for line in lines[starts[0] + 1 :]:
        if not line.startswith("    "):
            break
        words.append(line.strip().removesuffix("\\").strip())
        if not line.endswith("\\"):
            break
    return " ".join(words)


def _claim(out: bytes) -> tuple[str | None, dict | None]:
    """The command a compare output says rebuilds its file, and the --json's spec (None where
    the output is text, or claims nothing bit for bit)."""
    text = out.decode(errors="replace")
    try:
        found = json.loads(text)
    except ValueError:
        return printed_command(text), None
    if not isinstance(found, dict) or not found.get("command"):
        return None, None
    best = found["candidates"][0]
    assert best["differing"] == 0 and best["confirmed"], f"a command for a non-match: {best}"
    assert found["command"] == best["command"], "the --json's command is not its best's"
    return found["command"], best["spec"]


def _bits(source: str) -> tuple[str, tuple, np.ndarray]:
    """A table file's dtype, shape and elements, widened exactly to float64, as bits."""
    stored = open_table(source)
    count = int(np.prod(stored.shape))
    return stored.dtype, tuple(stored.shape), stored.elements(0, count).view(np.uint64)


def _same(file: str, rebuilt, what: str) -> None:
    dtype, shape, bits = _bits(file)
    dtype2, shape2, bits2 = rebuilt
    assert (dtype2, shape2) == (dtype, shape), f"{what} builds {dtype2} {shape2}, not {shape}"
    assert np.array_equal(bits2, bits), f"{what} builds other bytes than {file}"


def hold(invoke, args: list[str], out: bytes) -> None:
    """After `compare FILE [options]` printed `out`: whatever it claims to rebuild, rebuilt
    (`invoke` runs the CLI without this check) and compared with the file bit for bit."""
    if len(args) < 2 or args[0] != "compare" or not looks_like_file(args[1]):
        return
    if any(looks_like_file(a) and Path(a).exists() for a in args[2:] if not a.startswith("-")):
        return  # A against B: a comparison, not an identification
    command, spec = _claim(out)
    if command is None:
        return
    words = shlex.split(command)
    assert words[:2] == ["pe-cli", "generate"], command
    suffix = ".safetensors" if _bits(args[1])[0] == "bfloat16" else ".npy"
    with tempfile.TemporaryDirectory() as folder:
        again = str(Path(folder) / f"rebuilt{suffix}")
        code, _, err = invoke(*words[1:], "-o", again)
        assert code == 0, f"{command}: {err}"
        _same(args[1], _bits(again), command)
    if spec is not None:
        values = build(**spec)
        table = values.torch().contiguous()
        widened = table.double().numpy().reshape(-1).view(np.uint64)
        _same(args[1], (values.spec.dtype, tuple(table.shape), widened), f"the --json spec {spec}")
