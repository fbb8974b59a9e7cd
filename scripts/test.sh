#!/usr/bin/env bash
# Builds ferry and runs the whole test suite (extra arguments go to ctest). GPU tests skip, saying
# why, where there is no GPU. The console shows each test's result but the skipped ones'
# (scripts/ctest_console.py; ctest's whole output, every skipped test with it, is kept in
# build/Testing/test.log), then the skips counted by reason, pytest's inside python.tests too
# (scripts/skip_summary.py). The exit code is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
# Warnings are errors (the presets set CMAKE_COMPILE_WARNING_AS_ERROR): a warning is fixed when it
# appears, not later.
cmake --preset default 2>&1 | fold -w 160  # its lines whole, none wider than 160 characters
cmake --build --preset default
testing="$PWD/build/Testing"
junit="$testing/ctest-junit.xml"          # each test's status and output, the skips' reasons
pytest_junit="$testing/pytest-junit.xml"  # python.tests writes it (tests/CMakeLists.txt)
log="$testing/test.log"
mkdir -p "$testing"
rm -f "$junit" "$pytest_junit"
set +e
ctest --preset default --output-junit "$junit" "$@" 2>&1 | python3 scripts/ctest_console.py "$log"
status=${PIPESTATUS[0]}
set -e
pytest_file=()
[[ -f $pytest_junit ]] && pytest_file=("$pytest_junit")
if [[ -f $junit ]]; then python3 scripts/skip_summary.py "$junit" "${pytest_file[@]}" || true; fi
echo "test: ctest's whole output, each skipped test's line with it, is in ${log#"$PWD"/}"
exit "$status"
