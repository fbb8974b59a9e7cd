#!/usr/bin/env bash
# Issue 4's measurements, run on the GPU host in one go (its machine keeps nothing between
# sessions): builds ferry with the libtorch backend, exports ResNet-50 and the encoder, checks
# them against eager PyTorch (gpu tests), then benchmarks them. Everything lands in OUTDIR
# (default out/models); TARBALL, when given, is refreshed after every step so a run cut short
# still returns what it measured.
#   scripts/gpu_model_results.sh [OUTDIR] [TARBALL] [SET]
# SET: all (default) or a space-separated list of bench names below (e.g. "encoder-s128 smoke").
# FERRY_EXPORT_MODELS (default "resnet50 encoder-s128 encoder-s384") limits the exports, which
# take ~100 s of the host's CPUs, to the models the SET needs.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/models}
tarball=${2:-}
set_=${3:-all}
mkdir -p "$out" models
export PYTHONUNBUFFERED=1
source scripts/gpu_steps.sh

step "build and export"
(scripts/gpu_build_torch.sh -DFERRY_BUILD_SERVE=OFF > "$out/build.log" 2>&1; echo "build rc=$?" >> "$out/build.log") &
export TORCHINDUCTOR_COMPILE_THREADS=5
for m in ${FERRY_EXPORT_MODELS:-resnet50 encoder-s128 encoder-s384}; do
  [[ -e models/$m.pt2.check/manifest.json ]] && continue
  (timeout 420 python3 scripts/export_model.py --out models "$m" > "$out/export-$m.log" 2>&1
   echo "export rc=$?" >> "$out/export-$m.log") &
done
wait
ls -la models > "$out/models.txt"

ferry=build-torch/apps/ferry/ferry
[[ -x $ferry ]] || { step "build failed"; tail -30 "$out/build.log"; exit 1; }
export FERRY_TORCH_MODELS=$PWD/models
step "gpu tests"
timeout 200 build-torch/tests/ferry_gpu_tests > "$out/gpu_tests.txt" 2>&1
echo "rc=$?" >> "$out/gpu_tests.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from .* ran|worst relative" "$out/gpu_tests.txt"

bench() {
  local name=$1
  shift
  [[ $set_ == all || " $set_ " == *" $name "* ]] || return 0
  step "bench $name"
  echo "ferry bench $*" > "$out/$name.txt"
  timeout 150 "$ferry" bench "$@" --json "$out/$name.json" --md "$out/$name.md" >> "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}
resnet=torch:models/resnet50.pt2
bench smoke
bench resnet50-b16 --engine $resnet --batch 16 --strategy all
# The claim: managed + prefetch with one context vs its own baseline (pinned copy, one context, no
# overlap), under 1..64 concurrent clients; ferry's best configuration beside them.
for c in 1 4 16 64; do
  bench recipe-c$c --engine $resnet --batch 16 --clients $c --inflight 1 --strategy managed-prefetch,pinned \
    --objective throughput --duration 1.5 --no-link-measure
  bench best-c$c --engine $resnet --batch 16 --clients $c --inflight 4 --strategy pinned,registered,mapped,device \
    --objective throughput --duration 1.5 --no-link-measure
done
for b in 16 64; do
  bench resnet50-b$b-overlap --engine $resnet --batch $b --inflight 4 --clients 2 --objective throughput \
    --strategy device,pinned,registered,mapped,managed-advise,managed-prefetch --duration 1.5
done
bench resnet50-b1 --engine $resnet --batch 1 --strategy all
bench resnet50-b64 --engine $resnet --batch 64 --strategy all
bench encoder-s128 --engine torch:models/encoder-s128.pt2 --batch 8 --strategy all
bench encoder-s384 --engine torch:models/encoder-s384.pt2 --batch 8 --strategy all
bench resnet50-b16-cold --engine $resnet --batch 16 --no-warmup --strategy pinned,mapped,managed,managed-prefetch,managed-advise,device
# Many clients on one slot with a built-in engine (no per-thread library state), for comparison.
bench scaling-mlp-c1 --engine mlp:8x2048 --batch 256 --clients 1 --inflight 1 --strategy pinned --duration 1 --no-link-measure
bench scaling-mlp-c16 --engine mlp:8x2048 --batch 256 --clients 16 --inflight 1 --strategy pinned --duration 1 --no-link-measure
# Issue 3's overlap target on the built-in GEMM workload, with per-client warm-up.
bench mlp-overlap --engine mlp:48x2048 --batch 1024 --strategy device,pinned,mapped,registered,managed-advise \
  --clients 2 --inflight 4 --objective throughput --duration 2
step "done"
