#!/usr/bin/env bash
# Makes the build tools ferry's CMake presets need available: CMake >= 3.28 (nvcc's C++20 dialect;
# Debian 12 ships 3.25) and Ninja. Those on PATH where they do; else they come from PyPI into
# build-tools/venv, the checkout's own virtual environment, which scripts/env.sh puts first on
# PATH. Whatever python or virtual environment comes first on PATH (a user's PyTorch environment
# with its own cmake, say), nothing is installed into it.
#   scripts/build_tools.sh      (then `source scripts/env.sh`)
# Exit codes: 0 ready, 1 an install failed, 3 this machine cannot (no python3 to install with).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh"

cmake_ok() {
  command -v cmake >/dev/null &&
    printf '%s\n3.28\n' "$(cmake --version | awk 'NR==1{print $3}')" | sort -V -C -r
}
ninja_ok() { command -v ninja >/dev/null; }
cmake_ok && ninja_ok && exit 0

wanted=()
cmake_ok || wanted+=('cmake>=3.28,<4')
ninja_ok || wanted+=(ninja)
if ! [[ -x $FERRY_TOOLS_VENV/bin/pip ]]; then
  # The first python3 that can make a virtual environment: the one on PATH, else the system's
  # (Debian's needs python3-venv for ensurepip).
  python=""
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import venv, ensurepip' 2>/dev/null; then
      python=$candidate
      break
    fi
  done
  if [[ -z $python ]]; then
    echo "build_tools: ${wanted[*]} needed, and no python3 with venv to install them from PyPI" \
      "(install python3-venv, or CMake >= 3.28 and Ninja yourself)" >&2
    exit 3
  fi
  "$python" -m venv "$FERRY_TOOLS_VENV"
fi
echo "build_tools: installing ${wanted[*]} from PyPI into build-tools/venv"
"$FERRY_TOOLS_VENV/bin/pip" install -q --disable-pip-version-check "${wanted[@]}"
export PATH="$FERRY_TOOLS_VENV/bin:$PATH"
hash -r
if ! cmake_ok || ! ninja_ok; then
  echo "build_tools: CMake >= 3.28 or Ninja is still not first on PATH after installing them" >&2
  exit 1
fi
