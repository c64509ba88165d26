"""Real processes and real pipes, as a user's shell runs them."""

import subprocess
import sys

import numpy as np

from pe_cli.engine import build

PE_CLI = [sys.executable, "-m", "pe_cli"]


def test_npy_through_a_pipe_into_another_program():
    reader = (
        "import io, sys, numpy as np\n"
        "table = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)\n"
        "np.save(sys.stdout.buffer, table)"
    )
    producer = subprocess.Popen(
        [*PE_CLI, "generate", "-d", "64", "-l", "300", "-o", "-", "--format", "npy"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    consumer = subprocess.run(
        [sys.executable, "-c", reader], stdin=producer.stdout, capture_output=True
    )
    producer.stdout.close()
    assert producer.wait() == 0 and producer.stderr.read() == b""
    import io

    table = np.load(io.BytesIO(consumer.stdout))
    assert np.array_equal(table, build(d_model=64, seq_len=300).numpy())


def test_reader_that_closes_early_is_not_an_error_message():
    for fmt in ("npy", "csv"):
        result = subprocess.run(
            f"{sys.executable} -m pe_cli generate -d 512 -l 20000 -o - --format {fmt} | head -c 10",
            shell=True,
            capture_output=True,
        )
        assert len(result.stdout) == 10
        assert result.stderr == b""


def test_binary_is_not_written_to_a_terminal():
    import os
    import pty

    leader, follower = pty.openpty()
    result = subprocess.run(
        [*PE_CLI, "generate", "-d", "8", "-l", "2", "-o", "-"],
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    os.close(follower)
    os.close(leader)
    assert result.returncode == 2
    assert b"refusing to write binary data to a terminal" in result.stderr


def test_examples_run():
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    shell = subprocess.run(
        ["bash", root / "examples" / "pipe.sh"], capture_output=True, env=env, text=True
    )
    assert shell.returncode == 0, shell.stderr
    assert "received (1024, 512) float32" in shell.stdout and "p=1 sin=0.84147096" in shell.stdout
    python = subprocess.run(
        [sys.executable, root / "examples" / "embedding.py"], capture_output=True, text=True
    )
    assert python.returncode == 0, python.stderr
    assert "agree bit for bit: True" in python.stdout


def _interrupt_export(tmp_path, signum):
    import os
    import signal
    import time

    target = tmp_path / "big.npy"
    target.write_bytes(b"the old table")
    process = subprocess.Popen(
        [*PE_CLI, "generate", "-d", "1024", "-l", "1000000", "-o", str(target), "--force"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # as from a terminal: a shell's background job starts with SIGINT ignored, and so would
        # pe-cli, where Ctrl-C could never reach it
        preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until the temporary file has data in it
        partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
        if partial and partial[0].stat().st_size > 1 << 20:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the export never started writing")
    os.kill(process.pid, signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum
    assert b"Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.npy"]
    assert target.read_bytes() == b"the old table"


def test_sigint_mid_export_leaves_the_old_file(tmp_path):
    import signal

    _interrupt_export(tmp_path, signal.SIGINT)


def test_sigterm_mid_export_leaves_the_old_file(tmp_path):
    import signal

    _interrupt_export(tmp_path, signal.SIGTERM)


def test_inspect_examples_run():
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", root / "examples" / "inspect.sh"], capture_output=True, env=env, text=True
    )
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert (
        "positions.npy: matches fairseq (padding_idx=1), base 10000, first position 0, bit for bit"
        in text
    )
    assert "the first at position 1, dimension 1; position 0 is bit for bit equal" in text


def test_progress_bar_on_a_terminal_only(tmp_path):
    from .terminal import run_on_terminal

    command = ["generate", "-d", "1024", "-l", "40000", "-o", str(tmp_path / "big.npy")]
    code, shown = run_on_terminal(command, stdout=subprocess.DEVNULL, columns=100)
    assert code == 0
    assert b"/156.3 MiB" in shown and b"B/s" in shown  # size done of total, and the rate
    piped = subprocess.run([*PE_CLI, *command, "--force"], capture_output=True, timeout=120)
    assert b"/s" not in piped.stderr and piped.stderr.count(b"\n") == 1  # just the summary line
