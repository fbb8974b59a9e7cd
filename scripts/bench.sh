#!/usr/bin/env bash
# Builds ferry and runs its main job. Extra arguments go to `ferry bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cmake --preset default >/dev/null
cmake --build --preset default --target ferry_cli
exec build/bin/ferry bench "$@"
