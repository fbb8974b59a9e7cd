#!/usr/bin/env bash
# serve-suite (scripts/gpu_host.sh OUTDIR serve-suite): the serve test suite (tests/serve) against the bundle's ferry, CUDA regions
# included (SERVE_SUITE: some modules only); OUTDIR/serve-suite/summary.txt has each module's exit code.
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

serve_python_ready
mkdir -p "$out/serve-suite"
bundle_ferry_wrapper
failed=0
# SERVE_SUITE: the modules to run (e.g. "test_system_shm test_cuda_shm"); the default is all of them.
read -r -a modules <<< "${SERVE_SUITE:-}"
((${#modules[@]})) || modules=(tests/serve/test_*.py)
for module_path in "${modules[@]}"; do
  module=$(basename "$module_path" .py)
  step "serve suite: $module"
  rc=0
  (cd tests/serve && FERRY_BIN=/tmp/ferry-with-bundle LD_LIBRARY_PATH=${HOST_LD_LIBRARY_PATH:-} timeout 300 \
    python3 -m unittest -v "$module") > "$out/serve-suite/$module.txt" 2>&1 || rc=$?
  echo "$module rc=$rc" | tee -a "$out/serve-suite/summary.txt"
  ((rc == 0)) || failed=$((failed + 1))
done
((failed == 0))
