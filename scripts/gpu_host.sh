#!/usr/bin/env bash
# Everything ferry runs on a GPU host, in one call: its machine starts bare and keeps nothing,
# so each call names the sets it wants and gets one folder back (and, with TARBALL set, a tarball
# of it refreshed after every step, so a call cut short still returns what it measured).
#   scripts/gpu_host.sh OUTDIR SET...
# The bundle (scripts/gpu_bundle.sh, carried as .bundle) provides ferry and the test binaries;
# sets that need libtorch build it here (in the background, once the sets that time the host are
# done). Every step is logged to OUTDIR/steps.txt with its time, and OUTDIR/clocks.csv samples the
# GPU's clocks, power and throttle reasons all along.
# Sets:
#   tests      gpu-labelled tests and the CPU tests, from the bundle
#   matrix     `ferry bench` with its defaults, twice back to back, and `ferry bench compare`
#   reduce64   reduce at 64 MB, every strategy (the default matrix stops at 19 MB)
#   probes     the hand-written probes of scripts/probes (managed paths; libtorch paths)
#   tail       the managed-paths probe's tail variants at 0.6 and 4 MB (what a session's events
#              cost a small prefetch)
#   resnet     ResNet-50 (AOTInductor, fp16) through ferry: batch 16 every strategy (and as a CUDA
#              graph where it captures); batch 8/16/32
#              at 1 and 4 slots; the unified-memory claim at 1/4/16/64 clients
#   graph      ResNet-50 batch 16 as a CUDA graph (AOTInductor refuses capture: the report says so)
#   encoder    the BERT-base-sized encoder (AOTInductor, fp16) at sequence 128 and 384, batch 8
#   auto       --inflight auto against device on mlp:32x4096 b512 and ResNet-50 b8/b32, 8 clients
#   sanitize   compute-sanitizer memcheck, racecheck and synccheck over the gpu tests
#   serve      `ferry serve` with touch at 4.8 MB (4800000 bytes), pinned, 2 slots: one client over
#              raw HTTP with system and with CUDA shared memory (req/s and the server's
#              compute_input/infer/output per request, scripts/serve_shm_rate.py), perf_analyzer
#              --shared-memory system|cuda at c=1/4/16/64, and `ferry bench` on the same engine
#              for comparison (about 3 minutes)
#   serve-suite the serve test suite (tests/serve) against the bundle's ferry, CUDA regions included
# The serve sets need the Python wheels of scripts/fetch_gpu_wheels.sh (tritonclient, cuda-bindings,
# perf-analyzer; the host has python3 and numpy) carried as .whl; the device call carries
#   [".bundle/lib", ".bundle/bin/ferry", ".whl"]   (about 62 MiB of the 64 MiB a call may carry;
# `fetch_gpu_wheels.sh --without-cuda-bindings` saves 12 MB, and the CUDA-region runs then skip).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu_host.sh OUTDIR SET...}
shift
sets=" $* "
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Python and perf_analyzer keep the host's own libraries (OpenSSL and friends): only ferry and the
# test binaries run with the bundle's first.
host_ld_path=${LD_LIBRARY_PATH:-}
source scripts/gpu_host_env.sh
export PYTHONUNBUFFERED=1
export FERRY_CLI="$PWD/.bundle/bin/ferry"  # the CPU tests run the CLI from here, not from the build path

step() {
  echo "== $(date -u +%T) $*" | tee -a "$out/steps.txt"
  [[ -n ${TARBALL:-} ]] && tar czf "$TARBALL" -C "$(dirname "$out")" "$(basename "$out")"
  return 0
}
wants() { [[ $sets == *" $1 "* ]]; }
b() {  # b NAME ARGS...: one ferry bench run, its table, JSON and markdown kept
  local name=$1; shift
  step "ferry bench $*"
  echo "ferry bench $*" > "$out/$name.txt"
  timeout "${BENCH_TIMEOUT:-240}" "${FERRY:-ferry}" bench "$@" --json "$out/$name.json" --md "$out/$name.md" \
    >> "$out/$name.txt" 2>&1
  echo "rc=$?" >> "$out/$name.txt"
}

nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm \
  --format=csv > "$out/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 200 > "$out/clocks.csv" 2>/dev/null &
sampler=$!

