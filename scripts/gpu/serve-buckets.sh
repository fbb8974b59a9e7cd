#!/usr/bin/env bash
# serve-buckets (scripts/gpu_host.sh OUTDIR serve-buckets): batch buckets under real traffic. Each
# model (ResNet-50 and MobileNetV3-small fp16, and RegNetY-400MF, a torchvision model exported as a
# user would, scripts/gpu/user_models/) is served with CUDA graphs, pinned, 4 slots, over gRPC and
# CUDA shared memory, in these configs, loaded one at a time (--model-control-mode explicit):
#   b16-before, b64-before   "batch_buckets": [max_batch]: every batch padded to max_batch (before)
#   b16, b64                 the default buckets (powers of two up to max_batch)
#   b64-t5, b64-t20          "latency_target_ms": 5 and 20
#   b64-d100, b64-d1000      "batch_delay_us": 100 and 1000 (Triton's fixed delays; b64 is delay 0)
# perf_analyzer runs at batch 1 with 1, 16 and 64 clients, at batch 16 with 16 clients, and the
# mixed pair (batch 1 x 32 clients beside batch 16 x 4 clients, two processes at once, the second
# as another user so that each has its own shared-memory regions), each where it tells something
# (the before configs: batch 1 alone, and b16's batch-16 rate, b64's 64 clients);
# beside them `ferry bench --batch 1 --graph --strategy device` on the same package (the floor a
# single-image request is held to), and first the front end's own round trip (a 4 KB touch at
# batch 1 from one client, over gRPC with CUDA shared memory and over HTTP). A held-out client
# checks answers at batch 1, 3, 7 and 16 against eager PyTorch (scripts/serve_model_check.py).
# SERVE_BUCKETS_MODELS picks the models.
# Writes OUTDIR/serve-buckets/summary.md (scripts/gpu/serve_buckets_summary.py).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

torch_ready || { echo "serve-buckets: needs the torch plugin"; exit 1; }
here=$out/serve-buckets
mkdir -p "$here/models"
serve_python_ready
perf_analyzer_ready || exit 1
models=${SERVE_BUCKETS_MODELS:-resnet50 mobilenet-v3-small regnet_y_400mf}
# SERVE_BUCKETS_ONLY=mixed: the mixed pair alone, on each model's max_batch 64 config;
# SERVE_BUCKETS_ONLY=targets: batch 1 x 64 clients alone, on max_batch 64 without a delay and with
# each latency target (with FERRY_SERVER, another build's batcher beside this one's, in one call).
only=${SERVE_BUCKETS_ONLY:-all}

