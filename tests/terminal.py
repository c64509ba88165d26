"""Run pe-cli on a pseudo-terminal and collect everything it shows, as a person would see it."""

import os
import pty
import select
import subprocess
import sys
import time

PE_CLI = [sys.executable, "-m", "pe_cli"]


def run_on_terminal(args, env=None, columns=80, stdout=None, timeout=120):
    """(exit code, bytes shown): stdin, stderr and (unless given) stdout on one pty, read while
    the process runs so that it never blocks on a full terminal buffer."""
    leader, follower = pty.openpty()
    environment = {
        **os.environ,
        "COLUMNS": str(columns),
        "LINES": "30",
        "TERM": "xterm-256color",
        **(env or {}),
    }
    for name in ("TERMINAL_WIDTH", "_TYPER_FORCE_DISABLE_TERMINAL"):
        environment.pop(name, None)
    process = subprocess.Popen(
        [*PE_CLI, *args],
        stdin=follower,
        stdout=stdout or follower,
        stderr=follower,
        env=environment,
    )
    os.close(follower)
    shown, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=max(1.0, deadline - time.monotonic())), shown
