#!/usr/bin/env bash
# encoder (scripts/gpu_host.sh OUTDIR encoder): the BERT-base-sized encoder (AOTInductor, fp16) at sequence 128 and 384,
# batch 8, every strategy (the runner exports it when this set is asked for).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "encoder: needs the torch plugin"; exit 1; }
for seq in 128 384; do
  b encoder-s$seq --engine torch:models/encoder-s$seq.pt2 --batch 8 --strategy all --no-link-measure
done
