"""The examples of the README and docs/, run as written, print what they show; the pages'
links lead somewhere, and the README fits on a page.

The code blocks of README.md and docs/*.md are run in document order, README first, in one
scratch folder: a ```python block is executed there, and in any other block each `$ ...`
line is run in a shell (pipes included; a line ending in `\\` goes on to the next; the
set-up blocks have no `$` lines). Each line shown under a command must appear in the
command's real output at 80 columns (lines with timings or elisions are skipped). A command or
block that two documents show runs once, and both documents' lines are checked against its
output. The set-up command's last step, `pe-cli generate --d-model 512 --seq-len 1024`, is
among them; the test command itself is what CI runs.

Some figures the documents show are errors of float32 recipes that torch computes
differently on each CPU (docs/accuracy.md says which). Those lines are not compared with the
documents' digits: the notebook's or library's own code is run here, its error measured
against an independent reference (tests/figures.py), and pe-cli's output must carry those
figures.
"""

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import mpmath
import numpy as np
import torch

from . import figures, notebooks, reference
from .libraries import hf_rotary
from .rope_models import LLAMA3

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
COLUMNS = 80  # the examples' output is shown as a terminal of this width prints it


def documents() -> list[Path]:
    """The files whose examples run: the README, then docs/ by name."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


@dataclass
class Example:
    """A `$ ` command (shell) or a ```python block, and the lines a document shows under it."""

    where: str  # document:line
    language: str  # "shell" or "python"
    code: str  # as run
    shown: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The same example in two documents: a command's words, a block's text."""
        if self.language == "python":
            return self.code
        return " ".join(self.code.replace("\\\n", " ").split())


def examples(path: Path) -> list[Example]:
    """Every example of one document, in its order."""
    name = path.relative_to(ROOT).as_posix()
    lines = path.read_text().splitlines()
    found: list[Example] = []
    k = 0
    while k < len(lines):
        fence = re.match(r"```(\S*)", lines[k])
        k += 1
        if not fence:
            continue
        start = k
        while not lines[k].startswith("```"):
            k += 1
        block, k = lines[start:k], k + 1
        if fence.group(1) == "python":
            found.append(Example(f"{name}:{start + 1}", "python", "\n".join(block) + "\n"))
            continue
        current = None
        j = 0
        while j < len(block):
            line = block[j]
            if line.startswith("$ "):
                command = [line[2:]]
                while command[-1].endswith("\\") and j + 1 < len(block):
                    j += 1
                    command.append(block[j])
                current = Example(f"{name}:{start + j + 1}", "shell", "\n".join(command))
                found.append(current)
            elif current is not None:
                current.shown.append(line)
            j += 1
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


