#!/usr/bin/env bash
# Worked examples of `show` and `compare`; examples/inspect.txt is their output
# (COLUMNS=100 bash examples/inspect.sh > examples/inspect.txt).
set -euo pipefail
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
cd "$folder"

# How far each seed notebook's formula, computed in float32, is from the exact table.
pe-cli compare --d-model 512 --seq-len 1024

# The same in bfloat16: unusable past the first few positions.
pe-cli compare --d-model 512 --seq-len 1024 --compute-dtype bfloat16

# What is this table? A fairseq-style table written by someone else's code (here: pe-cli).
pe-cli generate --d-model 512 --seq-len 1026 --convention fairseq --padding-idx 1 -o positions.npy 2>/dev/null
pe-cli compare positions.npy

# Seed 000 as written multiplies where it must divide: compare says where it goes wrong.
python3 - seed000.npy <<'PY'
import sys, torch, numpy as np
d_model, seq_len = 64, 100
pe = torch.zeros(seq_len, d_model)
position = torch.arange(0, seq_len, dtype=torch.float32).unsqueeze(1)
vector = torch.arange(0, d_model, 2, dtype=torch.float32)
denominator_original = torch.pow(10000, vector / d_model)
pe[:, 0::2] = torch.sin(position * denominator_original)
pe[:, 1::2] = torch.cos(position * denominator_original)
np.save(sys.argv[1], pe.numpy())
PY
pe-cli compare seed000.npy exact:vaswani || true

# The picture everyone draws, in the terminal.
pe-cli show --d-model 128 --seq-len 100 --heatmap
