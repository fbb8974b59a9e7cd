#!/usr/bin/env bash
# seed-claim (scripts/gpu_host.sh OUTDIR seed-claim): ResNet-50 (AOTInductor) at batch 8/16/32 and 16/64 clients,
# throughput: the seed's recipe (managed-prefetch, one context), pinned in one context, and pinned
# with --inflight auto (ferry's best); SEED_FLAGS (default: --duration 0.6 --max-time 1.5); runs are
# not started past SEED_BUDGET seconds (240); seed_claim_summary.py tabulates them.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

torch_ready || { echo "seed-claim: needs the torch plugin and models/resnet50.pt2"; exit 1; }
# 64 clients first: that is where a run once took the whole GPU (the depth search now stops before
# a depth that would not fit the GPU's free memory).
read -r -a seed_flags <<< "${SEED_FLAGS:---duration 0.6 --max-time 1.5}"
seed_start=$(date +%s)
for c in 64 16; do
  for batch in 16 8 32; do
    for how in one auto; do
      if (($(date +%s) - seed_start > ${SEED_BUDGET:-240})); then
        echo "seed-claim: b$batch c$c $how not started: past SEED_BUDGET" | tee -a "$out/steps.txt"
        continue
      fi
      if [[ $how == one ]]; then
        # shellcheck disable=SC2054  # the comma separates strategies inside one argument
        strategies=(--inflight 1 --strategy managed-prefetch,pinned)
      else
        strategies=(--inflight auto --strategy pinned)
      fi
      BENCH_TIMEOUT=${SEED_RUN_TIMEOUT:-120} b "seed-b$batch-c$c-$how" \
        --engine torch:models/resnet50.pt2 --batch "$batch" --clients "$c" --objective throughput --no-link-measure \
        "${strategies[@]}" "${seed_flags[@]}"
    done
  done
done
python3 scripts/gpu/seed_claim_summary.py "$out" | tee "$out/seed-claim.txt"
