#!/usr/bin/env bash
# Builds ferry and runs the whole test suite (extra arguments go to ctest). GPU tests skip, saying
# why, where there is no GPU; the end of the output counts the skipped tests by reason
# (scripts/skip_summary.py). The exit code is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
# Warnings are errors (the presets set CMAKE_COMPILE_WARNING_AS_ERROR): a warning is fixed when it
# appears, not later.
cmake --preset default
cmake --build --preset default
junit="$PWD/build/Testing/ctest-junit.xml"  # each test's status and output, the skips' reasons
rm -f "$junit"
status=0
ctest --preset default --output-junit "$junit" "$@" || status=$?
if [[ -f $junit ]]; then python3 scripts/skip_summary.py "$junit" || true; fi
exit "$status"
