#!/usr/bin/env bash
# serve-rate: the HTTP rate of small requests through `ferry serve`, with the default I/O threads
# and with 2 (--http-io-threads). touch at 4.8 MB (4800000 bytes), pinned, 2 slots, inputs and
# outputs in CUDA and in system shared memory, so each HTTP message is a few hundred bytes of JSON;
# perf_analyzer at c=1/4/16/64 for each, then CUDA memory at c=16/64 with MALLOC_ARENA_MAX=8
# (about 2 minutes). It times the host: nothing runs beside it.
#   scripts/gpu/serve-rate.sh OUTDIR
# Run from the repository root after `source scripts/gpu_host_env.sh`, with the bundle
# (scripts/gpu_bundle.sh) as .bundle, ferry on PATH and the wheels of scripts/fetch_gpu_wheels.sh as
# .whl. Writes OUTDIR/serve-rate/{default,io2,arenas8}/touch-http-{cuda,system}-cN.{txt,csv}, each
# server's log and statistics, and OUTDIR/serve-rate/summary.txt (infer/s and latency per run).
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/serve-rate.sh OUTDIR}
mkdir -p "$out/serve-rate"
out=$(cd "$out" && pwd)
here=$out/serve-rate
# Python and perf_analyzer run with the host's own libraries, ferry with the bundle's.
if [[ -z ${HOST_LD_LIBRARY_PATH+x} ]]; then
  HOST_LD_LIBRARY_PATH=$(tr ':' '\n' <<< "${LD_LIBRARY_PATH:-}" | grep -v '/\.bundle/' | paste -sd: - || true)
fi

step() { echo "== $(date -u +%T) $*" | tee -a "$out/steps.txt"; }

# The wheels, installed out of the way so the host's own site-packages stay as they are.
site=/tmp/ferry-serve-site
if compgen -G ".whl/*.whl" > /dev/null; then
  LD_LIBRARY_PATH=$HOST_LD_LIBRARY_PATH python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target "$site" .whl/*.whl > "$here/wheels.txt" 2>&1 || echo "pip install failed" >> "$here/wheels.txt"
fi
# perf_analyzer dlopens the unversioned libcudart.so for --shared-memory cuda; a runtime-only
# install has only libcudart.so.13, so a link to it is made for perf_analyzer alone.
pa=${PERF_ANALYZER:-$site/perf_analyzer/bin/perf_analyzer}
pa_libs=/tmp/ferry-serve-pa-libs
mkdir -p "$pa_libs"
for candidate in /usr/local/cuda/lib64/libcudart.so /usr/local/cuda/lib64/libcudart.so.13 "$PWD/.bundle/lib/libcudart.so.13"; do
  if [[ -e $candidate ]]; then
    ln -sf "$candidate" "$pa_libs/libcudart.so"
    break
  fi
done
[[ -f $pa ]] && chmod +x "$pa"
if [[ ! -x $pa ]] || LD_LIBRARY_PATH=$pa_libs:$HOST_LD_LIBRARY_PATH "$pa" 2>&1 |
  grep -qE "GLIBC_|error while loading shared libraries|cannot execute"; then
  echo "perf_analyzer cannot run here ($pa)" | tee -a "$out/steps.txt"
  exit 1
fi

mkdir -p "$here/models/touch"
echo '{"engine": "touch", "strategy": "pinned", "inflight": 2, "input_size": 4800000}' > "$here/models/touch/config.json"

server_pid=
stop_server() {
  [[ -z $server_pid ]] && return 0
  kill -TERM "$server_pid" 2> /dev/null || true
  for _ in $(seq 1 40); do
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.5
  done
  kill -0 "$server_pid" 2> /dev/null && kill -KILL "$server_pid"
  wait "$server_pid" 2> /dev/null || true
  server_pid=
}
trap stop_server EXIT

# serve_set NAME "ENV=VALUE..." "FLAGS..." "SHM..." "CLIENTS...": one server, perf_analyzer at each
# shared-memory kind and client count.
serve_set() {
  local name=$1 env_words=$2 flags=$3 kinds=$4 counts=$5 dir=$here/$1 port shm c stem rc line
  mkdir -p "$dir"
  step "ferry serve: touch 4800000 bytes, pinned, 2 slots, $name: ${env_words:-} ${flags:-}"
  # shellcheck disable=SC2086  # the settings and flags are words
  env $env_words ferry serve --model-repository "$here/models" --host 127.0.0.1 --http-port 0 --grpc-port 0 \
    --allow-client-shm $flags > "$dir/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 120); do
    grep -q "ferry serve: serving" "$dir/serve.log" && break
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.5
  done
  if ! grep -q "ferry serve: serving" "$dir/serve.log"; then
    echo "ferry serve did not start:"
    tail -20 "$dir/serve.log"
    stop_server
    return 0
  fi
  port=$(sed -nE 's/.*HTTP on [^ ]+:([0-9]+).*/\1/p' "$dir/serve.log" | head -1)
  for shm in $kinds; do
    for c in $counts; do
      stem=$dir/touch-http-$shm-c$c
      step "perf_analyzer touch http shm=$shm c=$c ($name)"
      rc=0
      # The serve set's invocation, with 3 trials instead of 4 so that every run fits in 2 minutes.
      LD_LIBRARY_PATH=$pa_libs:$HOST_LD_LIBRARY_PATH timeout 12 "$pa" -m touch -i http -u "127.0.0.1:$port" \
        --concurrency-range "$c:$c" --shared-memory "$shm" --output-shared-memory-size 4800000 \
        --measurement-interval 1000 --max-trials 3 --stability-percentage 20 -f "$stem.csv" > "$stem.txt" 2>&1 || rc=$?
      echo "rc=$rc" >> "$stem.txt"
      line="$name shm=$shm c=$c: $(grep -E "Throughput|Avg latency|p50 latency|rc=" "$stem.txt" | tr -s ' ' | tr '\n' ' ')"
      echo "$line" | tee -a "$here/summary.txt"
    done
  done
  curl -s "127.0.0.1:$port/v2/models/touch/stats" > "$dir/stats_touch.json" || true
  stop_server
}

# The default I/O threads (a quarter of the cores), then 2 (the former fixed count); then, where
# small requests meet the most threads, glibc's own arenas instead of the one `ferry serve` sets.
serve_set default "" "" "cuda system" "1 4 16 64"
serve_set io2 "" "--http-io-threads 2" "cuda system" "1 4 16 64"
serve_set arenas8 "MALLOC_ARENA_MAX=8" "" "cuda" "16 64"
