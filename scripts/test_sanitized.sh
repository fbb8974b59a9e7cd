#!/usr/bin/env bash
# Builds ferry with clang under a sanitizer and runs the tests it covers (CI runs both):
#   scripts/test_sanitized.sh asan   ASan + UBSan: the CPU tests and the serve suite, with
#                                    `ferry serve` itself built sanitized (build-asan/)
#   scripts/test_sanitized.sh tsan   TSan: the Serve* unit tests that run threads and the serve
#                                    suite, with `ferry serve` built under TSan (build-tsan/)
# Extra arguments go to ctest (e.g. -R ServeScheduler). The first report of any sanitizer ends
# the process that made it with a failure, and so fails its test. Only host code is
# instrumented: nvcc cannot instrument device code, and no GPU test runs here.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case "$kind" in
  asan|tsan) shift ;;
  *) echo "usage: scripts/test_sanitized.sh asan|tsan [ctest arguments]" >&2; exit 2 ;;
esac
scripts/setup.sh
source scripts/env.sh

# Reports name functions and lines (llvm-symbolizer comes with llvm-14, from scripts/setup.sh).
symbolizer=external_symbolizer_path=/usr/lib/llvm-14/bin/llvm-symbolizer
# protect_shadow_gap=0: on a GPU the CUDA driver maps memory inside the range ASan reserves as its
# shadow gap, and fails without it (not tried here: no GPU). Without a GPU, as in CI, libcudart
# only reports that there is no device, and the option changes nothing.
# handle_sigbus=0: SIGBUS keeps its normal course. It is how a shared-memory object shrunk under a
# read shows, and tests check how the server survives or dies of it; ASan's own handler would turn
# the death into a report and exit status 1. Bad memory accesses are SEGVs, still reported.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:protect_shadow_gap=0:handle_sigbus=0:$symbolizer"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:$symbolizer"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizers/tsan.supp:$symbolizer"

# For the tests: a sanitizer's allocator pads every block and keeps freed ones in quarantine, so a
# test that bounds `ferry serve`'s memory must skip that bound when this is set.
export FERRY_SANITIZER="$kind"

cmake --preset "$kind"
cmake --build --preset "$kind"
ctest --preset "$kind" "$@"
