#!/usr/bin/env bash
# resnet (scripts/gpu_host.sh OUTDIR resnet): ResNet-50 (AOTInductor, fp16) through ferry: batch 16 every strategy
# (and as a CUDA graph where it captures); batch 8/16/32 at 1 and 4 slots; the unified-memory claim
# at 1/4/16/64 clients.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "resnet: needs the torch plugin and models/resnet50.pt2"; exit 1; }
resnet=torch:models/resnet50.pt2
b resnet-b16 --engine $resnet --batch 16 --strategy all --no-link-measure
b resnet-b16-graph --engine $resnet --batch 16 --graph --strategy device,pinned --no-link-measure
for batch in 8 32; do
  b resnet-b$batch --engine $resnet --batch $batch --strategy device,pinned,mapped,managed-prefetch,managed-advise \
    --no-link-measure
done
for batch in 8 16 32; do
  b resnet-b$batch-4slots --engine $resnet --batch $batch --inflight 4 --clients 2 --objective throughput \
    --strategy device,pinned,mapped,managed-prefetch,managed-advise --no-link-measure
done
# The claim: managed + prefetch with one slot per client against its own baseline (pinned, one
# slot) under 1..64 concurrent clients.
for c in 1 4 16 64; do
  b claim-c$c --engine $resnet --batch 16 --clients $c --inflight 1 --strategy managed-prefetch,pinned \
    --objective throughput --duration 1.5 --no-link-measure
done
