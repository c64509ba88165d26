"""Measure how far pe-cli's exact tables are from the true values (mpmath at 256 bits).

    python benchmarks/accuracy.py [--samples N]

Prints, per position range, the largest and mean error of float64 output in ulps, and the
share of float64/float32/float16/bfloat16 elements that are the correctly rounded value.
Needs mpmath (pip install -e '.[test]').
"""

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from pe_cli.engine import build  # noqa: E402
from tests import reference  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=4000, help="elements per position range")
    parser.add_argument("--d-model", type=int, default=512)
    args = parser.parse_args()
    rng = random.Random(0)
    d = args.d_model
    print(f"vaswani, d_model={d}, base 10000; {args.samples} sampled elements per range\n")
    print(
        f"{'positions':>22}  {'float64 max ulp':>15}  {'mean ulp':>9}  correctly rounded f64/f32/f16/bf16"
    )
    for low, high in [
        (0, 2**10),
        (2**10, 2**20),
        (2**20 - 2**10, 2**20 + 2**10),
        (2**24 - 64, 2**24 + 64),
        (2**32 - 129, 2**32 - 1),
    ]:
        rows = 64
        worst, total, count, right, seen = 0.0, 0.0, 0, 0, 0
        per_block = max(1, args.samples // 8)
        for _ in range(8):
            offset = rng.randrange(low, max(low + 1, high - rows))
            tables = {
                dtype: build(d_model=d, seq_len=rows, offset=offset, dtype=dtype).float64()
                for dtype in ("float64", "float32", "float16", "bfloat16")
            }
            for _ in range(per_block):
                i, j = rng.randrange(rows), rng.randrange(d)
                truth = reference.value("vaswani", d, 10000.0, offset + i, j)
                e = reference.ulps(float(tables["float64"][i, j]), truth, "float64")
                worst, total, count = max(worst, e), total + e, count + 1
                for dtype in ("float64", "float32", "float16", "bfloat16"):
                    seen += 1
                    right += float(tables[dtype][i, j]) == reference.round_to(truth, dtype)
        print(f"{low:>10} .. {high:<10}  {worst:>15.3f}  {total / count:>9.3f}  {right}/{seen}")


if __name__ == "__main__":
    main()
