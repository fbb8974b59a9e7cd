#!/usr/bin/env bash
# Everything ferry runs on a GPU host, in one call: its machine starts bare and keeps nothing,
# so each call names the sets it wants and gets one folder back (and, with TARBALL set, a tarball
# of it refreshed after every step, so a call cut short still returns what it measured).
#   scripts/gpu_host.sh OUTDIR SET...
# The bundle (scripts/gpu_bundle.sh, carried as .bundle) provides ferry, the test binaries and the
# backends built there; sets that need libtorch build its backend plugin here (in the background,
# once the sets that time the host are done), which the bundle's ferry loads through
# FERRY_BACKEND_PATH. Every step is logged to OUTDIR/steps.txt with its time, and OUTDIR/clocks.csv samples the
# GPU's clocks, power and throttle reasons all along.
# Sets:
#   tests      gpu-labelled tests and the CPU tests, from the bundle
#   matrix     `ferry bench` with its defaults, twice back to back, and `ferry bench compare`
#   aa         compare calibrated: the default matrix as A1 B1 A2 A3 B2 A4 B3 (B with --slowdown 10, a
#              real 10% change of every request), each run with AA_FLAGS (default: --max-time 1.5, no link
#              peak, no UM counters: estimated at 60-75 s a run); `ferry bench compare --json` for each A/A pair
#              (consecutive A runs: the false rate, every cell) and each A run next to a B run (the true
#              rate, cells of 16 MB and up); a run is not started once it would end past AA_BUDGET
#              seconds (420), so six runs (three A/A pairs, four A/B) are what 7 minutes hold
#   seed-claim ResNet-50 (AOTInductor) at batch 8/16/32 and 16/64 clients, throughput: the seed's recipe
#              (managed-prefetch, one context), pinned in one context, and pinned with --inflight auto
#              (ferry's best at 8 clients in the auto set); SEED_FLAGS (default: --duration 0.6 --max-time
#              1.5); runs are not started past SEED_BUDGET seconds (240)
#   smoke      `ferry bench` with its defaults, once
#   reduce64   reduce at 64 MB, every strategy (the default matrix stops at 19 MB)
#   probes     the hand-written probes of scripts/probes (managed paths; libtorch paths)
#   tail       the managed-paths probe's tail variants at 0.6 and 4 MB (what a session's events
#              cost a small prefetch)
#   plugin-cost the plugin boundary: the example backend (a plugin) beside the built-in touch (in
#              process), the same kernel and bytes, at 64 KiB and 4 MiB, pinned and device, twice
#   serve-model ResNet-50 (fp16, dynamic batch) through `ferry serve` and the torch plugin: every
#              answer checked against eager PyTorch over HTTP and gRPC, tensors in the body, system
#              and CUDA shared memory, at 1/4/16 clients (scripts/serve_model_check.py);
#              perf_analyzer at 1/4/16/64 on each path; server-side batching on and off (batch-1
#              requests); `ferry bench` on the same package, strategy and slots (about 5 minutes)
#   resnet     ResNet-50 (AOTInductor, fp16) through ferry: batch 16 every strategy (and as a CUDA
#              graph where it captures); batch 8/16/32
#              at 1 and 4 slots; the unified-memory claim at 1/4/16/64 clients
#   graph      ResNet-50 batch 16 as a CUDA graph (AOTInductor refuses capture: the report says so)
#   encoder    the BERT-base-sized encoder (AOTInductor, fp16) at sequence 128 and 384, batch 8
#   auto       --inflight auto against device on mlp:32x4096 b512 and ResNet-50 b8/b32, 8 clients
#   auto-mlp   the same on mlp:32x4096 b512 only (no libtorch)
#   gap        managed-prefetch beside its recipe at 0.6 and 4 MB, alone and beside pinned, three runs
#   sanitize   compute-sanitizer memcheck, racecheck and synccheck over the gpu tests
#   calibrate  `ferry calibrate --quick` and its default (CALIBRATE_DEPTHS), each timed, into OUTDIR/calibrate (its own
#              cache folder, so the profiles come back); then `ferry info` (text and --json) and
#              `ferry bench --strategy auto` reading the profile the last sweep left; then the
#              default matrix, every strategy, whose report checks the profile's pick against the
#              best measured (ADVICE_WIDE=1: also reduce, touch and sparse:0.1 at 256 KB, 4 MB and 64 MB);
#              then the sweeps of CALIBRATE_AFTER (e.g. thorough)
#   multi      on two GPUs or more: the multi-GPU tests (and the whole suite unless `tests` runs it),
#              `ferry info --measure` (peer access and bandwidth), mlp throughput on 1 vs 2 GPUs,
#              each GPU alone, what data-following placement saves, ResNet-50 on 1 vs 2 GPUs where
#              a libtorch set builds it, and a scaling summary
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
# Backends: the torch plugin built here; the tests' own plugins and the example's model travel
# with the bundle and the tree (the build's paths compiled into the tests do not exist here).
export FERRY_BACKEND_PATH="$PWD/build-torch/lib/ferry/backends"
export FERRY_EXAMPLE_BACKEND_DIR="$PWD/.bundle/lib/ferry/backends" FERRY_TEST_BACKEND_DIR="$PWD/.bundle/test-backends"
export FERRY_EXAMPLE_MODEL="$PWD/examples/backend/model.affine"

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
  [[ -e build-torch/lib/ferry/backends/libferry_backend_torch.so && -e models/resnet50.pt2 ]]
}
needs_torch() { wants resnet || wants auto || wants probes || wants encoder || wants graph || wants serve-model || wants seed-claim; }
# Builds ferry against the host's PyTorch and exports the models, in the background. The matrix
# sets time the host's CPU and CUDA calls, so the build waits until they are done.
start_torch_build() {
  needs_torch || return 0
  step "torch: build and export in the background"
  (scripts/gpu_build_torch.sh > "$out/torch-build.log" 2>&1
   echo "rc=$?" >> "$out/torch-build.log"
   if wants probes; then
     torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
     cmake -S scripts/probes -B build-probes -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
       >> "$out/torch-build.log" 2>&1 && cmake --build build-probes >> "$out/torch-build.log" 2>&1
     echo "probes rc=$?" >> "$out/torch-build.log"
   fi) &
  torch_build=$!
  mkdir -p models
  exports=resnet50
  wants encoder && exports="$exports encoder-s128 encoder-s384"
  local eager=()
  wants serve-model && eager=(--save-eager)
  (TORCHINDUCTOR_COMPILE_THREADS=6 timeout 400 python3 scripts/export_model.py --out models "${eager[@]}" $exports \
     > "$out/export.log" 2>&1
   echo "rc=$?" >> "$out/export.log") &
  torch_export=$!
}
cpu_quiet_sets() { wants matrix || wants aa || wants smoke || wants reduce64 || wants tail || wants gap || wants calibrate || wants multi; }
cpu_quiet_sets || start_torch_build

