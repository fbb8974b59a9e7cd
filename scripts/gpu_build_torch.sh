#!/usr/bin/env bash
# Builds the libtorch AOTInductor backend plugin on the GPU host, against that host's PyTorch
# (code that links libtorch must be): build-torch/lib/ferry/backends/libferry_backend_torch.so
# (git-ignored), loaded by a ferry built anywhere else (the bundle) through --backend-directory or
# FERRY_BACKEND_PATH. Uses the host's cmake/ninja (PyTorch environment) and system packages; only
# the plugin and ferry's core library are compiled.
#   scripts/gpu_build_torch.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-torch -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DFERRY_BUILD_SERVE=OFF -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_APPS=OFF "$@"
cmake --build build-torch --target ferry_backend_torch
