#!/usr/bin/env bash
# graph (scripts/gpu_host.sh OUTDIR graph): ResNet-50 batch 16 as CUDA graphs (AOTInductor refuses a plain capture, so
# the engine captures its own; the report's note says so). torch-graphs compares them with plain runs.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "graph: needs the torch plugin and models/resnet50.pt2"; exit 1; }
b resnet-b16-graph --engine torch:models/resnet50.pt2 --batch 16 --graph --strategy device,pinned --no-link-measure
