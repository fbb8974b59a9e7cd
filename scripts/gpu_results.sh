#!/usr/bin/env bash
# The measurements behind docs/RESULTS.md, in one run on the GPU host (bundle from
# scripts/gpu_bundle.sh). Writes logs, JSON, markdown and plots under $1 (default results/).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_host_env.sh
out=${1:-results}
mkdir -p "$out"
b() {  # b NAME ARGS...: one ferry bench run, every format kept
  local name=$1; shift
  echo "== ferry bench $*" | tee -a "$out/commands.txt"
  timeout 240 ferry bench "$@" --json "$out/$name.json" --md "$out/$name.md" --plot "$out/$name.png" \
    > "$out/$name.txt" 2>&1
  echo "   rc=$?" | tee -a "$out/commands.txt"
}
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv > "$out/nvidia-smi.txt"
export FERRY_CLI="$PWD/.bundle/bin/ferry"
timeout 300 ferry_gpu_tests --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1; echo "gpu tests rc=$?" | tee -a "$out/commands.txt"
ferry_cpu_tests --gtest_brief=1 > "$out/cpu_tests.txt" 2>&1; echo "cpu tests rc=$?" | tee -a "$out/commands.txt"
ferry info --measure > "$out/info.txt" 2>&1
b default
b matrix --engine reduce,touch --size 0.6MB,4.8MB,19MB,64MB --strategy all --duration 1
b cold --engine reduce,touch --size 19MB --strategy all --no-warmup --iterations 30
b mlp_inflight1 --engine mlp:48x2048 --batch 1024 --strategy device,pinned,mapped,registered,managed-advise,managed-prefetch,staged --inflight 1 --objective throughput --duration 2
b mlp_inflight4 --engine mlp:48x2048 --batch 1024 --strategy device,pinned,mapped,registered,managed-advise,managed-prefetch,staged --clients 2 --inflight 4 --objective throughput --duration 2
b sparse --engine sparse:0.01,sparse:0.05,sparse:0.1,sparse:0.25,sparse:0.5,sparse:1.0 --size 64MB --strategy pinned,mapped,managed,managed-prefetch,managed-advise,device --duration 1
b u8 --engine reduce --preprocess u8-normalize --batch 64 --strategy pinned,mapped,managed-advise,device --duration 1
b f32_same_images --engine reduce --size 38535168 --strategy pinned,mapped,managed-advise,device --duration 1
b graph --engine reduce --size 0.6MB --strategy all --graph --duration 1
b clients --engine mlp:24x2048 --batch 256 --strategy device,pinned,mapped --clients 4 --inflight 4 --objective throughput --duration 2
b auto --engine touch --size 19MB --strategy auto
tail -5 "$out/gpu_tests.txt"
