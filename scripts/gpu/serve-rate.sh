#!/usr/bin/env bash
# serve-rate (scripts/gpu_host.sh OUTDIR serve-rate): the HTTP rate of small requests through
# `ferry serve`, and what glibc's arenas cost and give. touch at 4.8 MB (4800000 bytes), pinned,
# 2 slots, inputs and outputs in shared memory, so each HTTP message is a few hundred bytes of JSON.
# SERVE_RATE_PARTS (default "transport arenas") chooses:
#   transport  perf_analyzer at c=1/4/16/64, CUDA and system shared memory, with the default I/O
#              threads and with 2 (--http-io-threads) (about 2 minutes);
#   arenas     for each allocator setting in SERVE_RATE_ARENAS (default "1 2 4 8 jemalloc": glibc
#              with MALLOC_ARENA_MAX arenas, 1 being serve's choice without jemalloc, or jemalloc,
#              serve's own choice where installed, found in the bundle): perf_analyzer at c=16/64 over CUDA
#              shared memory, then scripts/serve_attacks.py many-requests (400 x 4.8 MB bodies at
#              16 clients) for the resident memory before, at peak and idle after (about 40 s each).
# Writes OUTDIR/serve-rate/{default,io2,arenasN}/..., and OUTDIR/serve-rate/summary.txt.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

here=$out/serve-rate
mkdir -p "$here/models/touch"
echo '{"engine": "touch", "strategy": "pinned", "inflight": 2, "input_size": 4800000}' > "$here/models/touch/config.json"
serve_python_ready
perf_analyzer_ready
bundle_ferry_wrapper

# rate_set NAME "SHM..." "CLIENTS..." [SERVER FLAGS...]: one server (the environment the caller
# gives it), perf_analyzer at each shared-memory kind and client count.
rate_set() {
  local name=$1 kinds=$2 counts=$3 shm c
  shift 3
  mkdir -p "$here/$name"
  step "ferry serve: touch 4800000 bytes, pinned, 2 slots, $name: $*"
  start_server "$here/models" "$@" || return 0
  for shm in $kinds; do
    for c in $counts; do
      echo "$name $(run_pa "$here/$name/touch-http-$shm-c$c" 20 -m touch -i http -u "127.0.0.1:$http_port" \
        --concurrency-range "$c:$c" --shared-memory "$shm" --output-shared-memory-size 4800000)" |
        tee -a "$here/summary.txt"
    done
  done
  curl -s "127.0.0.1:$http_port/v2/models/touch/stats" > "$here/$name/stats_touch.json" || true
  stop_server
  cp "$out/serve.log" "$here/$name/serve.log"
}

for part in ${SERVE_RATE_PARTS:-transport arenas}; do
  case $part in
    transport)
      rate_set default "cuda system" "1 4 16 64"
      rate_set io2 "cuda system" "1 4 16 64" --http-io-threads 2
      ;;
    arenas)
      for n in ${SERVE_RATE_ARENAS:-1 2 4 8 jemalloc}; do
        settings=(FERRY_SERVE_MALLOC=glibc "MALLOC_ARENA_MAX=$n")
        if [[ $n == jemalloc ]]; then
          # serve's own choice: it finds the bundle's lib/libjemalloc.so.2 beside its bin/.
          [[ -e .bundle/lib/libjemalloc.so.2 ]] || { echo "serve-rate: no jemalloc in the bundle" | tee -a "$here/summary.txt"; continue; }
          settings=(FERRY_SERVE_MALLOC=jemalloc)
        fi
        server_env=("${settings[@]}")
        rate_set "arenas$n" cuda "16 64"
        server_env=()
        step "serve_attacks many-requests, ${settings[*]}"
        attack_env=()
        for s in "${settings[@]}"; do attack_env+=(--server-env "$s"); done
        record "$here/arenas$n/many-requests.txt" 120 "${host_python[@]}" scripts/serve_attacks.py --ferry /tmp/ferry-with-bundle \
          many-requests "${attack_env[@]}" --json "$here/arenas$n/many-requests.json"
        echo "arenas$n many-requests: $(tr '\n' ' ' < "$here/arenas$n/many-requests.txt")" | tee -a "$here/summary.txt"
      done
      ;;
    *) echo "serve-rate: unknown part '$part' (transport, arenas)" >&2 ;;
  esac
done
