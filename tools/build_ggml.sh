#!/usr/bin/env bash
# ggml's CPU library, for tests/test_llamacpp.py (tests/ggml.py calls ggml_rope_ext on it):
# built from the ggml that llama-cpp-python's sdist vendors, the llama.cpp version whose rope
# --variant llama.cpp reproduces. Only ggml-base and ggml-cpu are compiled (about 80 s on 2
# cores); a second run finds everything in place and returns at once.
#
#   tools/build_ggml.sh [DIR]        DIR defaults to build/ggml in the repository
#
# DIR/cmake/src holds libggml-base.so and libggml-cpu.so (PE_CLI_GGML_LIB_DIR's default), and
# DIR/llama.cpp the llama.cpp sources (the tests run its convert_hf_to_gguf code).
# Needs cmake, a C/C++ compiler and pip. GGML_NATIVE=OFF: the x86-64 build ggml ships, which
# still enables AVX2 and FMA, so GCC fuses the multiply-adds in YaRN's ramp as release builds do.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
dir="${1:-build/ggml}"
sdist="$dir/llama_cpp_python-$version.tar.gz"
tree="$dir/llama_cpp_python-$version"
ggml="$tree/vendor/llama.cpp/ggml"
mkdir -p "$dir"

if [ ! -f "$sdist" ]; then
    python -m pip download --quiet --no-binary :all: --no-deps "llama-cpp-python==$version" -d "$dir"
fi
if [ ! -d "$ggml" ]; then
    tar -xzf "$sdist" -C "$dir"
fi
ln -sfn "llama_cpp_python-$version/vendor/llama.cpp" "$dir/llama.cpp"
# the sdist leaves out ggml.pc.in, which ggml's CMakeLists configures
[ -f "$ggml/ggml.pc.in" ] || touch "$ggml/ggml.pc.in"

if [ ! -f "$dir/cmake/CMakeCache.txt" ]; then
    cmake -S "$ggml" -B "$dir/cmake" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
        -DBUILD_SHARED_LIBS=ON -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
        -DGGML_OPENMP=OFF > "$dir/cmake.log"
fi
cmake --build "$dir/cmake" --config Release -j "$(nproc)" --target ggml-base ggml-cpu >> "$dir/cmake.log"
ls "$dir/cmake/src/libggml-base.so" "$dir/cmake/src/libggml-cpu.so"
