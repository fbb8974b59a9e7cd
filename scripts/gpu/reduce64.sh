#!/usr/bin/env bash
# reduce64 (scripts/gpu_host.sh OUTDIR reduce64): reduce at 64 MB, every strategy (the default matrix stops at 19 MB).
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

b reduce64 --engine reduce --size 64MB --strategy all
