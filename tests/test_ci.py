"""The README's test commands: the full run is what CI runs, and the inner loop it documents
selects by the markers tests/conftest.py applies."""

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands():
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if "pytest" in line]


def test_the_readme_test_command_is_what_ci_runs():
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "pytest" in line]
    assert len(ci) == 1 and ci[0] in _readme_commands()


def test_the_inner_loop_leaves_out_the_slow_and_conformance_tests():
    inner = [c for c in _readme_commands() if not c.startswith("python3 -m venv")]
    assert len(inner) == 1
    words = shlex.split(inner[0])
    assert words[:3] == ["python", "-m", "pytest"]
    assert words[words.index("-m", 3) + 1] == "not slow and not conformance"
