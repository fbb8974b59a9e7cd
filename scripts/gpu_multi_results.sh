#!/usr/bin/env bash
# Issue 6's measurements on a host with two GPUs or more, in one go, from a bundle made by
# scripts/gpu_bundle.sh (or, with FERRY_BIN_DIR, from any folder holding ferry and the tests):
#   scripts/gpu_multi_results.sh OUTDIR [TARBALL]
# Runs the multi-GPU tests (and the whole GPU suite), `ferry info --measure` (peer access and
# peer bandwidth), mlp throughput on 1 vs 2 GPUs under the best strategies, per-GPU runs, and the
# cost avoided by data-following placement. Every command's output lands in OUTDIR; TARBALL, when
# given, is refreshed after every step so a run cut short still returns what it measured.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu_multi_results.sh OUTDIR [TARBALL]}
tarball=${2:-}
mkdir -p "$out"
if [[ -n ${FERRY_BIN_DIR:-} ]]; then
  export PATH="$FERRY_BIN_DIR:$PATH"
else
  source scripts/gpu_host_env.sh
fi
export FERRY_CLI="$(command -v ferry)"
source scripts/gpu_steps.sh

step "machine"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$out/topology.txt" 2>&1  # NVLink (NV#) or PCIe (PIX/PXB/PHB/SYS) between the GPUs
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
echo "GPUs: $gpus" | tee -a "$out/steps.txt"
[[ $gpus -ge 2 ]] || echo "WARNING: fewer than 2 GPUs; the multi-GPU tests will skip and --devices 0,1 will be refused" | tee -a "$out/steps.txt"

step "multi-GPU tests"
timeout 300 ferry_gpu_tests --gtest_filter='MultiGpu*:*ReplicasMatchTheCpu*' > "$out/multi_gpu_tests.txt" 2>&1
echo "rc=$?" >> "$out/multi_gpu_tests.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |\[ placement \]|tests ran" "$out/multi_gpu_tests.txt"
step "whole GPU suite (single-GPU behaviour unchanged)"
timeout 600 ferry_gpu_tests --gtest_brief=1 > "$out/gpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/gpu_tests.txt"
tail -4 "$out/gpu_tests.txt"
ferry_cpu_tests --gtest_brief=1 > "$out/cpu_tests.txt" 2>&1; echo "rc=$?" >> "$out/cpu_tests.txt"

step "ferry info --measure (link peaks, peer access, peer bandwidth both ways)"
ferry info --measure > "$out/info.txt" 2>&1
ferry info --measure --json > "$out/info.json" 2>&1
sed -n '/^Peer access/,$p' "$out/info.txt"

# Throughput scaling, 1 -> 2 GPUs, on the compute-bound GEMM chain (target: at least 1.9x). Same
# slots per GPU and the same in-flight depth per client (2) on both, so the only change is the
# number of GPUs; device is the floor (no transfer at all).
mlp=(--engine mlp:48x2048 --batch 1024 --strategy device,pinned,registered --objective throughput --duration 3 --inflight 4)
b mlp-1gpu "${mlp[@]}" --devices 0 --clients 2
b mlp-2gpu "${mlp[@]}" --devices 0,1 --clients 4
# More clients per GPU, to see whether the host side (fill, read, checks) keeps up with two GPUs.
b mlp-1gpu-c4 "${mlp[@]}" --devices 0 --clients 4 --no-link-measure
b mlp-2gpu-c8 "${mlp[@]}" --devices 0,1 --clients 8 --no-link-measure
# A smaller, transfer-heavier mlp, where the two GPUs share one host's memory bandwidth.
small=(--engine mlp:8x2048 --batch 256 --strategy pinned,mapped,registered --objective throughput --duration 2 --inflight 4 --no-link-measure)
b mlp-small-1gpu "${small[@]}" --devices 0 --clients 2
b mlp-small-2gpu "${small[@]}" --devices 0,1 --clients 4

# Each GPU alone (the per-GPU path: buffers, managed hints and contexts on GPU 1, not GPU 0).
b gpu1-alone --devices 1 --engine touch,reduce --size 19MB --strategy all --duration 0.5 --no-link-measure
b all-gpus --devices all --engine touch --size 19MB --strategy pinned,mapped,managed-prefetch,managed-advise,device --clients 4 --inflight 2 --duration 0.5 --no-link-measure

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

# ResNet-50 scaling too, where the libtorch build and the exported model exist on this host
# (scripts/gpu_host.sh OUT resnet makes both).
if [[ -x build-torch/apps/ferry/ferry && -e models/resnet50.pt2 ]]; then
  step "resnet50 scaling"
  for d in "0 --clients 2" "0,1 --clients 4"; do
    name=resnet50-$(echo "$d" | cut -d' ' -f1 | tr ',' '-')
    # shellcheck disable=SC2086
    timeout 300 build-torch/apps/ferry/ferry bench --engine torch:models/resnet50.pt2 --batch 16 --inflight 4 \
      --strategy device,pinned,registered --objective throughput --duration 3 --no-link-measure --devices $d \
      --json "$out/$name.json" --md "$out/$name.md" > "$out/$name.txt" 2>&1
    echo "rc=$?" >> "$out/$name.txt"
  done
else
  echo "resnet50 skipped: needs build-torch/ and models/resnet50.pt2 (scripts/gpu_host.sh OUT resnet)" | tee -a "$out/steps.txt"
fi

step "scaling summary"
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
step "done"
