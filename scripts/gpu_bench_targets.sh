#!/usr/bin/env bash
# Issue 3's acceptance figures on the GPU host, in one go, from a bundle made by
# scripts/gpu_bundle.sh: the GPU tests, the smoke run (`ferry bench` with no arguments), then each
# target's own measurement:
#   first request vs median    the 80-cell matrix, warmed up (every strategy, reduce and touch)
#   link efficiency            pinned and zero-copy paths at 16-64 MB, one request at a time
#   copies hidden by compute   mlp:48x2048 b1024 (compute ~6x the transfer), device vs host
#                              inputs at several slot and client counts, 3 s throughput windows
#   ferry's own overhead       the device cells' paired bare-engine note, in every report above
#   scripts/gpu_bench_targets.sh OUTDIR [TARBALL]
# Every command's output lands in OUTDIR; TARBALL, when given, is refreshed after every step so a
# run cut short still returns what it measured.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu_bench_targets.sh OUTDIR [TARBALL]}
tarball=${2:-}
mkdir -p "$out"
source scripts/gpu_host_env.sh
export FERRY_CLI="$(command -v ferry)"
source scripts/gpu_steps.sh

step "machine"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
step "gpu tests"
timeout 300 ferry_gpu_tests --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1
echo "rc=$?" >> "$out/gpu_tests.txt"
tail -4 "$out/gpu_tests.txt"
b smoke
# Each configuration twice: one 3 s window swings by a few percent between runs.
for run in 1 2; do
  for config in "4 2" "8 8"; do
    set -- $config
    b overlap-i$1-c$2-run$run --engine mlp:48x2048 --batch 1024 --strategy device,pinned,registered --inflight $1 \
      --clients $2 --objective throughput --duration 3 --no-link-measure
  done
done
b link --engine reduce,touch --size 16MB,19MB,32MB,64MB --strategy device,pinned,registered,mapped,registered-mapped \
  --duration 1
# What ordinary stores into the inputs cost the link (the default writes them streaming).
b link-cached --engine reduce,touch --size 16MB,19MB --strategy pinned,mapped --duration 1 --input-writes cached
b matrix --engine reduce,touch --size 0.6MB,4.8MB,19MB,64MB --strategy all --duration 0.5 --no-link-measure
step "done"
