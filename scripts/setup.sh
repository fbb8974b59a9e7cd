#!/usr/bin/env bash
# Installs what building ferry needs and is missing, from Debian/Ubuntu packages only.
# The CUDA 13 toolkit (nvcc) must already be present: it is not a Debian package.
set -euo pipefail

packages=(ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev python3 python3-venv python3-matplotlib
          libzip-dev  # .npz input data (ferry/input_data.hpp)
          libboost-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc  # ferry serve
          libjemalloc2  # ferry serve runs on it where installed (apps/ferry/serve_allocator.hpp)
          clang-14 libclang-rt-14-dev llvm-14  # sanitizer and fuzz builds: clang, its runtimes, llvm-symbolizer
          clang-format-14 clang-tidy-14  # scripts/lint.sh: the formatter and the linter
          shellcheck)  # the GPU host's scripts are checked in CI, since CI cannot run them
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# nvcc's C++20 dialect needs CMake >= 3.28; Debian 12 ships 3.25, so then CMake comes from PyPI
# into a virtual environment of the checkout (build-tools/, which scripts/env.sh puts on PATH).
source "$(dirname "$0")/env.sh"
cmake_ok() { command -v cmake >/dev/null && printf '%s\n3.28\n' "$(cmake --version | awk 'NR==1{print $3}')" | sort -V -C -r; }
if ! cmake_ok; then
  echo "setup: installing CMake >= 3.28 from PyPI into build-tools/venv"
  python3 -m venv "$FERRY_TOOLS_VENV"
  "$FERRY_TOOLS_VENV/bin/pip" install -q --disable-pip-version-check 'cmake>=3.28,<4'
  export PATH="$FERRY_TOOLS_VENV/bin:$PATH"
  hash -r
  cmake_ok || { echo "setup: CMake >= 3.28 is still not first on PATH" >&2; exit 1; }
fi

# The serve tests drive `ferry serve` with Triton's own Python client, and the Python package
# (python/) is built with nanobind and tested with pytest: all from PyPI, in the same virtual
# environment (CMake builds the package where it finds nanobind in it). pandas is optional: the
# bench report's to_pandas() and its test need it.
if ! [[ -x "$FERRY_TOOLS_VENV/bin/python" ]] ||
   ! "$FERRY_TOOLS_VENV/bin/python" -c 'import tritonclient.http, tritonclient.grpc, numpy, nanobind, scikit_build_core, pytest, pandas' 2>/dev/null; then
  echo "setup: installing tritonclient[http,grpc], numpy, nanobind, scikit-build-core, pytest and pandas from PyPI into build-tools/venv"
  [[ -x "$FERRY_TOOLS_VENV/bin/python" ]] || python3 -m venv "$FERRY_TOOLS_VENV"
  "$FERRY_TOOLS_VENV/bin/pip" install -q --disable-pip-version-check 'tritonclient[http,grpc]' numpy \
    'nanobind>=2.4,<3' 'scikit-build-core>=0.10' pytest pandas
fi

# The deployment manifests (deploy/) are checked against the published KServe and Kubernetes
# schemas with jsonschema and PyYAML, in the same virtual environment.
if ! "$FERRY_TOOLS_VENV/bin/python" -c 'import jsonschema, yaml' 2>/dev/null; then
  echo "setup: installing jsonschema and PyYAML from PyPI into build-tools/venv"
  "$FERRY_TOOLS_VENV/bin/pip" install -q --disable-pip-version-check jsonschema PyYAML
fi

if ! command -v nvcc >/dev/null 2>&1; then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    echo "setup: nvcc is in /usr/local/cuda/bin; scripts add it to PATH"
  else
    echo "setup: the CUDA 13 toolkit (nvcc) is required and was not found" >&2
    exit 1
  fi
fi
