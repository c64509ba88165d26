#!/usr/bin/env bash
# The figures of docs/figures.md, each one pe-cli command (needs the plot extra: pip install 'pe-cli[plot]').
# Writes into the folder given (default: this script's folder); tests/test_plot.py runs it.
set -euo pipefail
out="${1:-$(dirname "$0")}"

# the sinusoidal table of "Attention Is All You Need": 256 positions x 128 dimensions
pe-cli show -d 128 --seq-len 256 --plot "$out/heatmap.png" --force
# dimensions 4..7 over 100 positions, as the Annotated Transformer draws them
pe-cli show -d 32 --seq-len 100 --cols 4:8 --plot "$out/curves.png" --plot-kind curves --force
# how position 512's encoding falls off with distance
pe-cli show -d 128 --seq-len 1024 --rows 512 --plot "$out/similarity.png" --plot-kind similarity --force
# Llama 3.1's RoPE scaling: wavelengths before and after, against 8192 and 131072 positions
pe-cli show --family rope -d 128 --seq-len 8192 --base 500000 --rope rope_type=llama3 --rope factor=8 \
    --rope low_freq_factor=1 --rope high_freq_factor=4 --rope original_max_position_embeddings=8192 \
    --rope max_position_embeddings=131072 --plot "$out/wavelengths.png" --plot-kind wavelengths --force
# every seed formula and library in float32 against the exact table, error against position
pe-cli compare -d 256 --seq-len 16384 --plot "$out/errors.png" --force > /dev/null
# Llama 3.1's RoPE served in bfloat16: an inv_freq's drift and a cos/sin cache's error, by frequency band
pe-cli show --family rope -d 128 --seq-len 131072 --base 500000 --rope rope_type=llama3 --rope factor=8 \
    --rope low_freq_factor=1 --rope high_freq_factor=4 --rope original_max_position_embeddings=8192 \
    --precision bf16 --plot "$out/precision.png" --plot-kind precision --force
