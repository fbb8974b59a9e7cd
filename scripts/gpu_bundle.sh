#!/usr/bin/env bash
# Builds ferry here for sm_90 and packs the CLI and the test binaries, with the shared libraries
# the GPU host lacks, into .bundle/ (git-ignored) for the device tool to carry. cuBLAS is left
# out: it is ~600 MB and the GPU host has it (scripts/gpu_host_env.sh finds it there).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cmake --preset default >/dev/null
cmake --build --preset default
rm -rf .bundle
mkdir -p .bundle
for bin in build/apps/ferry/ferry build/tests/ferry_gpu_tests build/tests/ferry_cpu_tests; do
  ../shared/tools/bundle .bundle "$bin" >/dev/null
done
rm -f .bundle/lib/libcublas*.so*
cp scripts/plot_bench.py .bundle/bin/
du -sh .bundle
