#!/usr/bin/env bash
# Installs what is missing, from Debian/Ubuntu packages and PyPI (into build-tools/venv) only:
#   scripts/setup.sh --for bench   what building ferry and running `ferry bench` need
#                                  (scripts/bench.sh)
#   scripts/setup.sh [--for test]  that and what the tests, the linters and the sanitizer and fuzz
#                                  builds need (scripts/test.sh, CI): everything
# The CUDA 13 toolkit (nvcc) must already be present: it is not a Debian package.
set -euo pipefail
cd "$(dirname "$0")/.."
purpose="test"
case "${1:-}" in
  "") ;;
  --for)
    purpose=${2:-}
    [[ $purpose == bench || $purpose == test ]] || { echo "setup: --for takes bench or test, not '$purpose'" >&2; exit 2; }
    ;;
  *) echo "setup: usage: scripts/setup.sh [--for bench|test]" >&2; exit 2 ;;
esac

# Building: the configure step of the default preset finds all of these (GoogleTest too, as the
# tests are part of the default build; the bench builds only the CLI).
packages=(ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev python3 python3-venv
          libzip-dev  # .npz input data (ferry/session/input_data.hpp)
          libboost-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc  # ferry serve
          libjemalloc2)  # ferry serve runs on it where installed (apps/ferry/serve_allocator.hpp)
if [[ $purpose == test ]]; then
  packages+=(python3-matplotlib  # plot_bench.py's test, and `ferry bench --plot`
             clang-14 libclang-rt-14-dev llvm-14  # sanitizer and fuzz builds: clang, its runtimes, llvm-symbolizer
             clang-format-14 clang-tidy-14  # scripts/lint.sh: the formatter and the linter
             shellcheck  # the scripts are checked in CI, since CI cannot run the GPU host's
             unzip)  # scripts/check_torch_backend.sh unpacks PyTorch's wheel
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" | fold -s -w 160
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CMake >= 3.28 and Ninja, from PyPI into build-tools/venv where the system's are too old or absent.
scripts/build_tools.sh
source scripts/env.sh
[[ -x $FERRY_TOOLS_VENV/bin/python ]] || python3 -m venv "$FERRY_TOOLS_VENV"
pip_install() { "$FERRY_TOOLS_VENV/bin/pip" install -q --disable-pip-version-check "$@"; }

# The Python package (python/) is built with nanobind where CMake finds it in build-tools/venv:
# the bench's configure finds it too, so that a later test run's build (which keeps the
# configuration) builds the package.
if ! "$FERRY_TOOLS_VENV/bin/python" -c 'import nanobind, scikit_build_core' 2>/dev/null; then
  echo "setup: installing nanobind and scikit-build-core from PyPI into build-tools/venv"
  pip_install 'nanobind>=2.4,<3' 'scikit-build-core>=0.10'
fi

if [[ $purpose == test ]]; then
  # The serve tests drive `ferry serve` with Triton's own Python client; the Python package is
  # tested with pytest; pandas is optional (the bench report's to_pandas() and its test need it).
  if ! "$FERRY_TOOLS_VENV/bin/python" -c 'import tritonclient.http, tritonclient.grpc, numpy, pytest, pandas' 2>/dev/null; then
    echo "setup: installing tritonclient[http,grpc], numpy, pytest and pandas from PyPI into build-tools/venv"
    pip_install 'tritonclient[http,grpc]' numpy pytest pandas
  fi
  # The deployment manifests (deploy/) are checked against the published KServe and Kubernetes
  # schemas with jsonschema and PyYAML.
  if ! "$FERRY_TOOLS_VENV/bin/python" -c 'import jsonschema, yaml' 2>/dev/null; then
    echo "setup: installing jsonschema and PyYAML from PyPI into build-tools/venv"
    pip_install jsonschema PyYAML
  fi
fi

if ! command -v nvcc >/dev/null 2>&1; then
  echo "setup: the CUDA 13 toolkit (nvcc) is required and was not found (install it from NVIDIA: it is" \
    "not a Debian package)" >&2
  exit 3
fi