config() {  # NAME PACKAGE JSON-TAIL
  mkdir -p "$here/models/$1"
  echo "{\"engine\": \"torch:$PWD/models/$2.pt2\", \"strategy\": \"pinned\", \"inflight\": 4, \"graph\": true$3}" \
    > "$here/models/$1/config.json"
}
# The front end's own round trip: a 4 KB touch, whose GPU work takes microseconds.
mkdir -p "$here/models/frontend"
echo '{"engine": "touch", "input_size": "4KB", "strategy": "pinned", "inflight": 4}' > "$here/models/frontend/config.json"
for model in $models; do
  [[ -e models/$model.pt2 ]] || { echo "serve-buckets: models/$model.pt2 was not exported" | tee -a "$out/steps.txt"; continue; }
  m=${model//-/_}
  config "${m}_b16_before" "$model" ', "max_batch": 16, "batch_buckets": [16]'
  config "${m}_b16" "$model" ', "max_batch": 16'
  config "${m}_b64_before" "$model" ', "max_batch": 64, "batch_buckets": [64]'
  config "${m}_b64" "$model" ', "max_batch": 64'
  config "${m}_b64_t5" "$model" ', "max_batch": 64, "latency_target_ms": 5'
  config "${m}_b64_t20" "$model" ', "max_batch": 64, "latency_target_ms": 20'
  config "${m}_b64_d100" "$model" ', "max_batch": 64, "batch_delay_us": 100'
  config "${m}_b64_d1000" "$model" ', "max_batch": 64, "batch_delay_us": 1000'
  [[ $only != all ]] || BENCH_TIMEOUT=90 b "serve-buckets/bench-$m-b1" --engine "torch:models/$model.pt2" --batch 1 --graph \
    --strategy device --no-recipes --max-time 2 --no-link-measure
done

pa_in() {  # FOLDER STEM MODEL BATCH CLIENTS, tensors in CUDA shared memory
  run_pa "$1/$2" 40 -m "$3" -b "$4" -i grpc -u "127.0.0.1:$grpc_port" --concurrency-range "$5:$5" \
    --shared-memory cuda --output-shared-memory-size 64000 | tee -a "$here/runs.txt"
}
pa() { pa_in "$here" "$@"; }  # STEM MODEL BATCH CLIENTS
pa_body() {  # STEM MODEL BATCH CLIENTS, tensors in the request body
  run_pa "$here/$1" 40 -m "$2" -b "$3" -i grpc -u "127.0.0.1:$grpc_port" --concurrency-range "$4:$4" |
    tee -a "$here/runs.txt"
}
# The mixed pair: two perf_analyzer processes on one model at once, both on CUDA shared memory.
# perf_analyzer names its regions alike in every process and, when it starts, unregisters every
# region its user has; the server keeps each local user's regions apart, so the batches of 16 run as
# another user (uid 65534, through setpriv, where this runs as root). Where that cannot be, or
# fails, they travel in the request body, and the pair then measures the body path's rate more
# than the batcher (runs.txt says which).
other_dir=/tmp/ferry-other-user
other_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
other_user_ready() {
  [[ $(id -u) == 0 ]] && command -v setpriv > /dev/null || return 1
  mkdir -p "$other_dir" && chmod 1777 "$other_dir"
  "${other_user[@]}" test -x "$pa" && "${other_user[@]}" test -w "$other_dir"
}
pa_other_user() {  # STEM MODEL BATCH CLIENTS, as uid 65534 (its CSV written where that user may)
  pa_prefix=("${other_user[@]}")
  pa_in "$other_dir" "$@"
  pa_prefix=()
  mv "$other_dir/$1".* "$here/"
}
mixed() {  # MODEL
  local single
  if other_user_ready; then
    echo "$1 mixed pair: batch 16 as uid 65534 over CUDA shared memory" >> "$here/runs.txt"
    pa "$1-mixed-b1-c32" "$1" 1 32 &
    single=$!
    pa_other_user "$1-mixed-b16-c4" "$1" 16 4
    wait "$single" || true
    grep -q "^rc=0" "$here/$1-mixed-b16-c4.txt" && return 0
    mv "$here/$1-mixed-b16-c4.txt" "$here/$1-mixed-b16-c4.other-user.txt"
  fi
  echo "$1 mixed pair: batch 16 in the request body" >> "$here/runs.txt"
  pa "$1-mixed-b1-c32" "$1" 1 32 &
  single=$!
  pa_body "$1-mixed-b16-c4" "$1" 16 4
  wait "$single" || true
}
load() { curl -s -X POST "127.0.0.1:$http_port/v2/repository/models/$1/load" > "$here/$1-load.json" || true; }
unload() {
  curl -s "127.0.0.1:$http_port/v2/models/$1/stats" > "$here/$1-stats.json" || true
  curl -s "127.0.0.1:$http_port/v2/models/$1" > "$here/$1-metadata.json" || true
  curl -s "127.0.0.1:$http_port/metrics" | grep -E "^ferry_(bucket_executions_total|padded_rows_total)\{model=\"$1\"" \
    > "$here/$1-buckets.txt" || true
  curl -s -X POST "127.0.0.1:$http_port/v2/repository/models/$1/unload" > /dev/null || true
}
check() {  # MODEL PACKAGE: answers at batch 1, 3, 7 and 16 against eager PyTorch
  local eager=models/$2.pt2.eager.pt batch tolerance=1e-2
  # RegNetY's fp16 kernels as AOTInductor compiled them differ from eager ones by about 1.1% at
  # every batch size, a full bucket's too: the compiler's rounding, not padding.
  [[ $2 == regnet_y_400mf ]] && tolerance=3e-2
  [[ -e $eager ]] || { echo "no $eager: answers not checked" >> "$here/checks.txt"; return 0; }
  for batch in 1 3 7 16; do
    record "$here/$1-check-b$batch.txt" 120 "${host_python[@]}" scripts/serve_model_check.py \
      --http "127.0.0.1:$http_port" --grpc "127.0.0.1:$grpc_port" --model "$1" --batch "$batch" --eager "$eager" \
      --paths body,system --clients 1,4 --requests 4 --tolerance "$tolerance"
    echo "$1 batch $batch: $(tail -1 "$here/$1-check-b$batch.txt")" >> "$here/checks.txt"
  done
}

step "ferry serve: the bucket configs, loaded one at a time"
start_server "$here/models" --model-control-mode explicit || exit 1
if [[ $only == all ]]; then
  step "serve-buckets: the front end's own round trip"
  load frontend
  pa frontend_grpc-b1-c1 frontend 1 1
  run_pa "$here/frontend_http-b1-c1" 40 -m frontend -b 1 -i http -u "127.0.0.1:$http_port" --concurrency-range 1:1 |
    tee -a "$here/runs.txt"
  unload frontend
fi
for model in $models; do
  [[ -e models/$model.pt2 ]] || continue
  m=${model//-/_}
  if [[ $only == targets ]]; then
    for name in "${m}_b64" "${m}_b64_t5" "${m}_b64_t20"; do
      load "$name"
      pa "$name-b1-c64" "$name" 1 64
      unload "$name"
    done
    continue
  fi
  if [[ $only == mixed ]]; then
    load "${m}_b64"
    pa "${m}_b64-b16-c16" "${m}_b64" 16 16
    mixed "${m}_b64"
    unload "${m}_b64"
    continue
  fi
  for name in "${m}_b16_before" "${m}_b16" "${m}_b64_before" "${m}_b64"; do
    step "serve-buckets: $name"
    load "$name"
    pa "$name-b1-c1" "$name" 1 1
    [[ $name == *_before ]] || pa "$name-b1-c16" "$name" 1 16
    [[ $name == *_b16_before ]] || pa "$name-b1-c64" "$name" 1 64
    [[ $name == *_b64_before ]] || pa "$name-b16-c16" "$name" 16 16
    [[ $name == *_before ]] || mixed "$name"
    [[ $name == *_b64 ]] && check "$name" "$model"
    unload "$name"
  done
  for name in "${m}_b64_t5" "${m}_b64_t20" "${m}_b64_d100" "${m}_b64_d1000"; do
    step "serve-buckets: $name"
    load "$name"
    pa "$name-b1-c64" "$name" 1 64
    unload "$name"
  done
done
stop_server
cp "$out/serve.log" "$here/serve.log"
"${host_python[@]}" scripts/gpu/serve_buckets_summary.py "$here" > "$here/summary.md" 2>&1 || true
cat "$here/summary.md"
