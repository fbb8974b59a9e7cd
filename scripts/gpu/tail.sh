#!/usr/bin/env bash
# tail (scripts/gpu_host.sh OUTDIR tail): the managed-paths probe's tail variants at 0.6 and 4 MB (what a
# session's events cost a small prefetch); the probe travels in the bundle.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

if [[ ! -x .bundle/bin/managed_paths ]]; then
  echo "tail: .bundle/bin/managed_paths is not in the bundle" | tee -a "$out/steps.txt"
  exit 1
fi
step "probe: managed paths, tail variants"
record "$out/managed_tail.txt" 100 .bundle/bin/managed_paths --tail 0.6 4
cat "$out/managed_tail.txt"
