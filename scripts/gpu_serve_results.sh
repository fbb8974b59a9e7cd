#!/usr/bin/env bash
# Issue 5's GPU-host measurements of `ferry serve`, in one go (that machine keeps nothing between
# sessions): perf_analyzer against the server over HTTP and gRPC, without shared memory, with
# system and with CUDA shared memory, at concurrency 1, 4, 16 and 64; `ferry bench` on the same
# engines, strategy and shapes for comparison; then the serve test suite against the same build.
# Everything lands in OUTDIR; TARBALL, when given, is refreshed after every step so a run cut short
# still returns what it measured.
#
#   scripts/gpu_serve_results.sh OUTDIR [TARBALL] [SET]
# SET: all (default) or a space-separated subset of: perf-http perf-grpc pa-memory bench suite
# (pa-memory: touch without shared memory at c=16 and 64 over HTTP, perf_analyzer's resident
# memory sampled every half second, in time windows and in short request-count windows)
#
# Here, before the call:  scripts/gpu_bundle.sh && scripts/fetch_gpu_wheels.sh
# The device call (the three carried paths come to about 63 MiB of the 64 MiB a call may carry,
# the working tree included; the whole .bundle with its test binaries would not fit):
#   run carry=[".bundle/lib", ".bundle/bin/ferry", ".whl"] timeout_s=600
#       command="scripts/gpu_serve_results.sh out/serve $OUT/serve.tgz"
# If the 10-minute limit cuts it short, run the rest with SET, e.g. "bench suite". If the call is
# refused for size, `scripts/fetch_gpu_wheels.sh --without-cuda-bindings` saves 12 MB (only
# test_cuda_shm needs them; it then skips, saying why).
#
# The command lines it runs (MODEL, C, PROTOCOL and SHM vary; models in OUTDIR/models):
#   ferry serve --model-repository OUTDIR/models --host 127.0.0.1 --http-port 0 --grpc-port 0 --allow-client-shm
#   perf_analyzer -m MODEL -i PROTOCOL -u 127.0.0.1:PORT --concurrency-range C:C
#       --shared-memory none|system|cuda [--output-shared-memory-size 4800000 with shared memory]
#       --measurement-interval 1000 --max-trials 4 --stability-percentage 20 -f OUTDIR/perf/NAME.csv
#   ferry bench --engine mlp:24x2048 --batch 16 --strategy pinned --inflight 2 --clients C
#       --duration 1.5 --no-link-measure --json OUTDIR/bench/NAME.json --csv OUTDIR/bench/NAME.csv
#   ferry bench --engine touch|reduce --size 4.8MB --strategy pinned --inflight 2 --clients C (the same)
#   cd tests/serve && FERRY_BIN=.bundle/bin/ferry python3 -m unittest -v MODULE   (each test_*.py)
#
# perf_analyzer sends one request of batch 1 per client, so `mlp` (max_batch 16) measures the
# server's dynamic batching, and touch/reduce (one 4.8 MB f32 tensor, not batched) measure the
# input path: a lone shared-memory input is read in place (one DMA from a system region, none
# from a CUDA region). Environment variables: FERRY (the ferry binary, default .bundle/bin/ferry),
# PERF_ANALYZER (default: the one installed from .whl), PA_MODELS (default "mlp touch reduce"),
# SERVE_ARGS (extra `ferry serve` options for the perf_analyzer runs, e.g. "--devices 0" to
# compare with `ferry bench` on one GPU; the test suite always starts its own servers).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:?usage: scripts/gpu_serve_results.sh OUTDIR [TARBALL] [SET]}
tarball=${2:-}
set_=${3:-all}
mkdir -p "$out/perf" "$out/bench" "$out/suite"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
ferry=${FERRY:-$root/.bundle/bin/ferry}
[[ $ferry == /* ]] || ferry=$root/$ferry
pa_models=${PA_MODELS:-mlp touch reduce}
wanted() { [[ $set_ == all || " $set_ " == *" $1 "* ]]; }
source scripts/gpu_steps.sh
# The bundle's libraries (and the host's cuBLAS) for ferry only, through a wrapper that execs it
# (so its pid is ferry's): perf_analyzer and python keep the host's own OpenSSL and friends.
wrapper_dir=/tmp/ferry-serve-bin
mkdir -p "$wrapper_dir"
printf '#!/usr/bin/env bash\nsource %q\nexec %q "$@"\n' "$root/scripts/gpu_host_env.sh" "$ferry" > "$wrapper_dir/ferry"
chmod +x "$wrapper_dir/ferry"
ferry_run=$wrapper_dir/ferry

step "environment"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  python3 --version 2>&1
  ldd --version 2>&1 | head -1
  "$ferry_run" info 2>&1
} > "$out/environment.txt"

# Python packages from .whl (scripts/fetch_gpu_wheels.sh): tritonclient, cuda-bindings,
# perf-analyzer. Installed out of the way so the host's own site-packages stay as they are.
site=/tmp/ferry-serve-site
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl \
    > "$out/wheels.txt" 2>&1 || echo "pip install rc=$?" >> "$out/wheels.txt"
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
else
  echo "no .whl/ here: using the python packages already installed" > "$out/wheels.txt"
fi
pa=${PERF_ANALYZER:-$site/perf_analyzer/bin/perf_analyzer}
[[ -f $pa ]] && chmod +x "$pa"
# perf_analyzer dlopens the unversioned libcudart.so for --shared-memory cuda; the toolkit has
# it, a runtime-only install has only libcudart.so.13, so a link to that is made for it alone.
pa_libs=/tmp/ferry-serve-pa-libs
mkdir -p "$pa_libs"
for candidate in /usr/local/cuda/lib64/libcudart.so /usr/local/cuda/lib64/libcudart.so.13 \
                 "$root/.bundle/lib/libcudart.so.13"; do
  [[ -e $candidate ]] && { ln -sf "$candidate" "$pa_libs/libcudart.so"; break; }
done
# perf_analyzer has no --help (2.60 calls it an invalid option and prints its usage); what it
# must not print is the loader's complaint (a glibc too old, a library missing).
pa_runnable() {
  [[ -x $pa ]] || return 1
  ! LD_LIBRARY_PATH=$pa_libs "$pa" 2>&1 | grep -qE "GLIBC_|error while loading shared libraries|cannot execute"
}

step "model repository"
models=$out/models
rm -rf "$models"
mkdir -p "$models"/{mlp,touch,reduce}
echo '{"engine": "mlp:24x2048", "strategy": "pinned", "inflight": 2, "max_batch": 16, "batch_delay_us": 200}' \
  > "$models/mlp/config.json"
echo '{"engine": "touch", "strategy": "pinned", "inflight": 2, "input_size": "4.8MB"}' > "$models/touch/config.json"
echo '{"engine": "reduce", "strategy": "pinned", "inflight": 2, "input_size": "4.8MB"}' > "$models/reduce/config.json"
head "$models"/*/config.json > "$out/models.txt"

server_pid=
http_port=
grpc_port=
start_server() {
  local log=$out/serve.log
  : > "$log"
  "$ferry_run" serve --model-repository "$models" --host 127.0.0.1 --http-port 0 --grpc-port 0 \
    --allow-client-shm ${SERVE_ARGS:-} >> "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 240); do  # warm-up of every slot included; 2 minutes at most
    grep -q "ferry serve: serving" "$log" && break
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.5
  done
  http_port=$(sed -nE 's/.*HTTP on [^ ]+:([0-9]+).*/\1/p' "$log" | head -1)
  grpc_port=$(sed -nE 's/.*gRPC on [^ ]+:([0-9]+).*/\1/p' "$log" | head -1)
  if ! grep -q "ferry serve: serving" "$log"; then
    echo "ferry serve did not start:"
    tail -20 "$log"
    stop_server
    return 1
  fi
  echo "ferry serve: HTTP on $http_port, gRPC on $grpc_port"
  curl -s "127.0.0.1:$http_port/v2" > "$out/server_metadata.json"
  for m in mlp touch reduce; do curl -s "127.0.0.1:$http_port/v2/models/$m/config" > "$out/config_$m.json"; done
}
stop_server() {
  [[ -z $server_pid ]] && return 0
  kill -TERM "$server_pid" 2> /dev/null
  for _ in $(seq 1 60); do kill -0 "$server_pid" 2> /dev/null || break; sleep 0.5; done
  kill -0 "$server_pid" 2> /dev/null && { echo "ferry serve ignored SIGTERM; killing it"; kill -KILL "$server_pid"; }
  wait "$server_pid" 2> /dev/null
  echo "ferry serve exited with $?" | tee -a "$out/serve.log"
  server_pid=
}
trap stop_server EXIT

perf_matrix() {
  local protocol=$1 port=$2
  if ! pa_runnable; then
    echo "perf_analyzer cannot run here ($pa): $(LD_LIBRARY_PATH=$pa_libs "$pa" 2>&1 | head -2)" \
      | tee "$out/perf/not_run_$protocol.txt"
    return 0
  fi
  for model in $pa_models; do
    for shm in none system cuda; do
      for c in 1 4 16 64; do
        local name=$model-$protocol-$shm-c$c
        echo "perf_analyzer $model $protocol shm=$shm c=$c"
        # 4.8 MB: the largest output (touch's) fits every model's output region.
        local shm_args=(--shared-memory "$shm")
        [[ $shm != none ]] && shm_args+=(--output-shared-memory-size 4800000)
        LD_LIBRARY_PATH=$pa_libs timeout 40 "$pa" -m "$model" -i "$protocol" -u "127.0.0.1:$port" \
          --concurrency-range "$c:$c" "${shm_args[@]}" \
          --measurement-interval 1000 --max-trials 4 --stability-percentage 20 \
          -f "$out/perf/$name.csv" > "$out/perf/$name.txt" 2>&1
        local rc=$?
        echo "rc=$rc" >> "$out/perf/$name.txt"
        grep -E "Throughput|Avg latency|p99 latency|rc=" "$out/perf/$name.txt" | tr '\n' ' '
        echo
        # A first run that fails (a missing endpoint, a refused model) fails them all: say so
        # once and spend the time on the rest.
        if [[ $rc != 0 && $shm == none && $c == 1 ]]; then
          echo "skipping $model over $protocol: its first run failed (rc=$rc, see perf/$name.txt)" \
            | tee -a "$out/perf/skipped.txt"
          continue 3
        fi
      done
    done
    curl -s "127.0.0.1:$http_port/v2/models/$model/stats" > "$out/perf/stats_${model}_$protocol.json"
  done
}

# perf_analyzer's own memory while it drives 4.8 MB tensors through the request body: the
# time-window runs at c=16 and c=64 never printed a result (killed, or out of time) while the
# server answered every request.
pa_memory() {
  local port=$1
  pa_runnable || { echo "perf_analyzer cannot run here" > "$out/perf/pa_memory.txt"; return 0; }
  for mode in time count; do
    for c in 16 64; do
      local name=touch-http-none-c$c-$mode
      local mode_args=(--measurement-interval 1000 --max-trials 4 --stability-percentage 20)
      [[ $mode == count ]] && mode_args=(--measurement-mode count_windows --measurement-request-count 64
                                         --max-trials 4 --stability-percentage 20)
      LD_LIBRARY_PATH=$pa_libs timeout 40 "$pa" -m touch -i http -u "127.0.0.1:$port" --concurrency-range "$c:$c" \
        --shared-memory none "${mode_args[@]}" -f "$out/perf/$name.csv" > "$out/perf/$name.txt" 2>&1 &
      local pa_pid=$! peak=0 rss
      while kill -0 "$pa_pid" 2> /dev/null; do
        rss=$(ps -o rss= -p "$(pgrep -P "$pa_pid" | head -1)" 2> /dev/null | tr -d ' ')
        [[ -n $rss && $rss -gt $peak ]] && peak=$rss
        echo "$(date -u +%T.%N | cut -c1-12) rss_kib=${rss:-?}" >> "$out/perf/$name.rss"
        sleep 0.5
      done
      wait "$pa_pid"
      local rc=$?
      echo "rc=$rc peak_rss_mib=$((peak / 1024))" | tee -a "$out/perf/$name.txt"
      grep -E "Throughput|Avg latency" "$out/perf/$name.txt" | head -2
      free -m > "$out/perf/$name.free"
    done
  done
}

if wanted perf-http || wanted perf-grpc || wanted pa-memory; then
  step "ferry serve"
  if start_server; then
    wanted pa-memory && { step "perf_analyzer's memory"; pa_memory "$http_port"; }
    wanted perf-http && { step "perf_analyzer over HTTP"; perf_matrix http "$http_port"; }
    # perf_analyzer asks gRPC servers for the model configuration first (the ModelConfig RPC).
    wanted perf-grpc && { step "perf_analyzer over gRPC"; perf_matrix grpc "$grpc_port"; }
    curl -s "127.0.0.1:$http_port/metrics" > "$out/metrics.txt"
    stop_server
  fi
fi

bench() {
  local name=$1
  shift
  echo "ferry bench $*" > "$out/bench/$name.txt"
  timeout 120 "$ferry_run" bench "$@" --strategy pinned --inflight 2 --duration 1.5 --no-link-measure \
    --json "$out/bench/$name.json" --csv "$out/bench/$name.csv" >> "$out/bench/$name.txt" 2>&1
  echo "rc=$?" >> "$out/bench/$name.txt"
}
if wanted bench; then
  step "ferry bench"
  for c in 1 4 16 64; do
    bench mlp-c$c --engine mlp:24x2048 --batch 16 --clients $c
    bench touch-c$c --engine touch --size 4.8MB --clients $c
    bench reduce-c$c --engine reduce --size 4.8MB --clients $c
  done
  grep -h "rc=" "$out"/bench/*.txt | sort | uniq -c
fi

if wanted suite; then
  step "serve test suite"
  for module_path in tests/serve/test_*.py; do
    module=$(basename "$module_path" .py)
    (cd tests/serve && FERRY_BIN=$ferry_run timeout 300 python3 -m unittest -v "$module") \
      > "$out/suite/$module.txt" 2>&1
    echo "$module rc=$?" | tee -a "$out/suite/summary.txt"
  done
fi
step "done"
