#!/usr/bin/env bash
# text-model (scripts/gpu_host.sh OUTDIR text-model): a text encoder nobody here wrote (transformers' BERT, random
# weights, exported bare by scripts/text_model.py as a user would) through `ferry bench`: its integer inputs get zeros
# by default, --input-data random is refused without a bound and runs with --index-bound, a file of token ids runs,
# and one with an id past the vocabulary (no bound given) faults the GPU: the run stops, its reports keep what it
# measured, and ferry exits 4. Beside it: what the GPU's index check costs per request (the lookup test backend,
# 16x128 int64 ids and 16 x 37632 ids, 4.8 MB; BERT with and without the check), and a fault forced in the middle of
# a matrix (reduce cells before it stay in the report).
# gpu-set: needs-torch
set -euo pipefail
out=${1:?usage: scripts/gpu/SET.sh OUTDIR (run by scripts/gpu_host.sh)}
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

t=$out/text
mkdir -p "$t"
quick=(--max-time 2 --no-link-measure --no-um-counters)
tests_backends=$PWD/.bundle/test-backends
lookup() {  # lookup NAME ROWS WIDTH DECLARE FAULT_AFTER: a test model file
  printf 'format ferry-lookup/1\nrows %s\nwidth %s\ndim 1\nmax_batch 16\ndeclare_bound %s\nfault_after %s\n' \
    "$2" "$3" "$4" "$5" > "$t/$1.lookup"
}
lookup tokens 30522 128 yes 0
lookup wide 30522 37632 yes 0
lookup fault 1000 128 no 600

step "index check cost: 16x128 and 16x37632 int64 ids, with and without the GPU check"
for model in tokens wide; do
  b text/check-$model-on --engine "lookup:$t/$model.lookup" --backend-directory "$tests_backends" --batch 16 \
    --strategy pinned,device "${quick[@]}"
  b text/check-$model-off --engine "lookup:$t/$model.lookup" --backend-directory "$tests_backends" --batch 16 \
    --strategy pinned,device --no-index-checks "${quick[@]}"
done

step "a fault forced mid-run: the reduce cells before it stay in the report, exit 4"
b text/forced-fault --engine reduce,"lookup:$t/fault.lookup" --backend-directory "$tests_backends" --size 0.6MB \
  --batch 16 --strategy pinned,mapped --schedule sequential "${quick[@]}"

torch_ready || { echo "text-model: needs the torch plugin"; exit 1; }
[[ -e models/bert.pt2 ]] || { echo "text-model: models/bert.pt2 was not exported (export.log)"; exit 1; }
bert=(--engine torch:models/bert.pt2 --batch 16)
bounds=(--index-bound input_ids=30522 --index-bound attention_mask=2)
step "BERT: default data (zeros for ids with no bound), refused random, random with bounds, a file"
b text/bert-auto "${bert[@]}" --strategy pinned,device "${quick[@]}"
b text/bert-random-no-bound "${bert[@]}" --strategy pinned --input-data random "${quick[@]}"
b text/bert-random "${bert[@]}" --strategy pinned,mapped,device --input-data random "${bounds[@]}" "${quick[@]}"
b text/bert-file "${bert[@]}" --strategy pinned --input-data models/bert-ids.npz "${bounds[@]}" "${quick[@]}"
b text/bert-check-off "${bert[@]}" --strategy pinned --input-data random "${bounds[@]}" --no-index-checks "${quick[@]}"
b text/bert-file-bound-refuses "${bert[@]}" --strategy pinned --input-data models/bert-bad-ids.npz "${bounds[@]}" \
  "${quick[@]}"
step "BERT: an id past the vocabulary, no bound given: the GPU faults, the run stops, exit 4"
b text/bert-fault "${bert[@]}" --strategy pinned --input-data models/bert-bad-ids.npz "${quick[@]}"
grep -h "rc=\|ferry:" "$t"/*.txt | sort | uniq -c | sort -rn | head -20 || true
