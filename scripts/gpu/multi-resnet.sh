#!/usr/bin/env bash
# multi-resnet (scripts/gpu_host.sh OUTDIR multi-resnet): ResNet-50 (AOTInductor) throughput on GPU 0 against GPUs 0 and 1,
# same slots per GPU, then the scaling summary with the multi set's runs.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "multi-resnet: needs the torch plugin and models/resnet50.pt2"; exit 1; }
step "multi: resnet50 scaling"
for d in "0 --clients 2" "0,1 --clients 4"; do
  name=resnet50-$(echo "$d" | cut -d' ' -f1 | tr ',' '-')
  read -r -a devices <<< "$d"
  BENCH_TIMEOUT=300 b "$name" --engine torch:models/resnet50.pt2 --batch 16 --inflight 4 \
    --strategy device,pinned,registered --objective throughput --duration 3 --no-link-measure --devices "${devices[@]}"
done
python3 scripts/gpu/scaling_summary.py "$out" | tee "$out/scaling.txt"
