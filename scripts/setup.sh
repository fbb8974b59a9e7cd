#!/usr/bin/env bash
# Installs what building ferry needs and is missing, from Debian/Ubuntu packages only.
# The CUDA 13 toolkit (nvcc) must already be present: it is not a Debian package.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev python3)
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

if ! command -v nvcc >/dev/null 2>&1; then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    echo "setup: nvcc is in /usr/local/cuda/bin; scripts add it to PATH"
  else
    echo "setup: the CUDA 13 toolkit (nvcc) is required and was not found" >&2
    exit 1
  fi
fi
