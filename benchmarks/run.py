"""pe-cli against the obvious alternative, measured in one run.

    python benchmarks/run.py [--runs 5] [--large-runs 3] [--dir /tmp]

The alternative is a short script that builds the table as the seeds do (torch float32, the
Annotated Transformer's exp-log recipe) and saves it with numpy.save; this file writes that
script itself. Every figure is the median of several runs of the whole process; ratios are
taken between figures measured in this same run. Peak memory is the process's peak resident
set (getrusage). Accuracy samples elements of each side's output and compares them with
mpmath at 256 bits (mpmath comes with torch). Last come the inspection commands (alone with
--inspection): identification against generating the same table, `compare A B` against
numpy scripts, and `show` of a 2 GiB table; and `show --precision bf16` of Llama 3.1's
config against `show` (alone with --precision).

    python benchmarks/run.py --startup-against DIR [--runs 21]

times only start-up (each command's --help, --version) and the small job of this checkout
against another checkout's code (`git worktree add DIR COMMIT`), interleaved in one run.

    python benchmarks/run.py --identify-against DIR [--large-runs 5]

times `compare FILE` of four large tables (fairseq's, exact and its own, transformers' RoPE,
PixArt's grid) by this checkout's code and another's, interleaved in one run.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = """\
import math, sys
import numpy as np
import torch

d_model, seq_len, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pe = torch.zeros(seq_len, d_model)
position = torch.arange(0, seq_len, dtype=torch.float).unsqueeze(1)
div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term)
np.save(path, pe.numpy())
"""

# RoPE as Hugging Face's rotary embedding computes it (float32 inv_freq, positions and angles)
ROPE_SCRIPT = """\
import sys
import numpy as np
import torch

dim, seq_len, base, path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
freqs = torch.arange(seq_len)[:, None].float() * inv_freq
emb = torch.cat((freqs, freqs), dim=-1)
np.save(path, emb.cos().numpy())
"""

# compare two tables as a user would with numpy: load both and take the largest difference, in
# float64 (the difference of two float32 tables, exactly) and as float32 arrays
NUMPY_COMPARE = """\
import sys
import numpy as np

a = np.load(sys.argv[1]).astype(np.float64)
b = np.load(sys.argv[2])
print(np.abs(a - b).max())
"""
NUMPY_COMPARE_32 = """\
import sys
import numpy as np

