#!/usr/bin/env bash
# Runs every serve test (ctest label serve: the Python modules in tests/serve and the C++ serve
# tests) N times in a row, each until it fails, with two busy CPU loops beside them, as on a CI
# machine shared with other work: a test that depends on timing it does not control fails here.
# A flaky test is a bug in the test or the server: fix it at its cause, never retry it.
# Needs a built build/ (scripts/test.sh). Extra arguments go to ctest (e.g. -R to narrow it).
#   scripts/flake_check.sh [N]            default N: 20
#   scripts/flake_check.sh 5 -R HttpTransport
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
repeats=${1:-20}
shift || true
busy=()
for _ in 1 2; do
  (while :; do :; done) &
  busy+=("$!")
done
trap 'kill "${busy[@]}" 2> /dev/null || true' EXIT
start=$SECONDS
status=0
ctest --test-dir build -L serve --repeat "until-fail:$repeats" --output-on-failure "$@" || status=$?
echo "flake_check: every serve test run up to $repeats times in a row beside 2 busy CPU loops: " \
  "$([[ $status == 0 ]] && echo "all passed every time" || echo "FAILED (ctest $status)") ($((SECONDS - start)) s)"
exit "$status"
