#!/usr/bin/env bash
# Model control on a GPU: `ferry serve --model-control-mode explicit` loads and unloads models of
# every strategy family (pinned, registered, managed-prefetch, device) through the replica set
# (every GPU, 2 instances x 2 slots each), answers checked requests between, and records the
# server's GPU memory (nvidia-smi, per process) and resident memory (pinned and registered host
# memory count there) after each step, so memory that an unload fails to give back shows.
#   scripts/gpu/serve-control.sh OUTDIR
# Run from the repository root on the GPU host after `source scripts/gpu_host_env.sh`, with the
# bundle (scripts/gpu_bundle.sh) unpacked as .bundle and ferry on PATH. About 2 minutes.
# Writes OUTDIR/memory.csv (model,cycle,phase,gpu_mib,rss_mib), OUTDIR/summary.txt (per model:
# memory after its last unload minus the baseline), OUTDIR/serve.log, and, when tritonclient is
# importable (.whl/ from scripts/fetch_gpu_wheels.sh), OUTDIR/test_model_control.txt (the serve suite's model-control tests on this host).
set -euo pipefail

out=${1:?usage: scripts/gpu/serve-control.sh OUTDIR}
mkdir -p "$out"
repo=$(mktemp -d /tmp/ferry-serve-control.XXXXXX)
for strategy in pinned registered managed-prefetch device; do
  mkdir -p "$repo/mlp_$strategy"
  printf '{"engine": "mlp:8x2048", "max_batch": 16, "strategy": "%s", "inflight": 2, "instances_per_gpu": 2}\n' \
    "$strategy" > "$repo/mlp_$strategy/config.json"
done

log=$out/serve.log
ferry serve --model-repository "$repo" --host 127.0.0.1 --http-port 0 --grpc-port 0 \
  --model-control-mode explicit > "$log" 2>&1 &
server=$!
stop() {
  kill -TERM "$server" 2> /dev/null || true
  wait "$server" 2> /dev/null || true
  rm -rf "$repo"
}
trap stop EXIT
for _ in $(seq 1 120); do
  grep -q "ferry serve: serving" "$log" && break
  kill -0 "$server" 2> /dev/null || { cat "$log"; exit 1; }
  sleep 0.5
done
port=$(sed -nE 's/.*HTTP on [^ ]+:([0-9]+).*/\1/p' "$log" | head -1)
url=http://127.0.0.1:$port

gpu_mib() {  # the server's memory on every GPU, MiB
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
    awk -F', ' -v pid="$server" '$1 == pid {sum += $2} END {print sum + 0}'
}
rss_mib() { awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$server/status"; }
record() { echo "$1,$2,$3,$(gpu_mib),$(rss_mib)" >> "$out/memory.csv"; }

# A batch of 4 rows of 2048 FP16 values; the answer must have the same shape, finite values.
python3 - > "$out/request.json" <<'EOF'
import json, random
random.seed(1)
print(json.dumps({"inputs": [{"name": "input", "shape": [4, 2048], "datatype": "FP16",
                              "data": [round(random.uniform(-1, 1), 3) for _ in range(4 * 2048)]}]}))
EOF
infer_checked() {
  local answer
  answer=$(curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$out/request.json" \
    "$url/v2/models/$1/infer")
  python3 -c 'import json, math, sys
o = json.loads(sys.argv[1])["outputs"][0]
assert o["shape"] == [4, 2048] and len(o["data"]) == 4 * 2048, o["shape"]
assert all(math.isfinite(v) for v in o["data"])' "$answer"
}
cycle() {  # cycle MODEL N: load, 20 checked requests, unload; memory after each step
  curl -sf -X POST "$url/v2/repository/models/$1/load" > /dev/null
  record "$1" "$2" loaded
  for _ in $(seq 1 20); do infer_checked "$1"; done
  record "$1" "$2" used
  curl -sf -X POST "$url/v2/repository/models/$1/unload" > /dev/null
  sleep 0.3
  record "$1" "$2" unloaded
}

echo "model,cycle,phase,gpu_mib,rss_mib" > "$out/memory.csv"
# One cycle first: CUDA contexts, cuBLAS handles and allocator arenas settle.
cycle mlp_pinned warmup
sleep 1
record baseline 0 idle
for model in mlp_pinned mlp_registered mlp_managed-prefetch mlp_device; do
  for c in 1 2 3; do cycle "$model" "$c"; done
done
sleep 1.5  # the idle memory release
record final 0 idle
python3 - "$out/memory.csv" > "$out/summary.txt" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = next(r for r in rows if r["model"] == "baseline")
print(f"baseline: GPU {base['gpu_mib']} MiB, RSS {base['rss_mib']} MiB")
for r in rows:
    if r["phase"] in ("loaded", "unloaded") and r["cycle"] != "warmup":
        print(f"{r['model']:22} cycle {r['cycle']} {r['phase']:8}  GPU {float(r['gpu_mib']) - float(base['gpu_mib']):+8.1f} MiB"
              f"  RSS {float(r['rss_mib']) - float(base['rss_mib']):+8.1f} MiB  (vs baseline)")
final = rows[-1]
print(f"final idle: GPU {float(final['gpu_mib']) - float(base['gpu_mib']):+.1f} MiB, "
      f"RSS {float(final['rss_mib']) - float(base['rss_mib']):+.1f} MiB vs baseline")
EOF
cat "$out/summary.txt"
grep -E "model '|UNAVAILABLE" "$log" | head -40

# The suite's model-control tests against this ferry, with tritonclient from the wheels of
# scripts/fetch_gpu_wheels.sh where they were carried (.whl/), installed out of the way.
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/ferry-serve-site .whl/*.whl > "$out/wheels.txt" 2>&1 || echo "pip install rc=$?" >> "$out/wheels.txt"
  export PYTHONPATH=/tmp/ferry-serve-site${PYTHONPATH:+:$PYTHONPATH}
fi
if python3 -c 'import tritonclient.http, tritonclient.grpc' 2> /dev/null; then
  (cd tests/serve && FERRY_BIN=$(command -v ferry) PYTHONDONTWRITEBYTECODE=1 \
    timeout 120 python3 -m unittest -v test_model_control) > "$out/test_model_control.txt" 2>&1 &&
    echo "test_model_control rc=0" || echo "test_model_control rc=$?"
else
  echo "tritonclient not importable: test_model_control not run" | tee "$out/test_model_control.txt"
fi
