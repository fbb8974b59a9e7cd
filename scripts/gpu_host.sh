#!/usr/bin/env bash
# Everything ferry runs on a GPU host, in one call: its machine starts bare and keeps nothing,
# so each call names the sets it wants and gets one folder back.
#   scripts/gpu_host.sh OUTDIR SET...
# The bundle (scripts/gpu_bundle.sh, carried as .bundle) provides ferry and the test binaries;
# sets that need libtorch build it here (torch). Every step is logged to OUTDIR/steps.txt with its
# time, and OUTDIR/clocks.csv samples the GPU's clocks and throttle reasons all along.
# Sets:
#   tests     gpu-labelled tests (and the CPU tests) from the bundle
#   smoke     `ferry bench` with its defaults
#   probes    the hand-written probes of scripts/probes (managed paths; libtorch paths with torch)
#   torch     builds ferry against this host's PyTorch and exports ResNet-50 (needed by models)
#   models    ResNet-50 batch 16 under device and pinned through ferry
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu_host.sh OUTDIR SET...}
shift
mkdir -p "$out"
source scripts/gpu_host_env.sh
export PYTHONUNBUFFERED=1

step() { echo "== $(date -u +%T) $*" | tee -a "$out/steps.txt"; }
wants() { [[ " $sets " == *" $1 "* ]]; }
b() {  # b NAME ARGS...: one ferry bench run, table, JSON and markdown kept
  local name=$1; shift
  step "ferry bench $*"
  echo "ferry bench $*" > "$out/$name.txt"
  timeout "${BENCH_TIMEOUT:-240}" "${FERRY:-ferry}" bench "$@" --json "$out/$name.json" --md "$out/$name.md" >> "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}
sets=" $* "

nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm --format=csv > "$out/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > "$out/clocks.csv" 2>/dev/null &
sampler=$!

if wants torch || wants models; then
  step "torch: build and export in the background"
  (scripts/gpu_build_torch.sh -DFERRY_BUILD_SERVE=OFF > "$out/torch-build.log" 2>&1
   echo "rc=$?" >> "$out/torch-build.log"
   torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
   cmake -S scripts/probes -B build-probes -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
     >> "$out/torch-build.log" 2>&1 && cmake --build build-probes >> "$out/torch-build.log" 2>&1
   echo "probes rc=$?" >> "$out/torch-build.log") &
  torch_build=$!
  mkdir -p models
  (TORCHINDUCTOR_COMPILE_THREADS=8 timeout 400 python3 scripts/export_model.py --out models resnet50 > "$out/export.log" 2>&1
   echo "rc=$?" >> "$out/export.log") &
  torch_export=$!
fi

if wants tests; then
  step "gpu tests"
  timeout 300 ferry_gpu_tests --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/gpu_tests.txt"
  tail -3 "$out/gpu_tests.txt"
  timeout 120 ferry_cpu_tests --gtest_brief=1 > "$out/cpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/cpu_tests.txt"
  tail -2 "$out/cpu_tests.txt"
fi

if wants probes; then
  step "probe: managed paths"
  timeout 200 .bundle/bin/managed_paths > "$out/managed_paths.txt" 2>&1; echo "rc=$?" >> "$out/managed_paths.txt"
fi

if wants smoke; then
  b smoke
fi

if wants reduce; then
  b reduce --engine reduce --size 0.6MB,19MB,64MB --strategy device,pinned,mapped,managed-prefetch,managed-advise --no-um-counters
fi

if wants torch || wants models; then
  step "torch: waiting for the build and the export"
  wait "$torch_build" "$torch_export"
  tail -2 "$out/torch-build.log" "$out/export.log"
fi

if wants models && [[ -e models/resnet50.pt2 ]]; then
  if wants probes && [[ -x build-probes/torch_paths ]]; then
    step "probe: libtorch paths, batch 16"
    timeout 200 build-probes/torch_paths models/resnet50.pt2 16 100 > "$out/torch_paths_b16.txt" 2>&1
    echo "rc=$?" >> "$out/torch_paths_b16.txt"
  fi
  FERRY=build-torch/apps/ferry/ferry b resnet50-b16 --engine torch:models/resnet50.pt2 --batch 16 \
    --strategy device,pinned --no-link-measure --no-um-counters
fi

kill "$sampler" 2>/dev/null
step "done"
