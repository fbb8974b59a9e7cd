#!/usr/bin/env bash
# plugin-cost (scripts/gpu_host.sh OUTDIR plugin-cost): the plugin boundary: the example backend (a plugin) beside the
# built-in touch (in process), the same kernel and bytes, at 64 KiB and 4 MiB, pinned and device,
# twice, alternating.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

# The example backend computes touch's y = 2x + 1 with touch's kernel, in rows of `width` floats:
# one row of 16384 floats is 64 KiB, one of 1048576 is 4 MiB, touch's --size the same bytes.
mkdir -p "$out/plugin-cost"
for width in 16384 1048576; do
  printf 'format ferry-affine/1\nwidth %s\nmax_batch 1\nscale 2\nbias 1\n' $width > "$out/plugin-cost/w$width.affine"
done
for run in 1 2; do
  for width in 16384 1048576; do
    BENCH_TIMEOUT=60 b plugin-cost/touch-w$width-$run --engine touch --size $((width * 4)) --strategy pinned,device \
      --max-time 2 --no-link-measure
    BENCH_TIMEOUT=60 b plugin-cost/affine-w$width-$run --engine "affine:$out/plugin-cost/w$width.affine" --batch 1 \
      --strategy pinned,device --max-time 2 --no-link-measure
  done
done
grep -h -E "^\| (touch|scale2|affine) " "$out"/plugin-cost/*.txt | sort | tee "$out/plugin-cost/summary.txt" || true
