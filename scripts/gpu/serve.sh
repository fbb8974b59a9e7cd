#!/usr/bin/env bash
# serve (scripts/gpu_host.sh OUTDIR serve): `ferry serve` with touch at 4.8 MB (4800000 bytes), pinned, 2
# slots: one client over raw HTTP with system and with CUDA shared memory (req/s and the server's
# compute_input/infer/output per request, scripts/serve_shm_rate.py), perf_analyzer --shared-memory
# system|cuda at c=1/4/16/64 (SERVE_FLAGS: more flags for the server), and `ferry bench` on the
# same engine for comparison (about 3 minutes). It times the host: nothing runs beside it.
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

serve_python_ready
mkdir -p "$out/serve/models/touch"
echo '{"engine": "touch", "strategy": "pinned", "inflight": 2, "input_size": 4800000}' \
  > "$out/serve/models/touch/config.json"
step "ferry serve: touch 4800000 bytes, pinned, 2 slots"
read -r -a serve_flags <<< "${SERVE_FLAGS:-}"
start_server "$out/serve/models" "${serve_flags[@]}"
# One client, raw HTTP: the rate and what the server says each request cost it.
for shm in system cuda; do
  step "one client over raw HTTP, $shm shared memory"
  record "$out/serve/rate-$shm.txt" 60 "${host_python[@]}" scripts/serve_shm_rate.py --url "127.0.0.1:$http_port" --model touch \
    --bytes 4800000 --shm $shm --seconds 5 --json "$out/serve/rate-$shm.json"
  cat "$out/serve/rate-$shm.txt"
done
if perf_analyzer_ready; then
  for shm in system cuda; do
    for c in 1 4 16 64; do
      step "perf_analyzer touch http shm=$shm c=$c"
      run_pa "$out/serve/touch-http-$shm-c$c" 30 -m touch -i http -u "127.0.0.1:$http_port" --concurrency-range "$c:$c" \
        --shared-memory $shm --output-shared-memory-size 4800000
    done
  done
  python3 scripts/summarise_perf_analyzer.py --title "perf_analyzer against ferry serve: touch, 4,800,000 bytes, pinned, 2 slots" \
    "$out/serve" > "$out/serve/perf_analyzer.md" || true
fi
curl -s "127.0.0.1:$http_port/v2/models/touch/stats" > "$out/serve/stats_touch.json" || true
curl -s "127.0.0.1:$http_port/metrics" > "$out/serve/metrics.txt" || true
stop_server
# The same engine, size and strategy in the library alone: the floor under the server's rate.
BENCH_TIMEOUT=90 b serve/bench-touch --engine touch --size 4800000 --strategy pinned --no-link-measure
BENCH_TIMEOUT=90 b serve/bench-touch-2slots --engine touch --size 4800000 --strategy pinned --inflight 2 \
  --no-link-measure