torch_ready() {  # waits for the background build and export once
  [[ -n ${torch_build:-} ]] || return 1
  if [[ -z ${torch_waited:-} ]]; then
    step "torch: waiting for the build and the export"
    wait "$torch_build" "$torch_export"
    torch_waited=1
    tail -n 2 "$out/torch-build.log" "$out/export.log"
  fi
  [[ -x build-torch/apps/ferry/ferry && -e models/resnet50.pt2 ]]
}
needs_torch() { wants resnet || wants auto || wants probes || wants encoder || wants graph; }
# Builds ferry against the host's PyTorch and exports the models, in the background. The matrix
# sets time the host's CPU and CUDA calls, so the build waits until they are done.
start_torch_build() {
  needs_torch || return 0
  step "torch: build and export in the background"
  (scripts/gpu_build_torch.sh -DFERRY_BUILD_SERVE=OFF > "$out/torch-build.log" 2>&1
   echo "rc=$?" >> "$out/torch-build.log"
   torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
   cmake -S scripts/probes -B build-probes -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
     >> "$out/torch-build.log" 2>&1 && cmake --build build-probes >> "$out/torch-build.log" 2>&1
   echo "probes rc=$?" >> "$out/torch-build.log") &
  torch_build=$!
  mkdir -p models
  exports=resnet50
  wants encoder && exports="$exports encoder-s128 encoder-s384"
  (TORCHINDUCTOR_COMPILE_THREADS=6 timeout 400 python3 scripts/export_model.py --out models $exports > "$out/export.log" 2>&1
   echo "rc=$?" >> "$out/export.log") &
  torch_export=$!
}
cpu_quiet_sets() { wants matrix || wants reduce64 || wants tail; }
cpu_quiet_sets || start_torch_build

if wants matrix; then
  b matrix-1
  b matrix-2
  step "ferry bench compare"
  ferry bench compare "$out/matrix-1.json" "$out/matrix-2.json" > "$out/matrix-compare.txt" 2>&1
  tail -3 "$out/matrix-compare.txt"
fi

if wants reduce64; then
  b reduce64 --engine reduce --size 64MB --strategy all
fi

if wants tail && [[ -x .bundle/bin/managed_paths ]]; then
  step "probe: managed paths, tail variants"
  timeout 100 .bundle/bin/managed_paths --tail 0.6 4 > "$out/managed_tail.txt" 2>&1; echo "rc=$?" >> "$out/managed_tail.txt"
  cat "$out/managed_tail.txt"
fi

cpu_quiet_sets && start_torch_build

# The tests time nothing: they run while libtorch builds.
if wants tests; then
  step "gpu tests"
  timeout 400 ferry_gpu_tests --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/gpu_tests.txt"
  tail -4 "$out/gpu_tests.txt"
  timeout 120 ferry_cpu_tests --gtest_brief=1 > "$out/cpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/cpu_tests.txt"
  tail -2 "$out/cpu_tests.txt"
fi

if wants probes && [[ -x .bundle/bin/managed_paths ]]; then
  step "probe: managed paths"
  timeout 200 .bundle/bin/managed_paths > "$out/managed_paths.txt" 2>&1; echo "rc=$?" >> "$out/managed_paths.txt"
fi

if wants resnet && torch_ready; then
  resnet=torch:models/resnet50.pt2
  export FERRY=build-torch/apps/ferry/ferry
  if wants tests; then
    step "gpu tests with libtorch"
    FERRY_TORCH_MODELS=$PWD/models timeout 200 build-torch/tests/ferry_gpu_tests --gtest_filter='Torch*' \
      > "$out/torch_tests.txt" 2>&1; echo "rc=$?" >> "$out/torch_tests.txt"
  fi
  b resnet-b16 --engine $resnet --batch 16 --strategy all --no-link-measure
  b resnet-b16-graph --engine $resnet --batch 16 --graph --strategy device,pinned --no-link-measure
  for batch in 8 32; do
    b resnet-b$batch --engine $resnet --batch $batch --strategy device,pinned,mapped,managed-prefetch,managed-advise \
      --no-link-measure
  done
  for batch in 8 16 32; do
    b resnet-b$batch-4slots --engine $resnet --batch $batch --inflight 4 --clients 2 --objective throughput \
      --strategy device,pinned,mapped,managed-prefetch,managed-advise --no-link-measure
  done
  # The claim: managed + prefetch with one slot per client against its own baseline (pinned, one
  # slot) under 1..64 concurrent clients.
  for c in 1 4 16 64; do
    b claim-c$c --engine $resnet --batch 16 --clients $c --inflight 1 --strategy managed-prefetch,pinned \
      --objective throughput --duration 1.5 --no-link-measure
  done
  unset FERRY
