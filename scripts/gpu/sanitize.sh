#!/usr/bin/env bash
# sanitize (scripts/gpu_host.sh OUTDIR sanitize): compute-sanitizer memcheck, racecheck and synccheck over the gpu tests
# (SANITIZE_FILTER: a gtest filter; SANITIZE_TIMEOUT: seconds per tool and test executable, 300).
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer --tool $tool"
  # The refusal tests provoke CUDA API errors on purpose (and assert them): memcheck's exit code
  # should speak of memory errors only.
  api=()
  [[ $tool == memcheck ]] && api=(--report-api-errors no)
  for bin in .bundle/bin/ferry_*_gpu_tests; do
    name=$(basename "$bin")
    record "$out/sanitizer-$tool-$name.txt" "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool $tool "${api[@]}" \
      --error-exitcode 9 --print-limit 20 "$bin" --gtest_brief=1 --gtest_filter="${SANITIZE_FILTER:-*}"
    echo "$name: $(grep -E "ERROR SUMMARY|rc=" "$out/sanitizer-$tool-$name.txt" | tail -2 | tr '\n' ' ')"
  done
done
