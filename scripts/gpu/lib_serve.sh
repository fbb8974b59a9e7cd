# shellcheck shell=bash
# What the serve sets share, sourced after scripts/gpu/lib.sh: the Python wheels carried as .whl
# (scripts/fetch_gpu_wheels.sh: tritonclient, perf-analyzer, cuda-bindings), installed out of the
# way so the host's own site-packages stay as they are; perf_analyzer; and one `ferry serve` on
# free ports. Python and perf_analyzer run with the host's own libraries (HOST_LD_LIBRARY_PATH,
# kept by the runner), ferry with the bundle's.
: "${out:?scripts/gpu/lib_serve.sh is sourced by a set after out=OUTDIR}"

serve_python_ready() {
  [[ -n ${serve_site:-} ]] && return 0
  serve_site=/tmp/ferry-serve-site
  if compgen -G ".whl/*.whl" > /dev/null; then
    LD_LIBRARY_PATH=${HOST_LD_LIBRARY_PATH:-} python3 -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --upgrade --target "$serve_site" .whl/*.whl > "$out/wheels.txt" 2>&1 ||
      echo "pip install failed" >> "$out/wheels.txt"
    export PYTHONPATH=$serve_site${PYTHONPATH:+:$PYTHONPATH}
  else
    echo "no .whl/ here: using the python packages already installed" > "$out/wheels.txt"
  fi
}
# The host's python3 with the host's libraries, as a command (not a function): `record` runs it
# under timeout, which cannot run shell functions.
# shellcheck disable=SC2034  # used by the sets that source this file
host_python=(env "LD_LIBRARY_PATH=${HOST_LD_LIBRARY_PATH:-}" python3)
# /tmp/ferry-with-bundle: the bundle's ferry through a wrapper carrying the bundle's libraries, for
# Python scripts that start servers themselves (their own python runs with the host's libraries).
bundle_ferry_wrapper() {
  printf '#!/usr/bin/env bash\nsource %q\nexec %q "$@"\n' "$PWD/scripts/gpu_host_env.sh" "$PWD/.bundle/bin/ferry" \
    > /tmp/ferry-with-bundle
  chmod +x /tmp/ferry-with-bundle
}

# perf_analyzer (from the perf-analyzer wheel) as $pa, with $pa_libs for its LD_LIBRARY_PATH: it
# dlopens the unversioned libcudart.so for --shared-memory cuda, and a runtime-only install has
# only libcudart.so.13, so a link to it is made for perf_analyzer alone. Fails, saying why, where
# perf_analyzer cannot run (perf_analyzer has no --help; what it must not print is the loader's
# complaint).
perf_analyzer_ready() {
  pa=${PERF_ANALYZER:-$serve_site/perf_analyzer/bin/perf_analyzer}
  pa_libs=/tmp/ferry-serve-pa-libs
  mkdir -p "$pa_libs"
  local candidate
  for candidate in /usr/local/cuda/lib64/libcudart.so /usr/local/cuda/lib64/libcudart.so.13 \
    "$PWD/.bundle/lib/libcudart.so.13"; do
    if [[ -e $candidate ]]; then
      ln -sf "$candidate" "$pa_libs/libcudart.so"
      break
    fi
  done
  [[ -f $pa ]] && chmod +x "$pa"
  if [[ ! -x $pa ]] || LD_LIBRARY_PATH=$pa_libs:${HOST_LD_LIBRARY_PATH:-} "$pa" 2>&1 |
    grep -qE "GLIBC_|error while loading shared libraries|cannot execute"; then
    echo "perf_analyzer cannot run here ($pa)" | tee -a "$out/steps.txt"
    return 1
  fi
}
# run_pa FILE_STEM TIMEOUT ARGS...: one perf_analyzer measurement (FILE_STEM.csv and .txt), its
# summary line printed; a measurement that does not settle is a result, not a failure of the set.
# A measurement that found no request wholly inside its 1 s window ("No valid requests recorded"),
# or no two of its four windows within 20% of each other ("Failed to obtain stable measurement": a
# launch-bound model's rate moves that much from second to second), is run once more with 4 s
# windows, its first attempt kept as FILE_STEM.first.txt.
run_pa() {
  local stem=$1 limit=$2 rc=0
  shift 2
  pa_once "$stem" "$limit" 1000 "$@" || rc=$?
  if ((rc != 0)) && grep -qE "No valid requests recorded|Failed to obtain stable measurement" "$stem.txt"; then
    mv "$stem.txt" "$stem.first.txt"
    rc=0
    pa_once "$stem" "$limit" 4000 "$@" || rc=$?
  fi
  echo "rc=$rc" >> "$stem.txt"
  echo "$(basename "$stem"): $(grep -E "Throughput|p99 latency|Avg latency|rc=" "$stem.txt" | tr '\n' ' ')"
}
# pa_once FILE_STEM TIMEOUT WINDOW_MS ARGS...: one perf_analyzer run into FILE_STEM.txt and .csv,
# run through the words of the array pa_prefix when set (another user's, say).
pa_prefix=()
pa_once() {
  local stem=$1 limit=$2 window=$3
  shift 3
  LD_LIBRARY_PATH=$pa_libs:${HOST_LD_LIBRARY_PATH:-} timeout "$limit" "${pa_prefix[@]}" "$pa" --measurement-interval "$window" \
    --max-trials 4 --stability-percentage 20 -f "$stem.csv" "$@" > "$stem.txt" 2>&1
}

server_pid=
# shellcheck disable=SC2034  # the ports are read by the sets
http_port='' grpc_port=''
# start_server REPOSITORY [FLAGS...]: ferry serve on free ports, waiting for its warm-up; its log
# is OUTDIR/serve.log. The EXIT trap stops it. NAME=VALUE words in the array server_env go to the
# server's environment only (an allocator's settings), not to the clients'. FERRY_SERVER names
# another build's ferry to serve with (two builds compared in one call); by default the bundle's.
server_env=()
start_server() {
  local log=$out/serve.log repository=$1
  shift
  : > "$log"
  env "${server_env[@]}" "${FERRY_SERVER:-ferry}" serve --model-repository "$repository" --host 127.0.0.1 --http-port 0 --grpc-port 0 --allow-client-shm "$@" \
    >> "$log" 2>&1 &
  server_pid=$!
  trap stop_server EXIT
  local _
  for _ in $(seq 1 120); do
    grep -q "ferry serve: serving" "$log" && break
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.5
  done
  # shellcheck disable=SC2034
  http_port=$(sed -nE 's/.*HTTP on [^ ]+:([0-9]+).*/\1/p' "$log" | head -1)
  # shellcheck disable=SC2034
  grpc_port=$(sed -nE 's/.*gRPC on [^ ]+:([0-9]+).*/\1/p' "$log" | head -1)
  grep -q "ferry serve: serving" "$log" && return 0
  echo "ferry serve did not start:"
  tail -20 "$log"
  stop_server
  return 1
}
stop_server() {
  [[ -z ${server_pid:-} ]] && return 0
  kill -TERM "$server_pid" 2> /dev/null || true
  local _ rc=0
  for _ in $(seq 1 40); do
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.5
  done
  kill -0 "$server_pid" 2> /dev/null && kill -KILL "$server_pid"
  wait "$server_pid" 2> /dev/null || rc=$?
  echo "ferry serve exited with $rc" >> "$out/serve.log"
  server_pid=
}