def _sinusoid_truth(d: int, length: int) -> np.ndarray:
    """The paper's table (base 10000, interleaved sin and cos) to about 4e-15."""
    frequencies = [mpmath.power(10000, -mpmath.mpf(2 * i) / d) for i in range(d // 2)]
    sin, cos = figures.sin_cos(np.arange(length), frequencies)
    return np.stack([sin, cos], axis=2).reshape(length, d)


def _seed_audit() -> dict[str, str]:
    """`compare` of the seed notebooks' float32 tables (d 512, 1024 positions) against the truth."""
    truth = _sinusoid_truth(512, 1024)
    lines = {}
    for name, notebook in SEEDS.items():
        d = figures.difference(notebook(512, 1024).reshape(1024, 512).numpy(), truth)
        lines[name] = figures.audit_row(name, d)
        lines[f"{name} band"] = figures.band_row(name, d)
    return lines


def _annotated() -> dict[str, str]:
    """`compare annotated.npy exact`: the Annotated Transformer's float32 buffer (the README's
    tour builds it with the notebook's code, as seed 003 does) against the exact float32
    table, the true one rounded once."""
    table = notebooks.seed003(512, 1024).reshape(1024, 512).numpy()
    exact = _sinusoid_truth(512, 1024).astype(np.float32).astype(np.float64)
    return figures.comparison_lines(figures.difference(table, exact))


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


@functools.cache
def _llama3_tables() -> tuple[np.ndarray, np.ndarray]:
    """Llama 3.1's cos table at 131072 positions: the exact one (float32) and transformers'
    (its own module, run here)."""
    d, base, length = 128, 500000.0, 131072
    exact = _rope_truth(d, base, length, LLAMA3).astype(np.float32)
    cos = hf_rotary(dict(LLAMA3, max_position_embeddings=131072), d, base, list(range(length)))[
        0
    ].numpy()
    return exact, cos


def _llama3_against_transformers() -> dict[str, str]:
    """`compare` of the exact Llama 3.1 cos table (float32) with transformers' (131072 positions)."""
    exact, cos = _llama3_tables()
    return figures.comparison_lines(figures.difference(exact, cos.astype(np.float64)))


def _llama31_config() -> dict[str, str]:
    """The line after `generate --rope-config llama31.json -o`: transformers' float32 table
    against the true one, over all 131072 positions."""
    exact, cos = _llama3_tables()
    gap = np.abs(exact.astype(np.float64) - cos.astype(np.float64)).max()
    return {
        "transformers:": f"transformers: its table (--variant hf-rope) differs from this one by "
        f"up to {gap:.3g}: max |difference| over the whole table"
    }


def _mlx_against_transformers() -> dict[str, str]:
    """`compare mlx:cos hf-rope:cos` of Llama 3.1 at 131072 positions: MLX's own table (mlx-lm's
    Llama3RoPE over mx.fast.rope on the CPU, rotating unit vectors) against transformers'
    module, both run here (their float32 cos differ by CPU)."""
    import mlx.core as mx
    from mlx_lm.models.rope_utils import initialize_rope

    mx.set_default_device(mx.cpu)
    d, base, length = 128, 500000.0, 131072
    rotate = initialize_rope(d, base, False, dict(LLAMA3), length)
    x = np.zeros((1, 1, length, d), np.float32)
    x[..., : d // 2] = 1.0  # each pair (i, i + d/2) from (1, 0): its first element is cos
    out = rotate(mx.array(x), 0)
    mx.eval(out)
    half = np.array(out)[0, 0, :, : d // 2]
    mlx_cos = np.concatenate([half, half], axis=1)
    _, hf_cos = _llama3_tables()
    differ = mlx_cos != hf_cos
    lines = figures.comparison_lines(figures.difference(mlx_cos, hf_cos.astype(np.float64)))
    return {
        "verdict": lines["verdict"],
        "where": f"where {int(differ.sum())} of {differ.size} elements differ, the first at "
        f"position {int(np.argwhere(differ)[0][0])},",
    }


def _bloom() -> dict[str, str]:
    """`compare` of BLOOM's float32 slopes for 24 heads with the exact ones."""
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    slopes = _get_alibi_slopes(24, torch.device("cpu")).numpy()[None, :]
    exact = np.array([[float(m) for m in reference.alibi_slopes(24)]])
    return figures.comparison_lines(figures.difference(slopes, exact))


MACHINE_FIGURES = {
    "pe-cli compare --d-model 512 --seq-len 1024": _seed_audit,
    "pe-cli compare annotated.npy exact": _annotated,
    "COLUMNS=100 pe-cli compare --family rope -d 128 -l 65536 --base 500000": _rope_audit,
    "pe-cli compare llama3.safetensors:cos hf-rope:cos --family rope -d 128 --base 500000 "
    "--rope rope_type=llama3 --rope factor=8 --rope low_freq_factor=1 --rope high_freq_factor=4 "
    "--rope original_max_position_embeddings=8192": _llama3_against_transformers,
    "pe-cli compare mlx:cos hf-rope:cos --family rope -d 128 -l 131072 --base 500000 "
    "--rope rope_type=llama3 --rope factor=8 --rope low_freq_factor=1 --rope high_freq_factor=4 "
    "--rope original_max_position_embeddings=8192": _mlx_against_transformers,
    "pe-cli compare bloom --family alibi --heads 24": _bloom,
    "pe-cli generate --rope-config llama31.json -o llama31.npy": _llama31_config,
}


def _figure_key(line: str, section: str, expected: dict) -> str | None:
    """Which recomputed line a shown line stands for: a table row by its first cell (in the
    band table: with ' band'), a summary line by its label."""
    if "│" in line:
        key = line.split()[0] + section
    else:
        key = next((k for k in expected if line.startswith(k)), None)
    return key if key in expected else None


# ------------------------------------------------------------------------------ the test


def _check(example: Example, output: str, expected: dict, problems: list[str]) -> set[str]:
    """Each shown line in the output (a recomputed one where the machine decides it); the
    recomputed keys met."""
    actual = {_normal(line) for line in output.splitlines()}
    text = _normal(output)  # a recomputed line may be the start of one the terminal folds
    section, recomputed = "", set()
    for line in map(_normal, filter(_comparable, example.shown)):
        if line.startswith("max |err| by position band"):
            section = " band"
        key = _figure_key(line, section, expected)
        if key is None:
            if line not in actual:
                problems.append(f"{example.where}: `{example.key}` does not print: {line}")
        else:  # the figure this machine's torch gives, not the document's
            if expected[key] not in text:
                problems.append(
                    f"{example.where}: `{example.key}` does not print, on this machine: "
                    f"{expected[key]}"
                )
            recomputed.add(key)
    return recomputed


def test_documents_examples_run_as_written(tmp_path, monkeypatch):
    found = [example for path in documents() for example in examples(path)]
    commands = {example.key for example in found}
    assert "pe-cli generate --d-model 512 --seq-len 1024" in commands
    assert set(MACHINE_FIGURES) <= commands, set(MACHINE_FIGURES) - commands
    monkeypatch.chdir(tmp_path)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "COLUMNS": str(COLUMNS),
        "TERMINAL_WIDTH": str(COLUMNS),
        "NO_COLOR": "1",
    }
    outputs: dict[str, str] = {}
    problems: list[str] = []
    figures_here: dict[str, dict[str, str]] = {}
    for example in found:
        if example.key not in outputs:
            if example.language == "python":
                exec(compile(example.code, example.where, "exec"), {"__name__": "__main__"})
                outputs[example.key] = ""
            else:
                result = subprocess.run(
                    example.code,
                    shell=True,
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=300,
                )
                assert result.returncode == 0, (example.where, example.code, result.stderr)
                assert "Traceback" not in result.stderr, (example.where, result.stderr)
                outputs[example.key] = result.stdout + result.stderr
        if example.key in MACHINE_FIGURES and example.key not in figures_here:
            figures_here[example.key] = {
                k: _normal(v) for k, v in MACHINE_FIGURES[example.key]().items()
            }
        expected = figures_here.get(example.key, {})
        recomputed = _check(example, outputs[example.key], expected, problems)
        if expected and not recomputed:
            problems.append(f"{example.where}: `{example.key}` shows no figure of this machine's")
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- the pages


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a document's headings: lower case, punctuation but hyphens
    dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", path.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_between_the_documents_lead_somewhere():
    """Every relative link of the README and docs/ names a file that exists and, with
    `#anchor`, one of its headings: the reference moved into docs/ and is found by links."""
    broken = []
    for path in documents():
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            name, _, anchor = target.partition("#")
            linked = (path.parent / name).resolve() if name else path
            if not linked.exists() or (anchor and anchor not in _anchors(linked)):
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken
    listed = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", README.read_text()))
    assert listed == {p.name for p in documents()[1:]}, "the README links every page of docs/"


def test_the_readme_fits_on_a_page():
    """Under 250 lines, its prose within 80 columns (code blocks show what commands print)."""
    text = README.read_text()
    assert len(text.splitlines()) < 250
    setup = text[text.index("## Set up") : text.index("## A five-minute tour")]
    prose = re.sub(r"```.*?```", "", text.replace(setup, ""), flags=re.S)
    assert [line for line in prose.splitlines() if len(line) > 80] == []
