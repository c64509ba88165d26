"""The README's commands, run as written, print what the README shows.

Every `$ pe-cli ...` line in the README's code blocks is run in a shell (pipes included) in a
scratch folder holding the two files the README's examples read; each line shown under it
must appear in the real output (lines with timings or elisions are skipped). The set-up
commands' last step, `pe-cli generate --d-model 512 --seq-len 1024`, is among them; the
test command itself is what CI runs.

Some figures the README shows are errors of float32 recipes that torch computes differently on
each CPU (the README says which). Those lines are not compared with the README's digits: the
notebook's or library's own code is run here, its error measured against an independent
reference (tests/figures.py), and pe-cli's output must carry those figures.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import torch

from pe_cli.engine import build

from . import figures, notebooks, reference
from .libraries import hf_rotary

README = Path(__file__).resolve().parents[1] / "README.md"


def _examples():
    """(command, shown lines) for every `$ ` line in the README's code blocks."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", README.read_text(), flags=re.S)
    found = []
    for block in blocks:
        current = None
        for line in block.splitlines():
            if line.startswith("$ "):
                current = (line[2:], [])
                found.append(current)
            elif current is not None:
                current[1].append(line)
    return found


def _comparable(line: str) -> bool:
    skip = ("time ", "...", "…", "━", "files in")
    return line.strip() != "" and not any(s in line for s in skip)


def _normal(line: str) -> str:
    return " ".join(line.split())


# ------------------------------------------------------------ figures that vary by CPU, here


SEEDS = {
    "exp-div": notebooks.seed002,
    "pow": notebooks.seed000_original,
    "stack": notebooks.seed004,
    "exp-log": notebooks.seed003,
    "neg-pow": notebooks.seed001,
}


def _seed_audit() -> dict[str, str]:
    """`compare` of the seed notebooks' float32 tables (d 512, 1024 positions) against the truth."""
    frequencies = [mpmath.power(10000, -mpmath.mpf(2 * i) / 512) for i in range(256)]
    sin, cos = figures.sin_cos(np.arange(1024), frequencies)
    truth = np.stack([sin, cos], axis=2).reshape(1024, 512)  # interleaved, as the paper
    lines = {}
    for name, notebook in SEEDS.items():
        d = figures.difference(notebook(512, 1024).reshape(1024, 512).numpy(), truth)
        lines[name] = figures.audit_row(name, d)
        lines[f"{name} band"] = figures.band_row(name, d)
    return lines


def _rope_truth(d: int, base: float, length: int, rope: dict):
    """The true cos table (half-split pairing) and transformers' float32 one."""
    frequencies, _ = reference.rope_frequencies(d, base, rope, length)
    _, cos = figures.sin_cos(np.arange(length), frequencies)
    return np.concatenate([cos, cos], axis=1)


def _rope_audit() -> dict[str, str]:
    """`compare --family rope`: transformers' table, and with bfloat16 position ids."""
    d, base, length = 128, 500000.0, 65536
    truth = _rope_truth(d, base, length, {})
    positions = torch.arange(length)
    lines = {}
    for name, label, ids in (
        ("hf-rope", "hf-rope", positions),
        ("rope-positions", "rope-positions (bfloat16)", positions.to(torch.bfloat16)),
    ):
        cos = hf_rotary({}, d, base, ids)[0].numpy()
        lines[name] = figures.audit_row(label, figures.difference(cos, truth))
    return lines


LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


def _llama3_against_transformers() -> dict[str, str]:
    """`compare` of the exact Llama 3.1 cos table (float32) with transformers' (131072 positions)."""
    d, base, length = 128, 500000.0, 131072
    exact = _rope_truth(d, base, length, LLAMA3).astype(np.float32)
    cos = hf_rotary(dict(LLAMA3, max_position_embeddings=131072), d, base, list(range(length)))[
        0
    ].numpy()
    return figures.comparison_lines(figures.difference(exact, cos.astype(np.float64)))


