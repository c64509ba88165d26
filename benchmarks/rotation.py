"""Time and memory of `pe-cli compare AFTER --before BEFORE` beside `pe-cli compare A B` of the
same two files (issue 41: a (131072, 32, 128) float32 pair, 2 GiB a file).

    python benchmarks/rotation.py [--positions 131072] [--heads 32] [--head-dim 128] [--dir D]
                                  [--repeat 3] [--keep]

Writes BEFORE (random q, positions x heads x head_dim) and AFTER (transformers' Llama rotation
of it, base 500000) into D, runs each command in its own process, the two in turn --repeat
times, and prints each run's wall time, peak resident memory (ru_maxrss of the child) and CPU
time (user and system), then the medians. With --keep and --dir the files stay in D and a later
run with the same sizes reuses them. Needs transformers (pip install -e '.[test]').
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _write(folder: Path, positions: int, heads: int, head_dim: int) -> tuple[Path, Path]:
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    config = LlamaConfig(
        hidden_size=heads * head_dim, num_attention_heads=heads, head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
    )  # fmt: skip
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    before = np.lib.format.open_memmap(
        folder / "before.npy", "w+", np.float32, (positions, heads, head_dim)
    )
    after = np.lib.format.open_memmap(
        folder / "after.npy", "w+", np.float32, (positions, heads, head_dim)
    )
    generator = torch.Generator().manual_seed(0)
    step = 8192
    for start in range(0, positions, step):
        stop = min(positions, start + step)
        q = torch.randn(1, heads, stop - start, head_dim, generator=generator)
        cos, sin = rotary(q, torch.arange(start, stop)[None])
        turned = modeling_llama.apply_rotary_pos_emb(q, q, cos, sin)[0]
        before[start:stop] = q[0].permute(1, 0, 2).numpy()
        after[start:stop] = turned[0].permute(1, 0, 2).numpy()
    before.flush(), after.flush()
    return folder / "before.npy", folder / "after.npy"


def _flat(path: Path) -> Path:
    """The same bytes as a (positions, heads * head_dim) table: compare A B reads 2-D tables."""
    values = np.load(path, mmap_mode="r")
    flat = path.with_name(path.stem + "_2d.npy")
    out = np.lib.format.open_memmap(flat, "w+", values.dtype, (len(values), values[0].size))
    step = 8192
    for start in range(0, len(values), step):
        out[start : start + step] = values[start : start + step].reshape(-1, values[0].size)
    out.flush()
    return flat


def _run(words: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, peak resident MiB, CPU seconds (user and system: what the load of shared
    cores moves least; all three the child's own) and the last line of one command."""
    code = (
        "import atexit, resource, sys; atexit.register(lambda: sys.stderr.write("
        "'peak {0.ru_maxrss} cpu {1}\\n'.format(resource.getrusage(resource.RUSAGE_SELF), "
        "sum(resource.getrusage(resource.RUSAGE_SELF)[:2]))));"
        "from pe_cli import main; sys.argv[0] = 'pe-cli'; main()"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    lines = (done.stdout + done.stderr).strip().splitlines()
    peak, cpu = 0.0, 0.0
    if lines and lines[-1].startswith("peak "):
        words = lines.pop().split()
        peak, cpu = float(words[1]) / 1024, float(words[3])
    return seconds, peak, cpu, lines[-1] if lines else f"exit {done.returncode}"


def flat(path: Path) -> Path:
    return path.with_name(path.stem + "_2d.npy")


def main() -> None:
    import contextlib
    import statistics

    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=131072)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep (and reuse) the files in --dir")
    args = parser.parse_args()
    if args.keep and args.dir is None:
        parser.error("--keep needs --dir")
    sizes = f"{args.positions}x{args.heads}x{args.head_dim}"
    if args.keep:
        place = contextlib.nullcontext(str(args.dir / sizes))
        (args.dir / sizes).mkdir(parents=True, exist_ok=True)
    else:
        place = tempfile.TemporaryDirectory(dir=args.dir)
    with place as folder:
        before, after = Path(folder) / "before.npy", Path(folder) / "after.npy"
        if not (args.keep and flat(after).exists()):
            # written by a child process: a child's peak memory starts at its parent's, and
            # this process stays small (no torch) so that the commands' own peaks are measured
            here = Path(__file__).resolve().parent
            write = (
                f"import sys; sys.path.insert(0, {str(here)!r}); from pathlib import Path; "
                f"from rotation import _write, _flat; b, a = _write(Path({folder!r}), "
                f"{args.positions}, {args.heads}, {args.head_dim}); _flat(b); _flat(a)"
            )
            subprocess.run([sys.executable, "-c", write], check=True)
        size = before.stat().st_size / 2**30
        print(f"two files of {args.positions} x {args.heads} x {args.head_dim} float32, "
              f"{size:.2f} GiB each")  # fmt: skip
        commands = {
            "compare AFTER --before BEFORE": ["compare", str(after), "--before", str(before)],
            "compare A B (2-D)": ["compare", str(flat(after)), str(flat(before))],
        }
        runs = {name: [] for name in commands}
        for _ in range(args.repeat):  # the two in turn, so that both see the same load
            for name, words in commands.items():
                seconds, peak, cpu, last = _run(words)
                runs[name].append((seconds, peak, cpu))
                print(
                    f"{name:30} {seconds:6.1f} s  peak {peak:4.0f} MiB  cpu {cpu:5.1f} s  "
                    f"{last.strip()[:20]}"
                )
        for name, measured in runs.items():
            seconds, peak, cpu = (statistics.median(m[k] for m in measured) for k in range(3))
            print(
                f"median of {len(measured)}: {name:30} {seconds:6.1f} s  peak {peak:4.0f} MiB  "
                f"cpu {cpu:5.1f} s"
            )


if __name__ == "__main__":
    main()
