#!/usr/bin/env bash
# smoke (scripts/gpu_host.sh OUTDIR smoke): `ferry bench` with its defaults, once.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

b smoke
