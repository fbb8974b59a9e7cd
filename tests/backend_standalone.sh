#!/usr/bin/env bash
# The example backend built on its own, against ferry's headers and nothing else of its build,
# with another C compiler (clang where installed), then listed and loaded by ferry: a backend
# needs neither ferry's build nor its compiler.
#   backend_standalone.sh CMAKE C_COMPILER CUDA_COMPILER FERRY SOURCE_DIR WORK_DIR
set -euo pipefail
cmake=$1 cc=$2 nvcc=$3 ferry=$4 source=$5 work=$6
rm -rf "$work"
"$cmake" -S "$source/examples/backend" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DFERRY_INCLUDE_DIR="$source/include" > "$work.configure.log" 2>&1 || { cat "$work.configure.log"; exit 1; }
"$cmake" --build "$work" > "$work.build.log" 2>&1 || { cat "$work.build.log"; exit 1; }
grep "The C compiler identification" "$work.configure.log"
# ferry exits 3 without a GPU; the list of backends is printed either way.
listing=$("$ferry" info --backend-directory "$work" 2>/dev/null || true)
echo "$listing" | grep "affine"
echo "$listing" | grep -q "affine   1.0 (example, C) (API 3, also on the CPU), $work/libferry_backend_affine.so" || {
  echo "backend_standalone: ferry did not list the standalone build of the example backend"; exit 1; }
