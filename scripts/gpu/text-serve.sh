#!/usr/bin/env bash
# text-serve (scripts/gpu_host.sh OUTDIR text-serve): the text encoder of the text-model set served beside ResNet-50:
# answers checked against eager PyTorch over HTTP and gRPC with the ids in the body, system and CUDA shared memory;
# an id out of range on each path gets 400 / INVALID_ARGUMENT, and every model keeps answering right
# (scripts/text_model.py check); then the serve tests of index inputs and device faults on a real GPU
# (tests/serve/test_index_inputs.py: the lookup backend's kernel asserts, the server exits 4).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh
# shellcheck source=scripts/gpu/lib_serve.sh
source scripts/gpu/lib_serve.sh

torch_ready || { echo "text-serve: needs the torch plugin"; exit 1; }
[[ -e models/bert.pt2 ]] || { echo "text-serve: models/bert.pt2 was not exported (export.log)"; exit 1; }
serve_python_ready
ts=$out/text-serve
mkdir -p "$ts/models"/{bert,resnet50}
echo "{\"engine\": \"torch:$PWD/models/bert.pt2\", \"max_batch\": 16, \"inflight\": 2,
  \"index_bounds\": {\"input_ids\": 30522, \"attention_mask\": 2}}" > "$ts/models/bert/config.json"
echo "{\"engine\": \"torch:$PWD/models/resnet50.pt2\", \"max_batch\": 16, \"inflight\": 2}" \
  > "$ts/models/resnet50/config.json"
step "ferry serve: BERT (bounds in its config) beside ResNet-50"
start_server "$ts/models"
cp "$out/serve.log" "$ts/serve-start.log"
other=()
[[ -e models/resnet50.pt2.eager.pt ]] && other=(--other resnet50 --other-eager models/resnet50.pt2.eager.pt)
record "$ts/check.txt" 300 "${host_python[@]}" scripts/text_model.py check --http "127.0.0.1:$http_port" \
  --grpc "127.0.0.1:$grpc_port" --model bert --eager models/bert.eager.pt "${other[@]}" --json "$ts/check.json"
tail -12 "$ts/check.txt"
stop_server
cp "$out/serve.log" "$ts/serve.log"

step "serve tests of index inputs and device faults, on the GPU"
bundle_ferry_wrapper
record "$ts/test_index_inputs.txt" 200 env -C tests/serve FERRY_BIN=/tmp/ferry-with-bundle \
  FERRY_TEST_BACKEND_DIR="$PWD/.bundle/test-backends" "${host_python[@]}" -m unittest -v test_index_inputs
tail -15 "$ts/test_index_inputs.txt"
