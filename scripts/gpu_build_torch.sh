#!/usr/bin/env bash
# Builds the libtorch AOTInductor backend plugin against a PyTorch installation (code that links
# libtorch must be built against the PyTorch it runs with): build-torch/lib/ferry/backends/
# libferry_backend_torch.so (git-ignored), which ferry loads through --backend-directory or
# FERRY_BACKEND_PATH (a ferry built anywhere else too: the GPU host's bundle). Only the plugin and
# ferry's core library are compiled.
#   scripts/gpu_build_torch.sh [extra cmake args]
# Which PyTorch: that of FERRY_TORCH_PYTHON, else of the python3 first on PATH (an activated
# virtual environment's), asked before anything else goes on PATH; it must be a CUDA build. Which
# CMake and Ninja: those on PATH where CMake is 3.28 or newer, else from PyPI into build-tools/venv
# (scripts/build_tools.sh; never into the PyTorch environment). Also needs the CUDA 13 toolkit and
# the packages of `scripts/setup.sh --for bench` (fmt, nlohmann-json). It says what it uses.
# Exit codes, as ferry's: 0 built, 1 the build failed, 3 this machine cannot (no CUDA PyTorch for
# that python, no CUDA toolkit, no CMake >= 3.28 to be had).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${FERRY_TORCH_PYTHON:-$(command -v python3 || true)}
probe='import sys
try:
    import torch
except ImportError as e:
    sys.exit(f"no PyTorch for {sys.executable} ({e})")
if torch.version.cuda is None:
    sys.exit(f"PyTorch {torch.__version__} of {sys.executable} is a CPU build: the backend needs a CUDA one")
print(torch.__version__)
print(torch.version.cuda)
print(torch.utils.cmake_prefix_path)'
output=$(mktemp)  # what a command printed
trap 'rm -f "$output"' EXIT
why=""
if [[ -z $python ]] || ! command -v "$python" >/dev/null; then
  why="no python3 '$python' to run"
elif ! facts=$("$python" -c "$probe" 2>"$output"); then
  why=$(tail -1 "$output")
fi
if [[ -n $why ]]; then
  echo "gpu_build_torch: $why; activate the environment with your PyTorch, or set FERRY_TORCH_PYTHON to" \
    "its python" >&2
  exit 3
fi
{ read -r torch_version; read -r torch_cuda; read -r torch_prefix; } <<<"$facts"

scripts/build_tools.sh
source scripts/env.sh
if ! command -v nvcc >/dev/null; then
  echo "gpu_build_torch: the CUDA 13 toolkit (nvcc) is not installed, nor in /usr/local/cuda/bin" >&2
  exit 3
fi
toolkit_cuda=$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
echo "gpu_build_torch: PyTorch $torch_version (CUDA $torch_cuda) of $python;" \
  "$(cmake --version | head -1) at $(command -v cmake); CUDA toolkit $toolkit_cuda"
if [[ ${torch_cuda%%.*} != "${toolkit_cuda%%.*}" ]]; then
  echo "gpu_build_torch: warning: PyTorch was built with CUDA $torch_cuda and ferry builds with $toolkit_cuda:" \
    "ferry is tested with a PyTorch of its CUDA major version (e.g. the cu130 wheels)" >&2
fi
# The plugin has no device code of its own: one architecture is enough for CMake's CUDA checks.
configure=(cmake -S . -B build-torch -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
           -DCMAKE_PREFIX_PATH="$torch_prefix" -DFERRY_BUILD_SERVE=OFF -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_APPS=OFF "$@")
"${configure[@]}" | tee "$output" || exit 1
# The backend is optional in ferry's build (it looks for Torch quietly): here it is the point.
if ! grep -q "libtorch AOTInductor backend plugin ON" "$output"; then
  echo "gpu_build_torch: CMake did not find libtorch under $torch_prefix; \`${configure[*]} --debug-find-pkg=Torch\`" \
    "says why" >&2
  exit 1
fi
cmake --build build-torch --target ferry_backend_torch || exit 1
echo "gpu_build_torch: built build-torch/lib/ferry/backends/libferry_backend_torch.so" \
  "(export FERRY_BACKEND_PATH=$PWD/build-torch/lib/ferry/backends)"
