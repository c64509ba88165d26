"""The README's commands, run as written, print what the README shows.

Every `$ pe-cli ...` line in the README's code blocks is run in a shell (pipes included) in a
scratch folder holding the two files the README's examples read; each line shown under it
must appear in the real output (lines with timings or elisions are skipped). The set-up
commands' last step, `pe-cli generate --d-model 512 --seq-len 1024`, is among them; the
test command itself is what CI runs.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from pe_cli.engine import build

from . import notebooks

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


def test_readme_commands_run_as_written(tmp_path):
    examples = _examples()
    assert len(examples) >= 7
    assert any(cmd == "pe-cli generate --d-model 512 --seq-len 1024" for cmd, _ in examples)
    np.save(tmp_path / "seed000.npy", notebooks.seed000_as_written(64, 100).numpy())
    np.save(tmp_path / "positions.npy", build(d_model=512, seq_len=1026, convention="fairseq", padding_idx=1).numpy())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "COLUMNS": "100", "NO_COLOR": "1"}
    for command, shown in examples:
        result = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
        actual = {" ".join(line.split()) for line in (result.stdout + result.stderr).splitlines()}
        for line in filter(_comparable, shown):
            assert " ".join(line.split()) in actual, (command, line)