fi

if wants graph && torch_ready; then
  FERRY=build-torch/apps/ferry/ferry b resnet-b16-graph --engine torch:models/resnet50.pt2 --batch 16 --graph \
    --strategy device,pinned --no-link-measure
fi

if wants encoder && torch_ready; then
  for seq in 128 384; do
    FERRY=build-torch/apps/ferry/ferry b encoder-s$seq --engine torch:models/encoder-s$seq.pt2 --batch 8 --strategy all \
      --no-link-measure
  done
fi

if wants auto; then
  needs_torch && torch_ready  # a quiet CPU for the throughput runs
  b auto-mlp --engine mlp:32x4096 --batch 512 --clients 8 --objective throughput --inflight auto \
    --strategy device,pinned,registered,mapped,managed-prefetch --no-link-measure
  if [[ -x build-torch/apps/ferry/ferry && -e models/resnet50.pt2 ]]; then
    for batch in 8 32; do
      FERRY=build-torch/apps/ferry/ferry b auto-resnet-b$batch --engine torch:models/resnet50.pt2 --batch $batch \
        --clients 8 --objective throughput --inflight auto --strategy device,pinned,registered,mapped,managed-prefetch \
        --no-link-measure
    done
  fi
fi

if wants probes && torch_ready && [[ -x build-probes/torch_paths ]]; then
  step "probe: libtorch paths, batch 16"
  timeout 200 build-probes/torch_paths models/resnet50.pt2 16 100 > "$out/torch_paths_b16.txt" 2>&1
  echo "rc=$?" >> "$out/torch_paths_b16.txt"
fi

if wants sanitize; then
  for tool in memcheck racecheck synccheck; do
    step "compute-sanitizer --tool $tool"
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 .bundle/bin/ferry_gpu_tests \
      --gtest_brief=1 --gtest_filter="${SANITIZE_FILTER:-*}" > "$out/sanitizer-$tool.txt" 2>&1
    echo "rc=$?" >> "$out/sanitizer-$tool.txt"
    grep -E "ERROR SUMMARY|rc=" "$out/sanitizer-$tool.txt" | tail -2
  done
fi

# Python wheels from .whl (scripts/fetch_gpu_wheels.sh), installed out of the way so the host's
# own site-packages stay as they are.
serve_python_ready() {
  [[ -n ${serve_site:-} ]] && return 0
  serve_site=/tmp/ferry-serve-site
  if compgen -G ".whl/*.whl" > /dev/null; then
    LD_LIBRARY_PATH=$host_ld_path python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --upgrade --target "$serve_site" .whl/*.whl > "$out/wheels.txt" 2>&1 || echo "pip install rc=$?" >> "$out/wheels.txt"
    export PYTHONPATH=$serve_site${PYTHONPATH:+:$PYTHONPATH}
  else
    echo "no .whl/ here: using the python packages already installed" > "$out/wheels.txt"
  fi
}
host_python() { LD_LIBRARY_PATH=$host_ld_path python3 "$@"; }

server_pid=
http_port=
start_server() {  # start_server REPOSITORY: ferry serve on free ports, waiting for its warm-up
  local log=$out/serve.log
  : > "$log"
  ferry serve --model-repository "$1" --host 127.0.0.1 --http-port 0 --grpc-port 0 --allow-client-shm >> "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 120); do
    grep -q "ferry serve: serving" "$log" && break
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.5
  done
  http_port=$(sed -nE 's/.*HTTP on [^ ]+:([0-9]+).*/\1/p' "$log" | head -1)
  grep -q "ferry serve: serving" "$log" && return 0
  echo "ferry serve did not start:"; tail -20 "$log"
  stop_server
  return 1
}
stop_server() {
  [[ -z $server_pid ]] && return 0
  kill -TERM "$server_pid" 2> /dev/null
  for _ in $(seq 1 40); do kill -0 "$server_pid" 2> /dev/null || break; sleep 0.5; done
  kill -0 "$server_pid" 2> /dev/null && kill -KILL "$server_pid"
  wait "$server_pid" 2> /dev/null
  echo "ferry serve exited with $?" >> "$out/serve.log"
  server_pid=
}
trap stop_server EXIT