def _llama31_config() -> dict[str, str]:
    """The line after `generate --rope-config llama31.json -o`: transformers' float32 table
    (its own module, run here) against the true one, over all 131072 positions."""
    d, base, length = 128, 500000.0, 131072
    exact = _rope_truth(d, base, length, LLAMA3).astype(np.float32)
    cos = hf_rotary(dict(LLAMA3, max_position_embeddings=131072), d, base, list(range(length)))[
        0
    ].numpy()
    gap = np.abs(exact.astype(np.float64) - cos.astype(np.float64)).max()
    return {
        "transformers:": f"transformers: its table (--variant hf-rope) differs from this one by "
        f"up to {gap:.3g}: max |difference| over the whole table"
    }


def _bloom() -> dict[str, str]:
    """`compare` of BLOOM's float32 slopes for 24 heads with the exact ones."""
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    slopes = _get_alibi_slopes(24, torch.device("cpu")).numpy()[None, :]
    exact = np.array([[float(m) for m in reference.alibi_slopes(24)]])
    return figures.comparison_lines(figures.difference(slopes, exact))


MACHINE_FIGURES = {
    "pe-cli compare --d-model 512 --seq-len 1024": _seed_audit,
    "pe-cli compare --family rope -d 128 -l 65536 --base 500000": _rope_audit,
    "pe-cli compare llama3.safetensors:cos hf-rope:cos --family rope -d 128 --base 500000 "
    "--rope rope_type=llama3 --rope factor=8 --rope low_freq_factor=1 --rope high_freq_factor=4 "
    "--rope original_max_position_embeddings=8192": _llama3_against_transformers,
    "pe-cli compare bloom --family alibi --heads 24": _bloom,
    "pe-cli generate --rope-config llama31.json -o llama31.npy": _llama31_config,
}


def _figure_key(line: str, section: str, expected: dict) -> str | None:
    """Which recomputed line a README line stands for: a table row by its first cell (in the
    band table: with ' band'), a summary line by its label."""
    if "│" in line:
        key = line.split()[0] + section
    else:
        key = next((k for k in expected if line.startswith(k)), None)
    return key if key in expected else None


def _flux_cos(path):
    """The README's FLUX example: diffusers' cos table at 1024 x 1024 (its Python block, as written)."""
    block = re.search(
        r"```python\n(import numpy as np, torch\nfrom diffusers.*?)```",
        README.read_text(),
        flags=re.S,
    )
    exec(compile(block.group(1).replace('"flux_cos.npy"', repr(str(path))), "README", "exec"), {})


def test_readme_commands_run_as_written(tmp_path):
    examples = _examples()
    assert len(examples) >= 7
    assert any(cmd == "pe-cli generate --d-model 512 --seq-len 1024" for cmd, _ in examples)
    assert set(MACHINE_FIGURES) <= {cmd for cmd, _ in examples}
    np.save(tmp_path / "seed000.npy", notebooks.seed000_as_written(64, 100).numpy())
    np.save(
        tmp_path / "positions.npy",
        build(d_model=512, seq_len=1026, convention="fairseq", padding_idx=1).numpy(),
    )
    _flux_cos(tmp_path / "flux_cos.npy")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "COLUMNS": "100",
        "NO_COLOR": "1",
    }
    for command, shown in examples:
        result = subprocess.run(
            command, shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
        )
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
        actual = {_normal(line) for line in (result.stdout + result.stderr).splitlines()}
        expected = (
            {k: _normal(v) for k, v in MACHINE_FIGURES[command]().items()}
            if command in MACHINE_FIGURES
            else {}
        )
        section, recomputed = "", set()
        for line in map(_normal, filter(_comparable, shown)):
            if line.startswith("max |err| by position band"):
                section = " band"
            key = _figure_key(line, section, expected)
            if key is None:
                assert line in actual, (command, line)
            else:  # the figures this machine's torch gives, not the README's
                assert expected[key] in actual, (command, expected[key], sorted(actual))
                recomputed.add(key)
        assert not expected or recomputed, command
