#!/usr/bin/env bash
# Builds ferry and runs the whole test suite. GPU tests skip, saying why, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cmake --preset default
cmake --build --preset default
ctest --preset default "$@"
