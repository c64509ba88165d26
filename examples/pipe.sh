#!/usr/bin/env bash
# pe-cli in Unix pipes: data on stdout, nothing else.
set -euo pipefail

# 1. A .npy stream into another program (here a Python one-liner; any npy reader works).
pe-cli generate --d-model 512 --seq-len 1024 -o - |
  python3 -c 'import io, sys, numpy as np
table = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
print("received", table.shape, table.dtype, "row norms", np.linalg.norm(table, axis=1)[:3])'

# 2. CSV into awk: the first three positions of dimension 0 (column 2; column 1 is the position).
pe-cli generate --d-model 8 --seq-len 3 -o - --format csv | awk -F, 'NR > 1 { print "p=" $1, "sin=" $2 }'

# 3. Raw little-endian bytes, checked against the checksum `pe-cli generate` prints.
pe-cli generate --d-model 512 --seq-len 1024 -o - --format raw | sha256sum
