#!/usr/bin/env bash
# litgpt and torchtitan in a venv of their own, for tests/test_frameworks.py (tests/framework_tables.py
# runs in it and writes their tables): litgpt pins huggingface_hub 1.3 and brings typer-slim, and
# torchtitan pulls datasets, wandb and tensorboard; either would change the main environment.
# About 2.5 minutes the first time (torch comes from the local CPU wheel); a second run finds the
# stamp a finished install leaves and returns at once.
#
#   tools/frameworks_venv.sh [DIR]        DIR defaults to build/frameworks-venv in the repository
set -euo pipefail
cd "$(dirname "$0")/.."
litgpt="${LITGPT_VERSION:-0.5.13}"
torchtitan="${TORCHTITAN_VERSION:-0.3.0}"
dir="${1:-build/frameworks-venv}"
python="$dir/bin/python"
stamp="$dir/pe-cli-frameworks-$litgpt-$torchtitan"

if [ -f "$stamp" ] && [ -x "$python" ]; then
    echo "litgpt $litgpt and torchtitan $torchtitan found in $dir"
    exit 0
fi
[ -x "$python" ] || python3 -m venv "$dir"
"$python" -m pip install --quiet torch==2.13.0 numpy
# torchtitan.models.common imports its MoE kernels, which import triton (no GPU needed)
"$python" -m pip install --quiet "litgpt==$litgpt" "torchtitan==$torchtitan" triton
"$python" -c "import litgpt.model, torchtitan.models.common.rope" 2>/dev/null
touch "$stamp"
echo "litgpt $litgpt and torchtitan $torchtitan installed in $dir"
