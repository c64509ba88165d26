"""Running a library's own code in a process of its own (another venv, or an environment
variable set before it imports): a harness script reads a JSON list of cases and writes each
case's table to FOLDER/NAME.npy, which the test side loads by name."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path


def run_harness(python, script, cases: list[dict], who: str, env=None, reports=False) -> dict:
    """Each case's table from `script` run by `python` (-P: the script's folder, tests/, must
    not shadow the library's imports), by name; with `reports`, (table, the JSON the script
    wrote beside it as NAME.json). A failed run raises with its stderr."""
    import numpy as np

    with tempfile.TemporaryDirectory() as folder:
        request = Path(folder) / "cases.json"
        request.write_text(json.dumps(cases))
        done = subprocess.run(
            [str(python), "-P", str(script), str(request), folder],
            capture_output=True,
            text=True,
            env=env,
        )
        if done.returncode:
            raise RuntimeError(f"{who} harness failed:\n{done.stderr[-4000:]}")
        found = {case["name"]: np.load(Path(folder) / f"{case['name']}.npy") for case in cases}
        if reports:
            return {
                name: (table, json.loads((Path(folder) / f"{name}.json").read_text()))
                for name, table in found.items()
            }
        return found
