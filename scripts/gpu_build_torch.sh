#!/usr/bin/env bash
# Builds ferry with the libtorch AOTInductor backend, on the GPU host: code that links libtorch
# must be built against that host's PyTorch. Uses the host's cmake/ninja (PyTorch environment)
# and system packages; the output goes to build-torch/ (git-ignored).
#   scripts/gpu_build_torch.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-torch -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$torch_prefix" "$@"
cmake --build build-torch --target ferry_cli ferry_gpu_tests
