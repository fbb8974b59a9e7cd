#!/usr/bin/env bash
# probes (scripts/gpu_host.sh OUTDIR probes): the hand-written probes of scripts/probes: the managed-paths probe from the
# bundle, and the libtorch-paths probe built here against the host's PyTorch (batch 16).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

if [[ -x .bundle/bin/managed_paths ]]; then
  step "probe: managed paths"
  record "$out/managed_paths.txt" 200 .bundle/bin/managed_paths
fi
torch_ready || { echo "probes: the libtorch probe needs the torch plugin and models/resnet50.pt2"; exit 1; }
step "probe: libtorch paths, batch 16"
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
{ cmake -S scripts/probes -B build-probes -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" &&
  cmake --build build-probes; } > "$out/probes-build.log" 2>&1
record "$out/torch_paths_b16.txt" 200 build-probes/torch_paths models/resnet50.pt2 16 100
