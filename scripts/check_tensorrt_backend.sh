#!/usr/bin/env bash
# Compile-checks the TensorRT backend against a folder of TensorRT 10+ headers, for machines that
# cannot install TensorRT itself (ours, CI). Links and runs nothing TensorRT; downloads nothing.
#
#   scripts/check_tensorrt_backend.sh HEADERS_DIR [BUILD_DIR]
#
# HEADERS_DIR holds NvInfer.h and NvInferVersion.h, or an include/ folder that does, e.g. the
# include/ of a NVIDIA/TensorRT checkout or of a TensorRT tarball. BUILD_DIR defaults to
# build-trt. Builds the object library ferry_backend_trt_compile_check (-Werror) and the CPU tests,
# which cover the backend's pure logic, then runs the TensorRT ones.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 HEADERS_DIR [BUILD_DIR]   (HEADERS_DIR: a folder with NvInfer.h, or with include/NvInfer.h)" >&2
  exit 2
fi
headers="$(cd "$1" && pwd)"
build="${2:-build-trt}"
if [[ ! -f "$headers/NvInfer.h" && ! -f "$headers/include/NvInfer.h" ]]; then
  echo "check_tensorrt_backend: no NvInfer.h in $headers or $headers/include" >&2
  exit 2
fi

source scripts/env.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DFERRY_TENSORRT_ROOT="$headers" -DFERRY_TENSORRT_COMPILE_ONLY=ON | grep -E "TensorRT backend|Build files"
# The check target exists only when the headers are TensorRT >= 10 and no libnvinfer was found.
targets=$(cmake --build "$build" --target help)  # whole, not piped to grep -q: ninja would die of SIGPIPE
if ! grep -q "ferry_backend_trt_compile_check" <<<"$targets"; then
  echo "check_tensorrt_backend: no ferry_backend_trt_compile_check target (see the 'TensorRT backend' line above)" >&2
  exit 1
fi
cmake --build "$build" --target ferry_backend_trt_compile_check ferry_cpu_tests
"$build/tests/ferry_engines_tests" --gtest_filter='*Trt*:*TensorRt*:*Tensorrt*' --gtest_brief=1
