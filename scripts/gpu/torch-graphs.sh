#!/usr/bin/env bash
# torch-graphs (scripts/gpu_host.sh OUTDIR torch-graphs): AOTInductor packages as CUDA graphs the
# engine captures of its own run (--graph) against their plain runs: ResNet-50 and
# MobileNetV3-small (the runner exports it when this set is asked for), fp16, batch 16, pinned
# and device, at 1 client (one request at a time, beside its recipe and floor) and at 16 clients
# on 16 slots (throughput). Every cell's outputs are checked against a plain device-strategy
# reference session, so the graph path is checked on every request sampled. Then the GPU tests of
# the graph path (replays against the plain path on fresh data; the session's own-graph tests),
# and graphs/summary.txt: per cell the CPU's enqueue and the GPU's compute per request, images/s,
# whether the outputs matched, and the cell's note on its graphs.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "torch-graphs: needs the torch plugin and models/resnet50.pt2"; exit 1; }
[[ -e models/mobilenet-v3-small.pt2 ]] || { echo "torch-graphs: no models/mobilenet-v3-small.pt2 (see export.log)"; exit 1; }
for model in resnet50 mobilenet-v3-small; do
  for graph in "" --graph; do
    name=graphs/$model${graph:+-graph}
    # shellcheck disable=SC2086  # an empty $graph is no argument
    b "$name-c1" --engine "torch:models/$model.pt2" --batch 16 --strategy pinned,device $graph --no-link-measure
    # shellcheck disable=SC2086
    b "$name-c16" --engine "torch:models/$model.pt2" --batch 16 --strategy pinned,device $graph --clients 16 \
      --inflight 16 --objective throughput --duration 2 --no-link-measure
  done
done

step "gpu tests of the graph path"
FERRY_TORCH_MODELS=$PWD/models record "$out/graphs/torch_tests.txt" 300 ferry_engines_gpu_tests \
  --gtest_filter='TorchBackend*'
record "$out/graphs/session_tests.txt" 120 ferry_session_gpu_tests --gtest_filter='SessionOwnGraphs*'
grep -E "as the engine's own graphs|relative L2|PASSED|FAILED|SKIPPED|rc=" "$out/graphs/torch_tests.txt" | tail -16 || true
grep -E "PASSED|FAILED|rc=" "$out/graphs/session_tests.txt" || true

python3 scripts/gpu/torch_graphs_summary.py "$out/graphs" | tee "$out/graphs/summary.txt"
grep -q "^rc=0$" "$out/graphs/torch_tests.txt" && grep -q "^rc=0$" "$out/graphs/session_tests.txt"
