#!/usr/bin/env bash
# matrix (scripts/gpu_host.sh OUTDIR matrix): `ferry bench` with its defaults, twice back to back, and
# `ferry bench compare` of the two.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

b matrix-1
b matrix-2
step "ferry bench compare"
record "$out/matrix-compare.txt" 60 ferry bench compare "$out/matrix-1.json" "$out/matrix-2.json"
tail -4 "$out/matrix-compare.txt"
