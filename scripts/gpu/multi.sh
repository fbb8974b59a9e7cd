#!/usr/bin/env bash
# multi (scripts/gpu_host.sh OUTDIR multi): on two GPUs or more: the multi-GPU tests (and the
# whole suite unless the tests set runs too), `ferry info --measure` (peer access and bandwidth),
# mlp throughput on 1 vs 2 GPUs, each GPU alone, what data-following placement saves, and a scaling
# summary (scaling_summary.py; the multi-resnet set adds ResNet-50).
# gpu-set: times-the-host
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

step "multi: machine"
nvidia-smi > "$out/multi-nvidia-smi.txt" 2>&1 || true
nvidia-smi topo -m > "$out/topology.txt" 2>&1 || true  # NVLink (NV#) or PCIe (PIX/PXB/PHB/SYS) between the GPUs
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
echo "GPUs: $gpus" | tee -a "$out/steps.txt"
if ((gpus < 2)); then
  echo "WARNING: fewer than 2 GPUs; the multi-GPU tests will skip and --devices 0,1 will be refused" \
    | tee -a "$out/steps.txt"
fi

step "multi-GPU tests"
run_tests "$out/multi_gpu_tests.txt" 300 gpu --gtest_filter='MultiGpu*:*ReplicasMatchTheCpu*'
grep -E "^\[  (PASSED|FAILED|SKIPPED) |\[ placement \]|tests ran" "$out/multi_gpu_tests.txt" || true
if [[ ${GPU_SETS:-} != *" tests "* ]]; then  # single-GPU behaviour unchanged on this host too
  step "whole GPU suite"
  run_tests "$out/gpu_tests.txt" 600 gpu --gtest_brief=1
  test_summary "$out/gpu_tests.txt"
  run_tests "$out/cpu_tests.txt" 120 cpu --gtest_brief=1
fi

step "ferry info --measure (link peaks, peer access, peer bandwidth both ways)"
ferry info --measure > "$out/info.txt" 2>&1 || true
ferry info --measure --json > "$out/info.json" 2>&1 || true
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
  read -r -a args <<< "$spec"
  echo "ferry bench --placement --devices 0,1 --engine $spec" > "$out/$name.txt"
  rc=0
  timeout 300 ferry bench --placement --devices 0,1 --engine "${args[@]}" --json "$out/$name.json" \
    >> "$out/$name.txt" 2>&1 || rc=$?
  echo "rc=$rc" >> "$out/$name.txt"
  cat "$out/$name.txt"
done

step "multi: scaling summary"
python3 scripts/gpu/scaling_summary.py "$out" | tee "$out/scaling.txt"
