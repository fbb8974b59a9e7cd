#!/usr/bin/env bash
# serve-model (scripts/gpu_host.sh OUTDIR serve-model): ResNet-50 (fp16, dynamic batch) through `ferry serve` and the torch
# plugin: every answer checked against eager PyTorch over HTTP and gRPC, tensors in the body, system
# and CUDA shared memory, at 1/4/16 clients (scripts/serve_model_check.py); perf_analyzer at
# 1/4/16/64 on each path; server-side batching on and off (batch-1 requests); `ferry bench` on the
# same package, strategy and slots (about 5 minutes).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

torch_ready || { echo "serve-model: needs the torch plugin and models/resnet50.pt2"; exit 1; }
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
start_server "$sm/models"
cp "$out/serve.log" "$sm/serve-start.log"
step "checked answers: resnet50 b16, http and grpc, body/system/cuda, 1/4/16 clients"
record "$sm/check-b16.txt" 300 "${host_python[@]}" scripts/serve_model_check.py --http "127.0.0.1:$http_port" \
  --grpc "127.0.0.1:$grpc_port" --model resnet50 --batch 16 --eager "$package.eager.pt" --requests 6 \
  --json "$sm/check-b16.json"
tail -3 "$sm/check-b16.txt"
for model in resnet50_b1 resnet50_dyn; do
  record "$sm/check-$model.txt" 300 "${host_python[@]}" scripts/serve_model_check.py --http "127.0.0.1:$http_port" \
    --grpc "127.0.0.1:$grpc_port" --model $model --batch 1 --eager "$package.eager.pt" --paths body --clients 16 \
    --requests 8 --json "$sm/check-$model.json"
  tail -2 "$sm/check-$model.txt"
done
if perf_analyzer_ready; then
  for protocol in http grpc; do
    port=$http_port
    [[ $protocol == grpc ]] && port=$grpc_port
    for shm in none system cuda; do
      for c in 1 4 16 64; do
        step "perf_analyzer resnet50 batch 16 $protocol shm=$shm c=$c"
        shm_args=(--shared-memory "$shm")
        [[ $shm != none ]] && shm_args+=(--output-shared-memory-size 32000)  # 16 x 1000 fp16 logits
        run_pa "$sm/pa-resnet50-$protocol-$shm-c$c" 40 -m resnet50 -b 16 -i $protocol -u "127.0.0.1:$port" \
          --concurrency-range "$c:$c" "${shm_args[@]}"
      done
    done
  done
  for model in resnet50_b1 resnet50_dyn; do
    for c in 1 4 16 64; do
      step "perf_analyzer $model b1 http c=$c"
      run_pa "$sm/pa-$model-http-c$c" 40 -m $model -b 1 -i http -u "127.0.0.1:$http_port" --concurrency-range "$c:$c"
    done
  done
  python3 scripts/summarise_perf_analyzer.py --batch resnet50=16 \
    --title "perf_analyzer against ferry serve: ResNet-50 (fp16) through the torch plugin" "$sm" \
    > "$sm/perf_analyzer.md" || true
fi
for model in resnet50 resnet50_b1 resnet50_dyn; do
  curl -s "127.0.0.1:$http_port/v2/models/$model/stats" > "$sm/stats-$model.json" || true
done
curl -s "127.0.0.1:$http_port/metrics" > "$sm/metrics.txt" || true
stop_server
cp "$out/serve.log" "$sm/serve.log"
# The library alone on the same package, strategy and slots: what the server is held to.
BENCH_TIMEOUT=120 b serve-model/bench-b16-c16 --engine torch:models/resnet50.pt2 --batch 16 --strategy pinned \
  --inflight 2 --clients 16 --objective throughput --duration 3 --no-link-measure
