#!/usr/bin/env bash
# gap (scripts/gpu_host.sh OUTDIR gap): managed-prefetch beside its recipe at 0.6 and 4 MB, alone (three runs)
# and beside pinned and managed-advise.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

for run in 1 2 3; do
  b gap-alone-$run --engine reduce --size 0.6MB,4MB --strategy managed-prefetch --no-link-measure
done
b gap-beside --engine reduce --size 0.6MB,4MB --strategy managed-prefetch,pinned,managed-advise --no-link-measure
