#!/usr/bin/env bash
# shm-gap (scripts/gpu_host.sh OUTDIR shm-gap): system against CUDA shared memory through `ferry serve`, to find
# where a system-shm request's time goes. perf_analyzer at 16 clients, batch 16, gRPC, for ResNet-50 and
# MobileNetV3-small (torch plugin, fp16, pinned, 2 slots) and for touch at 4.8 MB (no framework), each over CUDA
# and system shared memory, under jemalloc (serve's choice) and glibc (SHM_GAP_ALLOCATORS: some of them); the server's statistics (compute_input /
# infer / output per request) before and after each run (SHM_GAP_MAPPED=1: touch under mapped too). Writes
# OUTDIR/shm-gap/summary.txt, and fails when a torch model over system shared memory runs below 80% of its
# CUDA-shm rate (touch is shown, not judged: over CUDA shared memory its 4.8 MB stay on the GPU, over system
# shared memory they cross the link both ways).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

here=$out/shm-gap
mkdir -p "$here/models"/{touch,touch_mapped}
serve_python_ready
perf_analyzer_ready || exit 1
echo '{"engine": "touch", "strategy": "pinned", "inflight": 2, "input_size": 4800000}' > "$here/models/touch/config.json"
echo '{"engine": "touch", "strategy": "mapped", "inflight": 2, "input_size": 4800000}' \
  > "$here/models/touch_mapped/config.json"
if torch_ready; then
  for model in resnet50 mobilenet-v3-small; do
    [[ -e models/$model.pt2 ]] || continue
    mkdir -p "$here/models/$model"
    echo "{\"engine\": \"torch:$PWD/models/$model.pt2\", \"strategy\": \"pinned\", \"inflight\": 2, \"max_batch\": 16}" \
      > "$here/models/$model/config.json"
  done
fi

# stats MODEL: the model's inference statistics, one JSON document.
stats() { curl -s "127.0.0.1:$http_port/v2/models/$1/stats"; }
for allocator in ${SHM_GAP_ALLOCATORS:-jemalloc glibc}; do
  server_env=("FERRY_SERVE_MALLOC=$allocator")
  step "ferry serve ($allocator)"
  start_server "$here/models" || continue
  for model in resnet50 mobilenet-v3-small touch ${SHM_GAP_MAPPED:+touch_mapped}; do
    [[ -e $here/models/$model/config.json ]] || continue
    batch=()
    output=4800000
    if [[ $model != touch* ]]; then
      batch=(-b 16)
      output=64000  # 16 x 1000 logits, FP16 or FP32
    fi
    for shm in cuda system; do
      stem=$here/$allocator-$model-$shm
      stats "$model" > "$stem.before.json"
      echo "$allocator $model $shm $(run_pa "$stem" 30 -m "$model" "${batch[@]}" -i grpc -u "127.0.0.1:$grpc_port" \
        --concurrency-range 16:16 --shared-memory "$shm" --output-shared-memory-size $output)" | tee -a "$here/summary.txt"
      stats "$model" > "$stem.after.json"
      "${host_python[@]}" - "$stem.before.json" "$stem.after.json" << 'PY' | tee -a "$here/summary.txt"
import json, sys
b, a = (json.load(open(p))["model_stats"][0]["inference_stats"] for p in sys.argv[1:])
n = max(1, int(a["success"]["count"]) - int(b["success"]["count"]))
print("   per request (us): " + ", ".join(
    f"{k} {(int(a[k]['ns']) - int(b[k]['ns'])) / n / 1e3:.0f}" for k in ("queue", "compute_input", "compute_infer", "compute_output")))
PY
    done
  done
  stop_server
  cp "$out/serve.log" "$here/serve-$allocator.log"
done
server_env=()

# The guard: over system shared memory each model must reach at least 80% of its CUDA-shm rate
# under the server's default allocator (jemalloc where the bundle has it); the set fails otherwise.
"${host_python[@]}" - "$here" << 'PY' | tee -a "$here/summary.txt"
import glob, os, re, sys
here = sys.argv[1]
def rate(path):
    m = re.search(r"Throughput: ([0-9.]+) infer/sec", open(path).read()) if os.path.exists(path) else None
    return float(m.group(1)) if m else None
failed = False
for cuda in sorted(glob.glob(os.path.join(here, "jemalloc-*-cuda.txt"))):
    model = os.path.basename(cuda)[len("jemalloc-"):-len("-cuda.txt")]
    if model.startswith("touch"):  # on the GPU over CUDA shm, across the link over system shm
        continue
    c, s = rate(cuda), rate(cuda.replace("-cuda.txt", "-system.txt"))
    if not c or not s:
        print(f"guard {model}: no rate (cuda {c}, system {s})")
        failed = True
        continue
    ratio = s / c
    print(f"guard {model}: system {s:.0f} / cuda {c:.0f} infer/s = {ratio:.0%} (at least 80%)")
    failed |= ratio < 0.8
sys.exit(1 if failed else 0)
PY
