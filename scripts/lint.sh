#!/usr/bin/env bash
# The formatter and the linter, as CI runs them (`.ci/run`): every C, C++ and CUDA source must be
# as clang-format leaves it (.clang-format), and clang-tidy's agreed checks (.clang-tidy) must find
# nothing in any C++ translation unit this build compiles: the library (core, device, memory,
# engines, session), the tooling over it (bench, info, frontend), the server (serve, all its
# subfolders), the front ends (apps/, python/src), the tests and the examples. CUDA sources (.cu)
# are nvcc's, which clang-tidy does not read.
# Needs a configured build/ for the compile commands (scripts/test.sh makes it).
#   scripts/lint.sh           check
#   scripts/lint.sh --fix     reformat in place (then review and commit the change)
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
mapfile -t sources < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [[ ${1:-} == --fix ]]; then
  "$format" -i "${sources[@]}"
  exit 0
fi
start=$SECONDS
"$format" --dry-run --Werror "${sources[@]}"
echo "lint: clang-format: ${#sources[@]} files as formatted ($((SECONDS - start)) s)"
[[ -f build/compile_commands.json ]] || { echo "lint: no build/compile_commands.json: run scripts/test.sh first" >&2; exit 2; }
start=$SECONDS
# Only sources this build compiled: a backend whose SDK is absent here (torch, TensorRT) has no
# compile command, and clang-tidy would fail on its headers instead of checking anything.
compiled_only() {
  python3 -c 'import json, os, sys
built = {os.path.realpath(e["file"]) for e in json.load(open("build/compile_commands.json"))}
[print(f) for f in sys.stdin.read().split() if os.path.realpath(f) in built]'
}
mapfile -t checked < <(git ls-files 'src/*.cpp' 'apps/*.cpp' 'python/src/*.cpp' 'tests/*.cpp' 'examples/*.cpp' |
  compiled_only)
# git's pathspec '*' crosses '/', so 'src/*.cpp' takes every layer's subfolders too. Beside it,
# every C++ file compiled, so a folder left out shows in every run.
mapfile -t compiled < <(git ls-files '*.cpp' | compiled_only)
printf '%s\n' "${checked[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" -p build --quiet 2> /dev/null
echo "lint: clang-tidy: ${#checked[@]} files clean, of the ${#compiled[@]} C++ files compiled ($((SECONDS - start)) s)"
