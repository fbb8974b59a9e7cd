#!/usr/bin/env bash
# serve-graphs (scripts/gpu_host.sh OUTDIR serve-graphs): ResNet-50 and MobileNetV3-small (fp16, batch 16) served
# with "graph": true (the torch backend's own CUDA graphs), "auto" (graphs where the warm-up measures them
# faster) and without, pinned, 4 slots: perf_analyzer at 16 clients over CUDA and system shared memory
# (gRPC), with the server's stages per request and each model's metadata (its platform says what
# became of its graphs, with the warm-up's figures under "auto"). Writes OUTDIR/serve-graphs/summary.txt.
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

torch_ready || { echo "serve-graphs: needs the torch plugin"; exit 1; }
here=$out/serve-graphs
serve_python_ready
perf_analyzer_ready || exit 1
for model in resnet50 mobilenet-v3-small; do
  [[ -e models/$model.pt2 ]] || continue
  for graph in false true '"auto"'; do
    name=${model//-/_}_graph_${graph//\"/}
    mkdir -p "$here/models/$name"
    echo "{\"engine\": \"torch:$PWD/models/$model.pt2\", \"strategy\": \"pinned\", \"inflight\": 4, \"max_batch\": 16,
      \"graph\": $graph}" > "$here/models/$name/config.json"
  done
done
step "ferry serve: the torch models with and without graphs"
start_server "$here/models" || exit 1
cp "$out/serve.log" "$here/serve-start.log"
for folder in "$here"/models/*/; do
  model=$(basename "$folder")
  for shm in cuda system; do
    echo "$model $shm $(run_pa "$here/$model-$shm" 30 -m "$model" -b 16 -i grpc -u "127.0.0.1:$grpc_port" \
      --concurrency-range 16:16 --shared-memory "$shm" --output-shared-memory-size 64000)" | tee -a "$here/summary.txt"
  done
  curl -s "127.0.0.1:$http_port/v2/models/$model/stats" > "$here/$model-stats.json" || true
  curl -s "127.0.0.1:$http_port/v2/models/$model" > "$here/$model-metadata.json" || true
done
stop_server
cp "$out/serve.log" "$here/serve.log"
