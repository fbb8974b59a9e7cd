#!/usr/bin/env bash
# auto-mlp (scripts/gpu_host.sh OUTDIR auto-mlp): --inflight auto against device on mlp:32x4096 b512, 8 clients (no libtorch).
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

b auto-mlp --engine mlp:32x4096 --batch 512 --clients 8 --objective throughput --inflight auto \
  --strategy device,pinned,registered,mapped,managed-prefetch --no-link-measure
