#!/usr/bin/env bash
# Builds ferry and runs the whole test suite. GPU tests skip, saying why, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
# Warnings are errors here (CI runs this script): a warning is fixed when it appears, not later.
cmake --preset default -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
cmake --build --preset default
ctest --preset default "$@"
