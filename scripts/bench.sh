#!/usr/bin/env bash
# Builds ferry and runs its main job, `ferry bench` (extra arguments go to it). Asks first whether
# this machine has a GPU (scripts/gpu_check.sh): without one it says why in one line and exits 3,
# as ferry does, before installing or building anything. Installs only what building and the
# bench need (scripts/setup.sh --for bench).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! why=$(scripts/gpu_check.sh); then
  echo "bench: $why" >&2
  exit 3
fi
scripts/setup.sh --for bench
source scripts/env.sh
cmake --preset default >/dev/null
cmake --build --preset default --target ferry_cli
exec build/bin/ferry bench "$@"
