#!/usr/bin/env bash
# Builds ferry, its tests and the Python package, and runs nothing: the first command on a machine
# without a GPU, so that `ferry --help`, `ferry info` and `ferry serve` (which serves the built-in
# models on the CPU) can be tried as soon as the build ends, before the tests. Installs what is
# missing as scripts/test.sh does (scripts/setup.sh), and builds what it builds, so a later
# scripts/test.sh only runs the tests. Extra arguments go to `cmake --build` (e.g. --target ferry_cli).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
start=$SECONDS
# Warnings are errors (the presets set CMAKE_COMPILE_WARNING_AS_ERROR): a warning is fixed when it
# appears, not later.
cmake --preset default 2>&1 | fold -w 160  # its lines whole, none wider than 160 characters
cmake --build --preset default "$@"
echo "build: done in $((SECONDS - start)) s. Try build/bin/ferry --help, build/bin/ferry info, and"
echo "  build/bin/ferry serve --model-repository examples/models (the built-in models, on the CPU without a GPU);"
echo "  scripts/test.sh runs every test."
