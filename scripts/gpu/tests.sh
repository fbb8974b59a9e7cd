#!/usr/bin/env bash
# tests (scripts/gpu_host.sh OUTDIR tests): the gpu-labelled tests and the CPU tests, from the bundle; the torch tests
# too where a set that needs libtorch built its plugin in the same call. They time nothing, so they
# run beside the torch build.
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

step "gpu tests"
run_tests "$out/gpu_tests.txt" 400 gpu --gtest_brief=1
test_summary "$out/gpu_tests.txt"
run_tests "$out/cpu_tests.txt" 120 cpu --gtest_brief=1
test_summary "$out/cpu_tests.txt"
if [[ -e $out/.torch-started ]] && torch_ready; then
  step "gpu tests with libtorch (the torch plugin built here, the tests from the bundle)"
  FERRY_TORCH_MODELS=$PWD/models record "$out/torch_tests.txt" 200 ferry_engines_gpu_tests --gtest_filter='*Torch*'
  grep -E "relative L2|PASSED|FAILED|SKIPPED|rc=" "$out/torch_tests.txt" | tail -12 || true
fi
grep -q "^rc=0$" "$out/gpu_tests.txt" && grep -q "^rc=0$" "$out/cpu_tests.txt"