if wants matrix; then
  b matrix-1
  b matrix-2
  step "ferry bench compare"
  ferry bench compare "$out/matrix-1.json" "$out/matrix-2.json" > "$out/matrix-compare.txt" 2>&1
  tail -3 "$out/matrix-compare.txt"
fi

if wants smoke; then
  b smoke
fi

if wants aa; then
  # Where the host's memory and CPUs sit against the GPU: a figure that depends on where a trial's
  # buffers landed (another NUMA node) shows as spread between trials.
  { lscpu; numactl --hardware; nvidia-smi topo -m; } > "$out/aa-host.txt" 2>&1
  read -r -a aa_flags <<< "${AA_FLAGS:---max-time 1.5 --no-link-measure --no-um-counters}"
  # Three A/A pairs come out of six runs (A1-A2 with B1 between them, A2-A3 back to back, A3-A4
  # with B2 between) and every B sits between two A runs (A/B and B/A).
  aa_start=$(date +%s)
  last=0
  runs=()
  for name in A1 B1 A2 A3 B2 A4 B3; do
    now=$(date +%s)
    if (( now - aa_start + last > ${AA_BUDGET:-420} )); then
      echo "aa: $name not started: $((now - aa_start)) s spent, the last run took $last s" | tee -a "$out/steps.txt"
      break
    fi
    slow=(); [[ $name == B* ]] && slow=(--slowdown 10)
    BENCH_TIMEOUT=${AA_RUN_TIMEOUT:-200} b "aa-$name" "${aa_flags[@]}" "${slow[@]}"
    last=$(( $(date +%s) - now ))
    echo "aa: $name took $last s ($(tail -1 "$out/aa-$name.txt"))" | tee -a "$out/steps.txt"
    [[ -e $out/aa-$name.json ]] && runs+=("$name")
  done
  step "aa: compare"
  printf '%s\n' "${runs[@]}" > "$out/aa-runs.txt"
  previous_a=
  for ((i = 0; i < ${#runs[@]}; ++i)); do
    x=${runs[i]}
    if ((i > 0)) && [[ ${runs[i - 1]:0:1} != "${x:0:1}" ]]; then  # an A next to a B
      ferry bench compare "$out/aa-${runs[i - 1]}.json" "$out/aa-$x.json" --json "$out/aa-compare-${runs[i - 1]}-$x.json" \
        > "$out/aa-compare-${runs[i - 1]}-$x.txt" 2>&1
    fi
    if [[ $x == A* ]]; then
      if [[ -n $previous_a ]]; then
        ferry bench compare "$out/aa-$previous_a.json" "$out/aa-$x.json" --json "$out/aa-compare-$previous_a-$x.json" \
          > "$out/aa-compare-$previous_a-$x.txt" 2>&1
      fi
      previous_a=$x
    fi
  done
  python3 - "$out" <<'PY' | tee "$out/aa-summary.txt"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
runs = (out / "aa-runs.txt").read_text().split()
big = 16 << 20
measured = ("same", "better", "worse")
def load(x, y):
    p = out / f"aa-compare-{x}-{y}.json"
    return [c for c in json.loads(p.read_text())["cells"] if c["verdict"] in measured] if p.exists() else None
a_runs = [r for r in runs if r.startswith("A")]
false_calls = false_total = true_calls = true_total = 0
nearest = []
for x, y in zip(a_runs, a_runs[1:]):
    cells = load(x, y)
    if cells is None: continue
    called = [c for c in cells if c["verdict"] != "same"]
    false_calls += len(called); false_total += len(cells)
    nearest += [(abs(c["change"]) / c["threshold"] if c["threshold"] > 0 else 0, f"{x}/{y}", c) for c in cells]
    print(f"A/A {x} vs {y}: {len(called)} of {len(cells)} cells called different"
          + "".join(f"\n    {c['label']}: {100 * c['change']:+.1f}% (threshold {100 * c['threshold']:.1f}%)" for c in called))
for x, y in zip(runs, runs[1:]):
    if x[0] == y[0]: continue
    cells = load(x, y)
    if cells is None: continue
    expected = "worse" if y.startswith("B") else "better"  # B is 10% slower: its latency is higher
    large = [c for c in cells if c["input_bytes"] >= big]
    found = [c for c in large if c["verdict"] == expected]
    true_calls += len(found); true_total += len(large)
    print(f"A/B {x} vs {y} (expected: {expected}): {len(found)} of {len(large)} cells of 16 MB and up"
          + "".join(f"\n    missed {c['label']}: {100 * c['change']:+.1f}% (threshold {100 * c['threshold']:.1f}%)"
                    for c in large if c["verdict"] != expected))
if false_total:
    print(f"false difference rate (A/A, every cell): {false_calls} of {false_total} = "
          f"{100 * false_calls / false_total:.1f}% (target: at most 5%)")
if true_total:
    print(f"true difference rate (A/B and B/A, 10%, cells of 16 MB and up): {true_calls} of {true_total} = "
          f"{100 * true_calls / true_total:.1f}% (target: at least 95%)")
nearest.sort(key=lambda n: -n[0])
print("A/A cells by |change| / threshold, largest first:")
for ratio, pair, c in nearest[:8]:
    print(f"  {ratio:.2f} {pair} {c['label']}: {100 * c['change']:+.1f}%, noise {100 * c['noise_a']:.2f}% / "
          f"{100 * c['noise_b']:.2f}%{' (between trials)' if c['between_trials'] else ''}")
PY
fi

if wants reduce64; then
  b reduce64 --engine reduce --size 64MB --strategy all
fi


calibrate_once() {  # calibrate_once DEPTH [TAG]: one timed sweep, its log and profile kept as -TAG
  local depth=$1 tag=${2:-$1} start rc flag=(--$1)
  [[ $depth == default ]] && flag=()
  step "ferry calibrate --$depth"
  start=$(date +%s%N)
  XDG_CACHE_HOME="$cal/cache" timeout "${CALIBRATE_TIMEOUT:-300}" ferry calibrate "${flag[@]}" --device 0 \
    > "$cal/calibrate-$tag.txt" 2>&1
  rc=$?
  echo "rc=$rc wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))" >> "$cal/calibrate-$tag.txt"
  cp "$cal"/cache/ferry/profiles/*.json "$cal/profile-$tag.json" 2>/dev/null
  tail -2 "$cal/calibrate-$tag.txt"
}

if wants calibrate; then
  cal="$out/calibrate"
  mkdir -p "$cal"
  n=0
  for depth in ${CALIBRATE_DEPTHS:-quick default}; do
    n=$((n + 1)); calibrate_once "$depth" "$depth-$n"
  done
  step "ferry info with the profile"
  XDG_CACHE_HOME="$cal/cache" ferry info --device 0 > "$cal/info.txt" 2>&1; echo "rc=$?" >> "$cal/info.txt"
  XDG_CACHE_HOME="$cal/cache" ferry info --device 0 --json > "$cal/info.json" 2> "$cal/info-json.stderr"
  echo "rc=$?" >> "$cal/info-json.stderr"
  # The benches read the profile the last of CALIBRATE_DEPTHS left.
  XDG_CACHE_HOME="$cal/cache" b calibrate/bench-auto --engine reduce,touch --size 64KB,1MB,19MB,256MB --strategy auto \
    --no-link-measure
  XDG_CACHE_HOME="$cal/cache" b calibrate/bench-auto-throughput --engine reduce --size 1MB,19MB --strategy auto \
    --objective throughput --no-link-measure
  # The default matrix, every strategy: the report checks the profile's pick against the best of
  # the same run in each cell group (and is the smoke run of the call).
  XDG_CACHE_HOME="$cal/cache" b calibrate/bench-advice
  grep -h "^advice:" "$cal/bench-advice.txt"
  if [[ -n ${ADVICE_WIDE:-} ]]; then
    XDG_CACHE_HOME="$cal/cache" b calibrate/bench-advice-wide --engine reduce,touch,sparse:0.1 \
      --size 256KB,4MB,64MB --no-recipes --no-link-measure
    grep -h "^advice:" "$cal/bench-advice-wide.txt"
  fi
  # Sweeps after the benches (CALIBRATE_AFTER, e.g. thorough): their profiles come back, the
  # benches above are not affected.
  for depth in ${CALIBRATE_AFTER:-}; do
    n=$((n + 1)); calibrate_once "$depth" "$depth-$n"
  done
fi

if wants tail && [[ -x .bundle/bin/managed_paths ]]; then
  step "probe: managed paths, tail variants"
  timeout 100 .bundle/bin/managed_paths --tail 0.6 4 > "$out/managed_tail.txt" 2>&1; echo "rc=$?" >> "$out/managed_tail.txt"
  cat "$out/managed_tail.txt"
fi

if wants multi; then
  step "multi: machine"
  nvidia-smi > "$out/multi-nvidia-smi.txt" 2>&1
  nvidia-smi topo -m > "$out/topology.txt" 2>&1  # NVLink (NV#) or PCIe (PIX/PXB/PHB/SYS) between the GPUs
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  echo "GPUs: $gpus" | tee -a "$out/steps.txt"
  [[ $gpus -ge 2 ]] || echo "WARNING: fewer than 2 GPUs; the multi-GPU tests will skip and --devices 0,1 will be refused" \
    | tee -a "$out/steps.txt"

  step "multi-GPU tests"
  timeout 300 ferry_gpu_tests --gtest_filter='MultiGpu*:*ReplicasMatchTheCpu*' > "$out/multi_gpu_tests.txt" 2>&1
  echo "rc=$?" >> "$out/multi_gpu_tests.txt"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |\[ placement \]|tests ran" "$out/multi_gpu_tests.txt"
  if ! wants tests; then  # single-GPU behaviour unchanged on this host too
    step "whole GPU suite"
    timeout 600 ferry_gpu_tests --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/gpu_tests.txt"
    tail -4 "$out/gpu_tests.txt"
    timeout 120 ferry_cpu_tests --gtest_brief=1 > "$out/cpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/cpu_tests.txt"
  fi

  step "ferry info --measure (link peaks, peer access, peer bandwidth both ways)"
  ferry info --measure > "$out/info.txt" 2>&1
  ferry info --measure --json > "$out/info.json" 2>&1
  sed -n '/^Peer access/,$p' "$out/info.txt"

  # Throughput scaling, 1 -> 2 GPUs, on the compute-bound GEMM chain (target: at least 1.9x). Same
  # slots per GPU and the same in-flight depth per client (2) on both, so the only change is the
  # number of GPUs; device is the floor (no transfer at all).
  export BENCH_TIMEOUT=${BENCH_TIMEOUT:-300}
  # shellcheck disable=SC2054  # the commas separate strategies and devices inside one argument
  mlp=(--engine mlp:48x2048 --batch 1024 --strategy device,pinned,registered --objective throughput --duration 3 --inflight 4)
  b mlp-1gpu "${mlp[@]}" --devices 0 --clients 2
  b mlp-2gpu "${mlp[@]}" --devices 0,1 --clients 4
  # More clients per GPU, to see whether the host side (fill, read, checks) keeps up with two GPUs.
  b mlp-1gpu-c4 "${mlp[@]}" --devices 0 --clients 4 --no-link-measure
  b mlp-2gpu-c8 "${mlp[@]}" --devices 0,1 --clients 8 --no-link-measure
  # A smaller, transfer-heavier mlp, where the two GPUs share one host's memory bandwidth.
  # shellcheck disable=SC2054
  small=(--engine mlp:8x2048 --batch 256 --strategy pinned,mapped,registered --objective throughput --duration 2 --inflight 4
         --no-link-measure)
  b mlp-small-1gpu "${small[@]}" --devices 0 --clients 2
  b mlp-small-2gpu "${small[@]}" --devices 0,1 --clients 4

  # Each GPU alone (the per-GPU path: buffers, managed hints and contexts on GPU 1, not GPU 0).
  b gpu1-alone --devices 1 --engine touch,reduce --size 19MB --strategy all --duration 0.5 --no-link-measure
  b all-gpus --devices all --engine touch --size 19MB --strategy pinned,mapped,managed-prefetch,managed-advise,device \
    --clients 4 --inflight 2 --duration 0.5 --no-link-measure

  # What data-following placement saves: inputs and outputs on one GPU, run there or on the other.
  step "placement"
  for spec in "touch --size 4MB,64MB" "mlp:48x2048 --batch 1024" "mlp:8x2048 --batch 256"; do
    name=placement-$(echo "$spec" | cut -d' ' -f1 | tr ':' '-')
    echo "ferry bench --placement --devices 0,1 --engine $spec" > "$out/$name.txt"
    # shellcheck disable=SC2086
    timeout 300 ferry bench --placement --devices 0,1 --engine $spec --json "$out/$name.json" >> "$out/$name.txt" 2>&1
    echo "rc=$?" >> "$out/$name.txt"
    cat "$out/$name.txt"
  done
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

if wants tests && needs_torch && torch_ready; then
  step "gpu tests with libtorch (the torch plugin built here, the tests from the bundle)"
  FERRY_TORCH_MODELS=$PWD/models timeout 200 ferry_gpu_tests --gtest_filter='*Torch*' \
    > "$out/torch_tests.txt" 2>&1; echo "rc=$?" >> "$out/torch_tests.txt"
  grep -E "relative L2|PASSED|FAILED|SKIPPED|rc=" "$out/torch_tests.txt" | tail -12
fi

if wants resnet && torch_ready; then
  resnet=torch:models/resnet50.pt2
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
fi

if wants seed-claim && torch_ready; then
  # The seed's claim at high concurrency: its recipe (managed-prefetch, every client through one
  # context), pinned the same way, and ferry's best (pinned with --inflight auto: the depth search
  # stops before a depth that would not fit the GPU's free memory). 64 clients first: that is
  # where a run once took the whole GPU.
  read -r -a seed_flags <<< "${SEED_FLAGS:---duration 0.6 --max-time 1.5}"
  seed_start=$(date +%s)
  for c in 64 16; do
    for batch in 16 8 32; do
      for how in one auto; do
        if (( $(date +%s) - seed_start > ${SEED_BUDGET:-240} )); then
          echo "seed-claim: b$batch c$c $how not started: past SEED_BUDGET" | tee -a "$out/steps.txt"
          continue
        fi
        if [[ $how == one ]]; then
          # shellcheck disable=SC2054  # the comma separates strategies inside one argument
          strategies=(--inflight 1 --strategy managed-prefetch,pinned)
        else
          strategies=(--inflight auto --strategy pinned)
        fi
        BENCH_TIMEOUT=${SEED_RUN_TIMEOUT:-120} b "seed-b$batch-c$c-$how" \
          --engine torch:models/resnet50.pt2 --batch $batch --clients $c --objective throughput --no-link-measure \
          "${strategies[@]}" "${seed_flags[@]}"
      done
    done
  done
  python3 - "$out" <<'PY' | tee "$out/seed-claim.txt"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("batch clients | managed-prefetch 1 ctx | pinned 1 ctx | pinned inflight auto (slots) | best / seed | failed")
for c in (16, 64):
    for batch in (8, 16, 32):
        row, failed = {}, []
        for how in ("one", "auto"):
            p = out / f"seed-b{batch}-c{c}-{how}.json"
            if not p.exists():
                failed.append(f"{how}: no report"); continue
            for r in json.loads(p.read_text())["results"]:
                key = f"{r['strategy']}-{how}"
                if r.get("refused"):
                    if r.get("failed"): failed.append(f"{key}: {r['refused']}")
                    row[key] = None; continue
                noise = max(r["throughput_noise"], r.get("throughput_trial_noise", 0))
                row[key] = (r["throughput_per_s"], noise, r["inflight"], r["output_matches"])
        def cell(key):
            v = row.get(key)
            if v is None: return "-"
            return f"{v[0]:.0f} ±{100 * v[1]:.1f}%" + ("" if v[3] else " (CHECK FAILED)") + (f" ({v[2]})" if key.endswith("auto") else "")
        seed, best = row.get("managed-prefetch-one"), row.get("pinned-auto")
        ratio = f"{best[0] / seed[0]:.2f}x" if seed and best else "-"
        print(f"{batch:5} {c:7} | {cell('managed-prefetch-one'):>22} | {cell('pinned-one'):>12} | "
              f"{cell('pinned-auto'):>28} | {ratio:>11} | {'; '.join(failed) or 'none'}")
PY
fi

if wants graph && torch_ready; then
  b resnet-b16-graph --engine torch:models/resnet50.pt2 --batch 16 --graph \
    --strategy device,pinned --no-link-measure
fi

if wants encoder && torch_ready; then
  for seq in 128 384; do
    b encoder-s$seq --engine torch:models/encoder-s$seq.pt2 --batch 8 --strategy all \
      --no-link-measure
  done
fi

if wants gap; then
  for run in 1 2 3; do
    b gap-alone-$run --engine reduce --size 0.6MB,4MB --strategy managed-prefetch --no-link-measure
  done
  b gap-beside --engine reduce --size 0.6MB,4MB --strategy managed-prefetch,pinned,managed-advise --no-link-measure
fi

if wants auto || wants auto-mlp; then
  needs_torch && torch_ready  # a quiet CPU for the throughput runs
  b auto-mlp --engine mlp:32x4096 --batch 512 --clients 8 --objective throughput --inflight auto \
    --strategy device,pinned,registered,mapped,managed-prefetch --no-link-measure
  if wants auto && torch_ready; then
    for batch in 8 32; do
      b auto-resnet-b$batch --engine torch:models/resnet50.pt2 --batch $batch \
        --clients 8 --objective throughput --inflight auto --strategy device,pinned,registered,mapped,managed-prefetch \
        --no-link-measure
    done
  fi
fi

# The multi set's ResNet-50 scaling, once a libtorch set (resnet, graph, ...) has built it.
if wants multi; then
  if needs_torch && torch_ready; then
    step "multi: resnet50 scaling"
    for d in "0 --clients 2" "0,1 --clients 4"; do
      name=resnet50-$(echo "$d" | cut -d' ' -f1 | tr ',' '-')
      # shellcheck disable=SC2086
      timeout 300 ferry bench --engine torch:models/resnet50.pt2 --batch 16 --inflight 4 \
        --strategy device,pinned,registered --objective throughput --duration 3 --no-link-measure --devices $d \
        --json "$out/$name.json" --md "$out/$name.md" > "$out/$name.txt" 2>&1
      echo "rc=$?" >> "$out/$name.txt"
    done
  else
    echo "multi: resnet50 skipped: needs libtorch and models/resnet50.pt2 (add the resnet set)" | tee -a "$out/steps.txt"
  fi

  step "multi: scaling summary"
  python3 - "$out" <<'PY' | tee "$out/scaling.txt"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def results(name):
    p = out / f"{name}.json"
    if not p.exists(): return {}
    return {r["strategy"]: r for r in json.loads(p.read_text())["results"]}
for one, two in [("mlp-1gpu", "mlp-2gpu"), ("mlp-1gpu-c4", "mlp-2gpu-c8"),
                 ("mlp-small-1gpu", "mlp-small-2gpu"), ("resnet50-0", "resnet50-0-1")]:
    a, b = results(one), results(two)
    for strategy in a:
        if strategy not in b: continue
        ra, rb = a[strategy], b[strategy]
        if ra.get("refused") or rb.get("refused"):
            print(f"{one} vs {two} {strategy}: refused: {ra.get('refused') or rb.get('refused')}")
            continue
        ok = ra["output_matches"] and rb["output_matches"]
        print(f"{ra['engine']} {strategy}: {ra['throughput_per_s']:.0f}/s on 1 GPU, {rb['throughput_per_s']:.0f}/s on "
              f"{len(rb.get('devices', []))} GPUs = {rb['throughput_per_s'] / ra['throughput_per_s']:.2f}x"
              f"{'' if ok else '  (OUTPUT CHECK FAILED)'}; notes: {'; '.join(n for n in rb['notes'] if 'per GPU' in n)}")
PY
fi

if wants probes && torch_ready && [[ -x build-probes/torch_paths ]]; then
  step "probe: libtorch paths, batch 16"
  timeout 200 build-probes/torch_paths models/resnet50.pt2 16 100 > "$out/torch_paths_b16.txt" 2>&1
  echo "rc=$?" >> "$out/torch_paths_b16.txt"
fi

if wants sanitize; then
  for tool in memcheck racecheck synccheck; do
    step "compute-sanitizer --tool $tool"
    # The refusal tests provoke CUDA API errors on purpose (and assert them): memcheck's exit code
    # should speak of memory errors only.
    api=(); [[ $tool == memcheck ]] && api=(--report-api-errors no)
    timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool $tool "${api[@]}" --error-exitcode 9 --print-limit 20 .bundle/bin/ferry_gpu_tests \
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
# perf_analyzer (from the perf-analyzer wheel) as $pa, with $pa_libs for its LD_LIBRARY_PATH: it
# dlopens the unversioned libcudart.so for --shared-memory cuda, and a runtime-only install has
# only libcudart.so.13, so a link to it is made for perf_analyzer alone.
perf_analyzer_ready() {
  pa=${PERF_ANALYZER:-$serve_site/perf_analyzer/bin/perf_analyzer}
  pa_libs=/tmp/ferry-serve-pa-libs
  mkdir -p "$pa_libs"
  for candidate in /usr/local/cuda/lib64/libcudart.so /usr/local/cuda/lib64/libcudart.so.13 \
                   "$PWD/.bundle/lib/libcudart.so.13"; do
    [[ -e $candidate ]] && { ln -sf "$candidate" "$pa_libs/libcudart.so"; break; }
  done
  [[ -f $pa ]] && chmod +x "$pa"
  return 0
}

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
    perf_analyzer_ready
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

if wants serve-model && torch_ready; then
  serve_python_ready
  sm=$out/serve-model
  mkdir -p "$sm/models"/{resnet50,resnet50_b1,resnet50_dyn}
  package=$PWD/models/resnet50.pt2
  # b16 requests one per batch (the comparison with ferry bench); batch-1 requests without and
  # with server-side batching (up to 16 rows, waiting up to 2 ms for them).
  echo "{\"engine\": \"torch:$package\", \"strategy\": \"pinned\", \"inflight\": 2, \"max_batch\": 16}" \
    > "$sm/models/resnet50/config.json"
  echo "{\"engine\": \"torch:$package\", \"strategy\": \"pinned\", \"inflight\": 2, \"max_batch\": 1}" \
    > "$sm/models/resnet50_b1/config.json"
  echo "{\"engine\": \"torch:$package\", \"strategy\": \"pinned\", \"inflight\": 2, \"max_batch\": 16, \"batch_delay_us\": 2000}" \
    > "$sm/models/resnet50_dyn/config.json"
  step "ferry serve: ResNet-50 through the torch plugin"
  if start_server "$sm/models"; then
    cp "$out/serve.log" "$sm/serve-start.log"
    grpc_port=$(sed -nE 's/.*gRPC on [^ ]+:([0-9]+).*/\1/p' "$out/serve.log" | head -1)
    step "checked answers: resnet50 b16, http and grpc, body/system/cuda, 1/4/16 clients"
    host_python scripts/serve_model_check.py --http "127.0.0.1:$http_port" --grpc "127.0.0.1:$grpc_port" \
      --model resnet50 --batch 16 --eager "$package.eager.pt" --requests 6 --json "$sm/check-b16.json" \
      > "$sm/check-b16.txt" 2>&1
    echo "rc=$?" >> "$sm/check-b16.txt"; tail -3 "$sm/check-b16.txt"
    for model in resnet50_b1 resnet50_dyn; do
      host_python scripts/serve_model_check.py --http "127.0.0.1:$http_port" --grpc "127.0.0.1:$grpc_port" \
        --model $model --batch 1 --eager "$package.eager.pt" --paths body --clients 16 --requests 8 \
        --json "$sm/check-$model.json" > "$sm/check-$model.txt" 2>&1
      echo "rc=$?" >> "$sm/check-$model.txt"; tail -2 "$sm/check-$model.txt"
    done
    perf_analyzer_ready
    pa_run() {  # pa_run NAME ARGS...: one perf_analyzer measurement, its summary line printed
      LD_LIBRARY_PATH=$pa_libs:$host_ld_path timeout 40 "$pa" --measurement-interval 1000 --max-trials 4 \
        --stability-percentage 20 -f "$sm/$1.csv" "${@:2}" > "$sm/$1.txt" 2>&1
      echo "rc=$?" >> "$sm/$1.txt"
      echo "$1: $(grep -E "Throughput|p99 latency|Avg latency|rc=" "$sm/$1.txt" | tr '\n' ' ')"
    }
    for protocol in http grpc; do
      port=$http_port; [[ $protocol == grpc ]] && port=$grpc_port
      for shm in none system cuda; do
        for c in 1 4 16 64; do
          step "perf_analyzer resnet50 batch 16 $protocol shm=$shm c=$c"
          shm_args=(--shared-memory $shm)
          [[ $shm != none ]] && shm_args+=(--output-shared-memory-size 32000)  # 16 x 1000 fp16 logits
          pa_run pa-resnet50-$protocol-$shm-c$c -m resnet50 -b 16 -i $protocol -u "127.0.0.1:$port" \
            --concurrency-range "$c:$c" "${shm_args[@]}"
        done
      done
    done
    for model in resnet50_b1 resnet50_dyn; do
      for c in 1 4 16 64; do
        step "perf_analyzer $model b1 http c=$c"
        pa_run pa-$model-http-c$c -m $model -b 1 -i http -u "127.0.0.1:$http_port" --concurrency-range "$c:$c"
      done
    done
    for model in resnet50 resnet50_b1 resnet50_dyn; do
      curl -s "127.0.0.1:$http_port/v2/models/$model/stats" > "$sm/stats-$model.json"
    done
    curl -s "127.0.0.1:$http_port/metrics" > "$sm/metrics.txt"
    stop_server
    cp "$out/serve.log" "$sm/serve.log"
  fi
  # The library alone on the same package, strategy and slots: what the server is held to.
  BENCH_TIMEOUT=120 b serve-model/bench-b16-c16 --engine torch:models/resnet50.pt2 --batch 16 --strategy pinned \
    --inflight 2 --clients 16 --objective throughput --duration 3 --no-link-measure
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

# Last, on a quiet host (the torch build and the server are done): what the boundary costs is host time.
if wants plugin-cost; then
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
  grep -h -E "^\| (touch|scale2|affine) " "$out"/plugin-cost/*.txt | sort | tee "$out/plugin-cost/summary.txt"
fi

kill "$sampler" 2>/dev/null
step "done"
