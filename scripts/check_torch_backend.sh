#!/usr/bin/env bash
# Compile- and link-checks the libtorch AOTInductor backend plugin against a PyTorch wheel's
# headers and libraries, for machines without a GPU (ours, CI): the plugin is built with -Werror
# and linked with every symbol resolved (--no-undefined) against the wheel's libtorch, and must
# export the backend API's functions. Nothing runs: libtorch needs the CUDA driver to load.
#
#   scripts/check_torch_backend.sh TORCH_DIR [BUILD_DIR]
#   scripts/check_torch_backend.sh --download DIR [BUILD_DIR]
#
# TORCH_DIR holds torch/share/cmake/Torch: an unpacked wheel, or a site-packages folder with torch
# installed. --download fetches the CUDA wheel of PyTorch FERRY_TORCH_VERSION (default 2.11.0, the
# GPU host's; about 530 MB) from PyPI with pip into DIR (outside the repository) and unpacks only
# what a build needs (torch/include, torch/lib, torch/share: about 1 GB), once; a later call finds
# it there. BUILD_DIR defaults to build-torch-check.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 TORCH_DIR [BUILD_DIR]   or   $0 --download DIR [BUILD_DIR]" >&2
  exit 2
}
download=0
if [[ ${1:-} == --download ]]; then
  download=1
  shift
fi
(($# >= 1)) || usage
root=$1
build=${2:-build-torch-check}
version=${FERRY_TORCH_VERSION:-2.11.0}

if ((download)) && [[ ! -d $root/torch/share/cmake/Torch ]]; then
  mkdir -p "$root"
  python=${PYTHON:-python3}
  [[ -x build-tools/venv/bin/python ]] && python=${PYTHON:-build-tools/venv/bin/python}
  start=$SECONDS
  "$python" -m pip download --quiet --no-deps --only-binary :all: --dest "$root" "torch==$version"
  wheel=$(find "$root" -maxdepth 1 -name "torch-$version-*.whl" | head -n 1)
  [[ -n $wheel ]] || {
    echo "check_torch_backend: pip left no torch-$version wheel in $root" >&2
    exit 1
  }
  unzip -q -o "$wheel" 'torch/include/*' 'torch/lib/*' 'torch/share/*' -d "$root"
  echo "check_torch_backend: $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) fetched and unpacked in $((SECONDS - start)) s"
fi
root=$(cd "$root" && pwd)
if [[ ! -d $root/torch/share/cmake/Torch ]]; then
  echo "check_torch_backend: no torch/share/cmake/Torch in $root (an unpacked wheel or site-packages; or --download)" >&2
  exit 2
fi

# shellcheck source=scripts/env.sh
source scripts/env.sh
start=$SECONDS
mkdir -p "$build"
log="$build/configure.log"
# Only what the plugin needs: ferry's core library and the plugin itself.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/torch/share/cmake" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON \
  -DFERRY_BUILD_SERVE=OFF -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_APPS=OFF > "$log" 2>&1 || {
  tail -n 30 "$log" >&2
  exit 1
}
if ! grep -q "libtorch AOTInductor backend plugin ON" "$log"; then
  grep "libtorch AOTInductor backend plugin" "$log" >&2 || tail -n 30 "$log" >&2
  exit 1
fi
cmake --build "$build" --target ferry_backend_torch
plugin="$build/lib/ferry/backends/libferry_backend_torch.so"
exports=$(nm -D --defined-only "$plugin")
missing=""
for symbol in $(grep -o 'ferry_backend_[a-z_]*(' include/ferry/engines/backend_api.h | tr -d '(' | sort -u); do
  # Optional functions the C++ seam does not implement (it computes on a GPU only).
  [[ $symbol == ferry_backend_model_run_host ]] && continue
  grep -q " T $symbol\$" <<< "$exports" || missing="$missing $symbol"
done
if [[ -n $missing ]]; then
  echo "check_torch_backend: $plugin does not export:$missing" >&2
  exit 1
fi
echo "check_torch_backend: $plugin built and linked against PyTorch $version in $((SECONDS - start)) s"