if wants serve; then
  serve_python_ready
  mkdir -p "$out/serve/models/touch"
  echo '{"engine": "touch", "strategy": "pinned", "inflight": 2, "input_size": 4800000}' \
    > "$out/serve/models/touch/config.json"
  step "ferry serve: touch 4800000 bytes, pinned, 2 slots"
  if start_server "$out/serve/models"; then
    # One client, raw HTTP: the rate and what the server says each request cost it.
    for shm in system cuda; do
      step "one client over raw HTTP, $shm shared memory"
      host_python scripts/serve_shm_rate.py --url "127.0.0.1:$http_port" --model touch --bytes 4800000 \
        --shm $shm --seconds 5 --json "$out/serve/rate-$shm.json" > "$out/serve/rate-$shm.txt" 2>&1
      echo "rc=$?" >> "$out/serve/rate-$shm.txt"
      cat "$out/serve/rate-$shm.txt"
    done
    # perf_analyzer (from the perf-analyzer wheel) dlopens the unversioned libcudart.so for
    # --shared-memory cuda; a runtime-only install has only libcudart.so.13, so a link to it is
    # made for perf_analyzer alone.
    pa=${PERF_ANALYZER:-$serve_site/perf_analyzer/bin/perf_analyzer}
    pa_libs=/tmp/ferry-serve-pa-libs
    mkdir -p "$pa_libs"
    for candidate in /usr/local/cuda/lib64/libcudart.so /usr/local/cuda/lib64/libcudart.so.13 \
                     "$PWD/.bundle/lib/libcudart.so.13"; do
      [[ -e $candidate ]] && { ln -sf "$candidate" "$pa_libs/libcudart.so"; break; }
    done
    [[ -f $pa ]] && chmod +x "$pa"
    # perf_analyzer has no --help; what it must not print is the loader's complaint.
    if [[ -x $pa ]] && ! LD_LIBRARY_PATH=$pa_libs:$host_ld_path "$pa" 2>&1 \
         | grep -qE "GLIBC_|error while loading shared libraries|cannot execute"; then
      for shm in system cuda; do
        for c in 1 4 16 64; do
          name=touch-http-$shm-c$c
          step "perf_analyzer touch http shm=$shm c=$c"
          LD_LIBRARY_PATH=$pa_libs:$host_ld_path timeout 30 "$pa" -m touch -i http -u "127.0.0.1:$http_port" \
            --concurrency-range "$c:$c" --shared-memory $shm --output-shared-memory-size 4800000 \
            --measurement-interval 1000 --max-trials 4 --stability-percentage 20 \
            -f "$out/serve/$name.csv" > "$out/serve/$name.txt" 2>&1
          echo "rc=$?" >> "$out/serve/$name.txt"
          grep -E "Throughput|Avg latency|rc=" "$out/serve/$name.txt" | tr '\n' ' '; echo
        done
      done
    else
      echo "perf_analyzer cannot run here ($pa): $(LD_LIBRARY_PATH=$pa_libs "$pa" 2>&1 | head -2)" \
        | tee "$out/serve/perf_analyzer-not-run.txt"
    fi
    curl -s "127.0.0.1:$http_port/v2/models/touch/stats" > "$out/serve/stats_touch.json"
    curl -s "127.0.0.1:$http_port/metrics" > "$out/serve/metrics.txt"
    stop_server
  fi
  # The same engine, size and strategy in the library alone: the floor under the server's rate.
  BENCH_TIMEOUT=90 b serve/bench-touch --engine touch --size 4800000 --strategy pinned --no-link-measure
  BENCH_TIMEOUT=90 b serve/bench-touch-2slots --engine touch --size 4800000 --strategy pinned --inflight 2 \
    --no-link-measure
fi

if wants serve-suite; then
  serve_python_ready
  mkdir -p "$out/serve-suite"
  # FERRY_BIN through a wrapper carrying the bundle's libraries, so the suite's python does not.
  printf '#!/usr/bin/env bash\nsource %q\nexec %q "$@"\n' "$PWD/scripts/gpu_host_env.sh" "$PWD/.bundle/bin/ferry" \
    > /tmp/ferry-with-bundle && chmod +x /tmp/ferry-with-bundle
  for module_path in tests/serve/test_*.py; do
    module=$(basename "$module_path" .py)
    step "serve suite: $module"
    (cd tests/serve && FERRY_BIN=/tmp/ferry-with-bundle LD_LIBRARY_PATH=$host_ld_path timeout 300 \
      python3 -m unittest -v "$module") > "$out/serve-suite/$module.txt" 2>&1
    echo "$module rc=$?" | tee -a "$out/serve-suite/summary.txt"
  done
fi

kill "$sampler" 2>/dev/null
step "done"
