"""Limits every table obeys, and what this machine has room for."""

from __future__ import annotations

import os
from contextlib import contextmanager

# The exact engine multiplies positions by 21-bit pieces of each frequency in float64; below
# 2**32 every such product is exact (numerics/exact.py).
POSITION_BITS = 32
MAX_POSITION = 2**POSITION_BITS - 1


def available_memory() -> int:
    """Bytes of memory this process can still allocate without swapping (MemAvailable)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def human_size(nbytes: float) -> str:
    """A size for a person, in binary units as `ls -h` gives them: '512 bytes', '3.0 KiB',
    '64 MiB', '1.5 GiB' (one decimal below 10, whole numbers above)."""
    if nbytes < 1024:
        return f"{nbytes:.0f} byte{'' if round(nbytes) == 1 else 's'}"
    value, unit = float(nbytes), "bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if round(value, 1 if value < 10 else 0) < 1024 or unit == "PiB":
            break
    return f"{value:.1f} {unit}" if round(value, 1) < 10 else f"{value:.0f} {unit}"


@contextmanager
def one_thread(torch):
    """torch's CPU math on one thread, for arithmetic that must give the same bits on every run.
    On two threads a vector math call can differ from run to run in the elements after the
    split: MKL's float64 sin in its last bits (about 1 process in 15 here), and a process's
    first float32 cos over two threads, in 2 runs of 40, by 1e-5 in the second thread's half."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
