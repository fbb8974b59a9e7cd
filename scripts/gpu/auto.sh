#!/usr/bin/env bash
# auto (scripts/gpu_host.sh OUTDIR auto): --inflight auto against device on ResNet-50 b8 and b32, 8 clients, after the
# torch build (a quiet CPU for the throughput runs); add auto-mlp for the mlp.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "auto: needs the torch plugin and models/resnet50.pt2"; exit 1; }
for batch in 8 32; do
  b auto-resnet-b$batch --engine torch:models/resnet50.pt2 --batch $batch \
    --clients 8 --objective throughput --inflight auto --strategy device,pinned,registered,mapped,managed-prefetch \
    --no-link-measure
done
