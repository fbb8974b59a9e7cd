#!/usr/bin/env bash
# aa (scripts/gpu_host.sh OUTDIR aa): compare calibrated. The default matrix as A1 B1 A2 A3 B2 A4 B3 (B with
# --slowdown 10, a real 10% change of every request on both figures compare judges: a spin kernel
# makes the GPU's own time 10% longer, a wait on the host the end-to-end latency), each run with
# AA_FLAGS (default: --max-time 1.5 --trials 6 --no-recipes, no link peak, no UM counters): six
# trials, because with three Student's t is 6.96 and a cell whose DMA time moved between trials got
# a threshold above the 10% to be found (six leave 3.36); no recipes, because compare judges the
# strategy's own figures, and with the recipe and the floor beside it a 19 MB cell's 0.25 s trial
# held 5 requests timed on the GPU (its median from 5 is itself a few percent off). `ferry bench
# compare --json` for each A/A pair (consecutive A runs: the false rate, every cell, on each figure)
# and each A run next to a B run (the true rate, cells of 16 MB and up, on the GPU figure with the
# end-to-end rate beside it), summarised by aa_summary.py. A run is not started once it would end past
# AA_BUDGET seconds (420; a run took 85-92 s with recipes).
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

# Where the host's memory and CPUs sit against the GPU: a figure that depends on where a trial's
# buffers landed (another NUMA node) shows as spread between trials.
{ lscpu; numactl --hardware; nvidia-smi topo -m; } > "$out/aa-host.txt" 2>&1 || true
read -r -a aa_flags <<< "${AA_FLAGS:---max-time 1.5 --trials 6 --no-recipes --no-link-measure --no-um-counters}"
# Three A/A pairs come out of six runs (A1-A2 with B1 between them, A2-A3 back to back, A3-A4
# with B2 between) and every B sits between two A runs (A/B and B/A).
aa_start=$(date +%s)
last=0
runs=()
for name in A1 B1 A2 A3 B2 A4 B3; do
  now=$(date +%s)
  if ((now - aa_start + last > ${AA_BUDGET:-420})); then
    echo "aa: $name not started: $((now - aa_start)) s spent, the last run took $last s" | tee -a "$out/steps.txt"
    break
  fi
  slow=()
  [[ $name == B* ]] && slow=(--slowdown 10)
  BENCH_TIMEOUT=${AA_RUN_TIMEOUT:-200} b "aa-$name" "${aa_flags[@]}" "${slow[@]}"
  last=$(($(date +%s) - now))
  echo "aa: $name took $last s ($(tail -1 "$out/aa-$name.txt"))" | tee -a "$out/steps.txt"
  [[ -e $out/aa-$name.json ]] && runs+=("$name")
done
step "aa: compare"
printf '%s\n' "${runs[@]}" > "$out/aa-runs.txt"
compare() { record "$out/aa-compare-$1-$2.txt" 60 ferry bench compare "$out/aa-$1.json" "$out/aa-$2.json" \
  --json "$out/aa-compare-$1-$2.json"; }
previous_a=
for ((i = 0; i < ${#runs[@]}; ++i)); do
  x=${runs[i]}
  if ((i > 0)) && [[ ${runs[i - 1]:0:1} != "${x:0:1}" ]]; then compare "${runs[i - 1]}" "$x"; fi  # an A next to a B
  if [[ $x == A* ]]; then
    [[ -n $previous_a ]] && compare "$previous_a" "$x"
    previous_a=$x
  fi
done
python3 scripts/gpu/aa_summary.py "$out" | tee "$out/aa-summary.txt"
