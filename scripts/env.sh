# shellcheck shell=bash
# Sourced by the scripts: puts the project's CMake and Ninja (where scripts/build_tools.sh had to
# install them into build-tools/venv) and the CUDA toolkit (when installed in the usual place) on
# PATH.
FERRY_TOOLS_VENV="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-tools/venv"
export FERRY_TOOLS_VENV
if [[ -x "$FERRY_TOOLS_VENV/bin/cmake" || -x "$FERRY_TOOLS_VENV/bin/ninja" ]]; then
  export PATH="$FERRY_TOOLS_VENV/bin:$PATH"
fi
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
if command -v nvcc >/dev/null 2>&1; then export CUDACXX="${CUDACXX:-$(command -v nvcc)}"; fi
