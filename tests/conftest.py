import os

import pytest

# Pin the terminal so CLI assertions do not depend on where the tests run.
os.environ["TERMINAL_WIDTH"] = "100"
os.environ["COLUMNS"] = "100"
os.environ["_TYPER_FORCE_DISABLE_TERMINAL"] = "1"
for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "PE_CLI_DEBUG"):
    os.environ.pop(name, None)


@pytest.fixture
def cli():
    """Run the CLI in-process; returns (exit_code, stdout bytes, stderr text)."""
    from typer.testing import CliRunner

    from pe_cli.cli.app import app

    runner = CliRunner()

    def run(*args, env=None):
        result = runner.invoke(app, [str(a) for a in args], env=env)
        return result.exit_code, result.stdout_bytes, result.stderr

    return run
