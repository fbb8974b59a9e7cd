#!/usr/bin/env bash
# calibrate (scripts/gpu_host.sh OUTDIR calibrate): `ferry calibrate --quick` and its default (CALIBRATE_DEPTHS),
# each timed, into OUTDIR/calibrate (its own cache folder, so the profiles come back); then `ferry
# info` (text and --json) and `ferry bench --strategy auto` reading the profile the last sweep
# left; then the default matrix, every strategy, whose report checks the profile's pick against
# the best measured (ADVICE_WIDE=1: also reduce, touch and sparse:0.1 at 256 KB, 4 MB and 64 MB);
# then the sweeps of CALIBRATE_AFTER (e.g. thorough).
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

cal="$out/calibrate"
mkdir -p "$cal"
calibrate_once() {  # calibrate_once DEPTH TAG: one timed sweep, its log and profile kept as -TAG
  local depth=$1 tag=$2 start rc=0 flag=(--"$1")
  [[ $depth == default ]] && flag=()
  step "ferry calibrate --$depth"
  start=$(date +%s%N)
  XDG_CACHE_HOME="$cal/cache" timeout "${CALIBRATE_TIMEOUT:-300}" ferry calibrate "${flag[@]}" --device 0 \
    > "$cal/calibrate-$tag.txt" 2>&1 || rc=$?
  echo "rc=$rc wall_ms=$((($(date +%s%N) - start) / 1000000))" >> "$cal/calibrate-$tag.txt"
  cp "$cal"/cache/ferry/profiles/*.json "$cal/profile-$tag.json" 2> /dev/null || true
  tail -2 "$cal/calibrate-$tag.txt"
}
n=0
for depth in ${CALIBRATE_DEPTHS:-quick default}; do
  n=$((n + 1))
  calibrate_once "$depth" "$depth-$n"
done
step "ferry info with the profile"
XDG_CACHE_HOME="$cal/cache" record "$cal/info.txt" 120 ferry info --device 0
XDG_CACHE_HOME="$cal/cache" ferry info --device 0 --json > "$cal/info.json" 2> "$cal/info-json.stderr" || true
# The benches read the profile the last of CALIBRATE_DEPTHS left.
XDG_CACHE_HOME="$cal/cache" b calibrate/bench-auto --engine reduce,touch --size 64KB,1MB,19MB,256MB --strategy auto \
  --no-link-measure
XDG_CACHE_HOME="$cal/cache" b calibrate/bench-auto-throughput --engine reduce --size 1MB,19MB --strategy auto \
  --objective throughput --no-link-measure
# The default matrix, every strategy: the report checks the profile's pick against the best of
# the same run in each cell group.
XDG_CACHE_HOME="$cal/cache" b calibrate/bench-advice
grep -h "^advice:" "$cal/bench-advice.txt" || true
if [[ -n ${ADVICE_WIDE:-} ]]; then
  XDG_CACHE_HOME="$cal/cache" b calibrate/bench-advice-wide --engine reduce,touch,sparse:0.1 \
    --size 256KB,4MB,64MB --no-recipes --no-link-measure
  grep -h "^advice:" "$cal/bench-advice-wide.txt" || true
fi
# Sweeps after the benches: their profiles come back, the benches above are not affected.
for depth in ${CALIBRATE_AFTER:-}; do
  n=$((n + 1))
  calibrate_once "$depth" "$depth-$n"
done