print(np.abs(np.load(sys.argv[1]) - np.load(sys.argv[2])).max())
"""

# runs a command; prints its wall seconds and peak resident set (KiB) on stderr's last line
PEAK = (
    "import resource, subprocess, sys, time; "
    "started = time.perf_counter(); "
    "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "seconds = time.perf_counter() - started; "
    "print(seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(code)"
)


# Every command runs as after a normal install: Python may cache bytecode (a session that
# sets PYTHONDONTWRITEBYTECODE would otherwise time compiling pe-cli at every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(
    command: list[str], cleanup: Path | None = None, env: dict | None = None
) -> tuple[float, int]:
    """Wall seconds and peak KiB of one run of `command` (the file it makes removed first, and
    the page cache's dirty pages flushed, so that no run pays for the one before)."""
    if cleanup is not None and cleanup.exists():
        cleanup.unlink()
    os.sync()
    result = subprocess.run(
        [sys.executable, "-c", PEAK, *command], capture_output=True, env=env or ENV
    )
    if result.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{result.stderr.decode()}")
    seconds, peak = result.stderr.decode().split()[-2:]
    return float(seconds), int(peak)


def median_runs(commands: dict[str, tuple], runs: int):
    """Each command, (argv, file it writes or None[, environment]), once untimed (to warm
    caches), then `runs` times, interleaved; medians of seconds and of peak KiB."""
    for command in commands.values():
        measure(*command)
    times = {name: [] for name in commands}
    peaks = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            seconds, peak = measure(*command)
            times[name].append(seconds)
            peaks[name].append(peak)
    return (
        {name: statistics.median(v) for name, v in times.items()},
        {name: statistics.median(v) for name, v in peaks.items()},
    )


def sinusoid_truth(p: int, j: int, d: int):
    """Column j at position p of the paper's table (base 10000)."""
    import mpmath

    angle = p * mpmath.power(10000, -mpmath.mpf(2 * (j // 2)) / d)
    return mpmath.sin(angle) if j % 2 == 0 else mpmath.cos(angle)


def rope_cos_truth(base: float):
    """Column j at position p of a RoPE cos table (half-split pairing, theta `base`)."""
    import mpmath

    return lambda p, j, d: mpmath.cos(p * mpmath.mpf(base) ** (-mpmath.mpf(2 * (j % (d // 2))) / d))


def accuracy(path: Path, samples: int, truth=sinusoid_truth, seed: int = 0) -> tuple[float, float]:
    """Largest error in float32 ulps and the share of correctly rounded elements, over sampled
    elements (half of them among the last 1024 rows) checked against truth(p, j, d)."""
    import mpmath
    import numpy as np

    mpmath.mp.prec = 256
    table = np.load(path, mmap_mode="r")
    table = table.reshape(-1, table.shape[-1])
    rows, d = table.shape
    rng = random.Random(seed)
    worst, right = 0.0, 0
    for _ in range(samples):
        p = rng.choice([rng.randrange(rows), rows - 1 - rng.randrange(min(rows, 1024))])
        j = rng.randrange(d)
        exact = truth(p, j, d)
        value = float(table[p, j])
        exponent = int(mpmath.floor(mpmath.log(abs(exact), 2))) if exact else -149
        ulp = mpmath.power(2, max(exponent - 23, -149))
        worst = max(worst, float(abs(value - exact) / ulp))
        right += value == float(mpmath.nint(exact / ulp) * ulp)
    return worst, right / samples


def dd_command(path: Path, nbytes: int) -> tuple[list[str], Path]:
    """dd writing as many bytes as a table has, into the same place."""
    return [
        "dd",
        "if=/dev/zero",
        f"of={path}",
        "bs=1M",
        f"count={nbytes // 2**20}",
        "status=none",
    ], path


def report(times: dict, peaks: dict, runs: int, title: str) -> None:
    print(f"\n{title}, median of {runs}:")
    for name, seconds in times.items():
        print(f"  {name:<34} {seconds:7.2f} s   peak {peaks[name] / 1024:8.1f} MiB")


def inspection(pe_cli: str, folder: Path, args) -> None:
    """Identification against generating the same table, compare A B against numpy scripts,
    and show, each with its peak memory."""
    table = folder / "fairseq.npy"
    library = folder / "fairseq_library.npy"
    size = ["--d-model", "512", "--seq-len", "65536"]
    fairseq = ["--convention", "fairseq", "--padding-idx", "1"]
    subprocess.run(
        [pe_cli, "generate", *size, "--variant", "fairseq", "-o", str(library)],
        check=True,
        capture_output=True,
    )
    scratch = folder / "scratch.npy"
    commands = {
        "pe-cli generate (fairseq)": (
            [pe_cli, "generate", *size, *fairseq, "-o", str(scratch)],
            scratch,
        ),
        "pe-cli compare FILE (identify it)": ([pe_cli, "compare", str(table)], None),
        "pe-cli generate --variant fairseq": (
            [pe_cli, "generate", *size, "--variant", "fairseq", "-o", str(scratch)],
            scratch,
        ),
        "pe-cli compare LIBRARY-FILE": ([pe_cli, "compare", str(library)], None),
    }
    subprocess.run(
        commands["pe-cli generate (fairseq)"][0][:-1] + [str(table)],
        check=True,
        capture_output=True,
    )
    times, peaks = median_runs(commands, args.large_runs)
    report(
        times,
        peaks,
        args.large_runs,
        "identification of a 65536 x 512 float32 fairseq table (128 MiB): "
        "pe-cli's exact one, and fairseq's own (--variant fairseq)",
    )
    ratio = times["pe-cli compare FILE (identify it)"] / times["pe-cli generate (fairseq)"]
    library_ratio = (
        times["pe-cli compare LIBRARY-FILE"] / times["pe-cli generate --variant fairseq"]
    )
    print(
        f"  identifying pe-cli's table takes {ratio:.1f}x generating it (target 10x), peak "
        f"{peaks['pe-cli compare FILE (identify it)'] / 1024:.0f} MiB (target 512); fairseq's "
        f"own table {library_ratio:.1f}x generating it (target 10x), peak "
        f"{peaks['pe-cli compare LIBRARY-FILE'] / 1024:.0f} MiB"
    )
    for path in (table, library, scratch):
        path.unlink(missing_ok=True)
    for label, made in (
        (
            "transformers' RoPE table, 262144 x 128 float32 (128 MiB)",
            ["--family", "rope", "--variant", "hf-rope", "-d", "128", "-l", "262144"],
        ),
        (
            "PixArt-alpha 1024's 2-D grid, 64 x 64 x 1152 float32 (targets 10 s, 512 MiB)",
            ["--family", "sincos2d", "--variant", "diffusers", "--grid", "64x64", "-d", "1152"]
            + ["--base-size", "64", "--interpolation-scale", "2"],
        ),
    ):
        identified_against_generated(pe_cli, folder, label, made, args.large_runs)

    a, b = folder / "exact.npy", folder / "exp_log.npy"
    rows = ["--d-model", "512", "--seq-len", "1048576"]
    subprocess.run([pe_cli, "generate", *rows, "-o", str(a)], check=True, capture_output=True)
    subprocess.run(
        [pe_cli, "generate", *rows, "--variant", "exp-log", "-o", str(b)],
        check=True,
        capture_output=True,
    )
    scripts = {}
    for name, text in (
        ("numpy_compare.py", NUMPY_COMPARE),
        ("numpy_compare_32.py", NUMPY_COMPARE_32),
    ):
        scripts[name] = folder / name
        scripts[name].write_text(text)
    commands = {
        "pe-cli compare A B": ([pe_cli, "compare", str(a), str(b)], None),
        "numpy script (float64 difference)": (
            [sys.executable, str(scripts["numpy_compare.py"]), str(a), str(b)],
            None,
        ),
        "numpy script (float32 arrays)": (
            [sys.executable, str(scripts["numpy_compare_32.py"]), str(a), str(b)],
            None,
        ),
        "pe-cli show A": ([pe_cli, "show", str(a)], None),
    }
    times, peaks = median_runs(commands, args.large_runs)
    report(
        times,
        peaks,
        args.large_runs,
        "two 1048576 x 512 float32 tables (2 GiB each: exact, exp-log)",
    )
    mine = times["pe-cli compare A B"]
    print(
        f"  compare takes {mine / times['numpy script (float64 difference)']:.2f}x the float64 numpy script "
        f"(target 2x) and {mine / times['numpy script (float32 arrays)']:.2f}x the float32 one; peak "
        f"{peaks['pe-cli compare A B'] / 1024:.0f} MiB (target 512); show peaks at "
        f"{peaks['pe-cli show A'] / 1024:.0f} MiB (target 512)"
    )


def identified_against_generated(pe_cli: str, folder: Path, label: str, made, runs: int) -> None:
    """compare FILE of a table against generate of the same table, medians and peaks, and
    whether what it names is the table bit for bit."""
    table, scratch = folder / "table.npy", folder / "scratch.npy"
    subprocess.run([pe_cli, "generate", *made, "-o", str(table)], check=True, capture_output=True)
    commands = {
        "pe-cli generate": ([pe_cli, "generate", *made, "-o", str(scratch)], scratch),
        "pe-cli compare FILE": ([pe_cli, "compare", str(table)], None),
    }
    times, peaks = median_runs(commands, runs)
    report(times, peaks, runs, f"identification of {label}")
    said = subprocess.run(
        [pe_cli, "compare", str(table)], check=True, capture_output=True, text=True
    ).stdout
    named = "bit for bit" in " ".join(said.partition("\ncandidates")[0].split())
    print(
        f"  identifying takes {times['pe-cli compare FILE'] / times['pe-cli generate']:.1f}x "
        f"generating (target 10x), {times['pe-cli compare FILE']:.2f} s, peak "
        f"{peaks['pe-cli compare FILE'] / 1024:.0f} MiB; named bit for bit: {named}"
    )
    for path in (table, scratch):
        path.unlink(missing_ok=True)


STARTUP_JOBS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "generate --help": ["generate", "--help"],
    "compare --help": ["compare", "--help"],
    "show --help": ["show", "--help"],
    "export --help": ["export", "--help"],
    "small job": ["generate", "--d-model", "512", "--seq-len", "1024", "-o", "{small}"],
}


LAUNCHER = "import sys; sys.argv[0] = 'pe-cli'; from pe_cli import main; main()"
HERE = Path(__file__).resolve().parents[1]


def against(baseline: Path, jobs: dict, runs: int, title: str) -> None:
    """Each job, {name: (pe-cli's arguments, the file it writes or None)}, by this checkout's
    code and by another checkout's (an earlier commit: `git worktree add DIR COMMIT`), each
    through the same launcher with its tree first on PYTHONPATH, interleaved; medians and their
    ratios."""
    commands = {
        (name, label): (
            [sys.executable, "-c", LAUNCHER, *argv],
            writes,
            {**ENV, "PYTHONPATH": str(tree)},
        )
        for name, (argv, writes) in jobs.items()
        for tree, label in ((HERE, "this"), (baseline.resolve(), "baseline"))
    }
    times, peaks = median_runs(commands, runs)
    print(f"{title}, this checkout ({HERE}) against {baseline}, median of {runs} runs each:")
    for name in jobs:
        now, before = times[(name, "this")], times[(name, "baseline")]
        print(
            f"  {name:<32} {now:7.3f} s against {before:7.3f} s ({now / before:5.2f}x); "
            f"peak {peaks[(name, 'this')] / 1024:6.1f} against {peaks[(name, 'baseline')] / 1024:6.1f} MiB"
        )


def startup_against(baseline: Path, folder: Path, runs: int) -> None:
    """Each command's --help, --version and the small job, against another checkout."""
    small = folder / "small.npy"
    jobs = {
        job: ([a.format(small=small) for a in argv], small if "{small}" in argv else None)
        for job, argv in STARTUP_JOBS.items()
    }
    against(baseline, jobs, runs, "start-up")


IDENTIFIED = {  # the tables identification is timed on: generate options, by name
    "fairseq 65536 x 512 (128 MiB)": [
        "--d-model", "512", "--seq-len", "65536", "--convention", "fairseq", "--padding-idx", "1",
    ],
    "fairseq's own, the same size": ["--d-model", "512", "--seq-len", "65536", "--variant", "fairseq"],
    "hf-rope 262144 x 128 (128 MiB)": [
        "--family", "rope", "--variant", "hf-rope", "-d", "128", "-l", "262144",
    ],
    "PixArt 64 x 64 x 1152 (18 MiB)": [
        "--family", "sincos2d", "--variant", "diffusers", "--grid", "64x64", "-d", "1152",
        "--base-size", "64", "--interpolation-scale", "2",
    ],
}  # fmt: skip


def identify_against(baseline: Path, folder: Path, runs: int) -> None:
    """compare FILE of each IDENTIFIED table (made by this checkout), against another
    checkout."""
    jobs = {}
    for k, (name, options) in enumerate(IDENTIFIED.items()):
        table = folder / f"{k}.npy"
        subprocess.run(
            [sys.executable, "-c", LAUNCHER, "generate", *options, "-o", str(table)],
            check=True,
            capture_output=True,
            env={**ENV, "PYTHONPATH": str(HERE)},
        )
        jobs[name] = (["compare", str(table)], None)
    against(baseline, jobs, runs, "compare FILE")


LLAMA_31 = (  # its config.json's positional keys
    '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
    '"rope_theta": 500000.0, "max_position_embeddings": 131072, "rope_scaling": '
    '{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, '
    '"high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}'
)


def serving(pe_cli: str, folder: Path, runs: int) -> None:
    """show --precision bfloat16 of Llama 3.1's config at 131072 positions against show
    without it; and with --variant hf-rope, whose transformers float32 angles import torch."""
    config = folder / "llama31.json"
    config.write_text(LLAMA_31)
    show = [pe_cli, "show", "--rope-config", str(config), "-l", "131072"]
    times, peaks = median_runs(
        {
            "pe-cli show": (show, None),
            "pe-cli show --precision bf16": ([*show, "--precision", "bf16"], None),
            "  and --variant hf-rope": (
                [*show, "--precision", "bf16", "--variant", "hf-rope"],
                None,
            ),
        },
        runs,
    )
    report(times, peaks, runs, "show of Llama 3.1's config, 131072 positions")
    plain = times["pe-cli show"]
    print(f"  --precision bf16 / plain: {times['pe-cli show --precision bf16'] / plain:.2f}x")
    print(f"  with --variant hf-rope / plain: {times['  and --variant hf-rope'] / plain:.2f}x\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="runs of each small command")
    parser.add_argument("--large-runs", type=int, default=5, help="runs of each large job")
    parser.add_argument("--seq-len", type=int, default=1048576, help="large job positions")
    parser.add_argument("--d-model", type=int, default=1024, help="large job width")
    parser.add_argument("--samples", type=int, default=2000, help="elements checked per file")
    parser.add_argument("--dir", default=None, help="folder for the large files")
    parser.add_argument("--inspection", action="store_true", help="only the inspection commands")
    parser.add_argument("--precision", action="store_true", help="only show --precision")
    parser.add_argument(
        "--identify-against",
        type=Path,
        default=None,
        metavar="DIR",
        help="only compare FILE of four large tables, against another checkout's code in DIR",
    )
    parser.add_argument(
        "--startup-against",
        type=Path,
        default=None,
        metavar="DIR",
        help="only start-up and the small job, against another checkout's code in DIR",
    )
    args = parser.parse_args()

    pe_cli = shutil.which("pe-cli")
    if pe_cli is None:
        raise SystemExit("pe-cli is not on PATH: install it first (see README)")
    folder = Path(tempfile.mkdtemp(prefix="pe-cli-bench-", dir=args.dir))
    script = folder / "seed_recipe.py"
    script.write_text(SCRIPT)
    bare = folder / "bare_typer.py"
    bare.write_text(
        "import typer\napp = typer.Typer(rich_markup_mode='rich')\n"
        "@app.command()\ndef a(x: int = 1):\n    'A.'\n"
        "@app.command()\ndef b(x: int = 1):\n    'B.'\napp()\n"
    )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}"
    )
    print(f"files in {folder}\n")
    alone = (  # a part run alone: whether it was asked for, and the part
        (
            args.identify_against,
            lambda: identify_against(args.identify_against, folder, args.large_runs),
        ),
        (args.startup_against, lambda: startup_against(args.startup_against, folder, args.runs)),
        (args.precision, lambda: serving(pe_cli, folder, args.runs)),
        (args.inspection, lambda: inspection(pe_cli, folder, args)),
    )
    for asked, part in alone:
        if asked:
            try:
                part()
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            return
    try:
        small = folder / "small.npy"
        times, peaks = median_runs(
            {
                "pe-cli --version": ([pe_cli, "--version"], None),
                "pe-cli --help": ([pe_cli, "--help"], None),
                "bare Typer app --help": ([sys.executable, str(bare), "--help"], None),
                "pe-cli small job": (
                    [pe_cli, "generate", "--d-model", "512", "--seq-len", "1024", "-o", str(small)],
                    small,
                ),
                "script small job": (
                    [sys.executable, str(script), "512", "1024", str(small)],
                    small,
                ),
            },
            args.runs,
        )
        print(
            f"start-up and the small job (d_model 512, 1024 positions, .npy), median of {args.runs}:"
        )
        for name, seconds in times.items():
            print(f"  {name:<24} {seconds:7.3f} s   peak {peaks[name] / 1024:7.1f} MiB")
        ratio = times["script small job"] / times["pe-cli small job"]
        print(f"  small job: pe-cli is {ratio:.1f}x faster than the script (target 5x)")
        print(
            f"  --version {times['pe-cli --version']:.3f} s (target 0.15), "
            f"--help {times['pe-cli --help']:.3f} s (target 0.3; a bare Typer app "
            f"{times['bare Typer app --help']:.3f} s)\n"
        )

        big = folder / "big.npy"
        nbytes = args.seq_len * args.d_model * 4
        commands = {
            "pe-cli export": (
                [
                    pe_cli,
                    "export",
                    str(big),
                    "--d-model",
                    str(args.d_model),
                    "--seq-len",
                    str(args.seq_len),
                ],
                big,
            ),
            "script": (
                [sys.executable, str(script), str(args.d_model), str(args.seq_len), str(big)],
                big,
            ),
            "dd": dd_command(big, nbytes),
        }
        times, peaks = median_runs(commands, args.large_runs)
        print(
            f"the large job ({args.seq_len} x {args.d_model} float32, {nbytes / 2**30:.2f} GiB, .npy), "
            f"median of {args.large_runs}:"
        )
        for name, seconds in times.items():
            print(
                f"  {name:<14} {seconds:7.2f} s  {nbytes / seconds / 2**30:6.2f} GiB/s   "
                f"peak {peaks[name] / 1024:8.1f} MiB"
            )
        print(
            f"  pe-cli is {times['script'] / times['pe-cli export']:.1f}x faster than the script "
            f"(target 3x) and writes at {times['dd'] / times['pe-cli export']:.0%} of dd's speed "
            f"(target 70%); peak {peaks['pe-cli export'] / 1024:.0f} MiB (target < 512)\n"
        )

        print(f"accuracy, {args.samples} sampled elements of each large file vs mpmath:")
        for name in ("pe-cli export", "script"):
            measure(commands[name][0], big)
            worst, share = accuracy(big, args.samples)
            print(
                f"  {name:<14} max error {worst:12.1f} ulp of float32, correctly rounded {share:.1%}"
            )

        rope_script = folder / "rope_recipe.py"
        rope_script.write_text(ROPE_SCRIPT)
        rope = folder / "rope.npy"
        dim, positions, base = 128, 1048576, "500000"
        rope_bytes = dim * positions * 4
        commands = {
            "pe-cli rope": (
                [
                    pe_cli,
                    "generate",
                    "--family",
                    "rope",
                    "-d",
                    str(dim),
                    "-l",
                    str(positions),
                    "--base",
                    base,
                    "--part",
                    "cos",
                    "-o",
                    str(rope),
                ],
                rope,
            ),
            "pe-cli rope yarn": (
                [
                    pe_cli,
                    "generate",
                    "--family",
                    "rope",
                    "-d",
                    str(dim),
                    "-l",
                    str(positions),
                    "--base",
                    base,
                    "--part",
                    "cos",
                    "--rope",
                    "rope_type=yarn",
                    "--rope",
                    "factor=32",
                    "--rope",
                    "original_max_position_embeddings=4096",
                    "-o",
                    str(rope),
                ],
                rope,
            ),
            "HF-style script": (
                [sys.executable, str(rope_script), str(dim), str(positions), base, str(rope)],
                rope,
            ),
            "dd": dd_command(rope, rope_bytes),
        }
        times, peaks = median_runs(commands, args.large_runs)
        print(
            f"\nRoPE cos table, {positions} positions x head dim {dim}, theta {base} "
            f"({rope_bytes / 2**30:.2f} GiB float32 .npy), median of {args.large_runs}:"
        )
        for name, seconds in times.items():
            print(f"  {name:<16} {seconds:7.2f} s   peak {peaks[name] / 1024:8.1f} MiB")
        print(
            f"  pe-cli is {times['HF-style script'] / times['pe-cli rope']:.1f}x faster than the script, "
            f"at {times['dd'] / times['pe-cli rope']:.0%} of dd's speed; YaRN (factor 32, its "
            f"attention factor on the fast path) takes {times['pe-cli rope yarn'] / times['pe-cli rope']:.2f}x "
            "the default table (target 1.5x)"
        )
        for name in ("pe-cli rope", "HF-style script"):
            measure(commands[name][0], rope)
            worst, share = accuracy(rope, args.samples, rope_cos_truth(float(base)))
            print(
                f"  {name:<16} max error {worst:12.1f} ulp of float32, correctly rounded {share:.1%}"
            )
        rope.unlink(missing_ok=True)
        inspection(pe_cli, folder, args)
        serving(pe_cli, folder, args.large_runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
