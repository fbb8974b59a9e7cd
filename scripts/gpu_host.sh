#!/usr/bin/env bash
# Everything ferry runs on a GPU host, in one call: its machine starts bare and keeps nothing, so
# each call names the sets it wants and gets one folder back (and, with TARBALL set, a tarball of
# it refreshed after every step, so a call cut short still returns what it measured).
#   scripts/gpu_host.sh OUTDIR SET...
# Each set is one script, scripts/gpu/SET.sh OUTDIR; its header says what it measures. The runner:
# - exports the bundle's environment (scripts/gpu_bundle.sh, carried as .bundle: ferry, the test
#   binaries, the backends built there) and samples the GPU's clocks, power and throttle reasons
#   into OUTDIR/clocks.csv all along;
# - runs first the sets whose header says `gpu-set: times-the-host` (they time the host's CPU and
#   CUDA calls, so nothing else runs beside them), then, where a set says `gpu-set: needs-torch`,
#   builds the torch plugin against the host's PyTorch and exports the models in the background
#   (OUTDIR/.torch-done marks the end; sets wait for it through torch_ready), then the other sets
#   in the order given (GPU_TORCH=1 builds and exports for a call of sets that do not need it, so
#   that the tests set runs the torch tests too);
# - goes on after a set that fails, and says so in OUTDIR/steps.txt; its exit code is the number
#   of sets that failed.
# The serve sets need the Python wheels of scripts/fetch_gpu_wheels.sh carried as .whl.
set -euo pipefail
cd "$(dirname "$0")/.."
sets_known() {
  local f
  for f in scripts/gpu/*.sh; do
    f=$(basename "$f" .sh)
    [[ $f == lib* ]] || printf '%s ' "$f"
  done
}
if (($# < 2)); then
  echo "usage: scripts/gpu_host.sh OUTDIR SET...   sets: $(sets_known)" >&2
  exit 2
fi
out=$1
shift
for set in "$@"; do
  if [[ ! -f scripts/gpu/$set.sh || $set == lib* ]]; then
    echo "scripts/gpu_host.sh: no set '$set' (scripts/gpu/$set.sh)" >&2
    exit 2
  fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Python and perf_analyzer keep the host's own libraries (OpenSSL and friends): only ferry and the
# test binaries run with the bundle's first.
export HOST_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
# shellcheck source=scripts/gpu_host_env.sh
source scripts/gpu_host_env.sh
export PYTHONUNBUFFERED=1
export FERRY_CLI="$PWD/.bundle/bin/ferry"  # the CPU tests run the CLI from here, not from the build path
# Backends: the torch plugin built here; the tests' own plugins and the example's model travel
# with the bundle and the tree (the build's paths compiled into the tests do not exist here).
export FERRY_BACKEND_PATH="$PWD/build-torch/lib/ferry/backends"
export FERRY_EXAMPLE_BACKEND_DIR="$PWD/.bundle/lib/ferry/backends" FERRY_TEST_BACKEND_DIR="$PWD/.bundle/test-backends"
export FERRY_EXAMPLE_MODEL="$PWD/examples/backend/model.affine"
# GPU_ALSO_EXPORT_FOR names sets a later call on the same warm machine will run: their models are
# exported now, beside this call's work (a warm machine keeps models/ and build-torch/).
export GPU_SETS=" $* ${GPU_ALSO_EXPORT_FOR:-} "
# shellcheck source=scripts/gpu/lib.sh
source scripts/gpu/lib.sh

nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm \
  --format=csv > "$out/nvidia-smi.txt" 2>&1 || true
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 200 > "$out/clocks.csv" 2> /dev/null &
sampler=$!
trap 'kill $sampler 2> /dev/null || true' EXIT

says() { grep -q "^# gpu-set: .*$2" "scripts/gpu/$1.sh"; }
failed=0
run_set() {
  local rc=0
  step "set $1"
  bash "scripts/gpu/$1.sh" "$out" || rc=$?
  if ((rc != 0)); then
    failed=$((failed + 1))
    echo "set $1 failed (rc=$rc)" | tee -a "$out/steps.txt"
  fi
}
# Builds ferry against the host's PyTorch and exports the models, in the background.
start_torch_build() {
  local set exports=resnet50 eager=() wanted=0
  for set in "$@"; do says "$set" needs-torch && wanted=1; done
  [[ ${GPU_TORCH:-0} == 1 || -n ${GPU_ALSO_EXPORT_FOR:-} ]] && wanted=1
  ((wanted)) || return 0
  [[ $GPU_SETS == *" encoder "* ]] && exports="$exports encoder-s128 encoder-s384"
  [[ $GPU_SETS == *" torch-graphs "* || $GPU_SETS == *" serve-graphs "* || $GPU_SETS == *" shm-gap "* ||
    $GPU_SETS == *" serve-buckets "* ]] && exports="$exports mobilenet-v3-small"
  [[ $GPU_SETS == *" serve-model "* || $GPU_SETS == *" text-serve "* || $GPU_SETS == *" serve-buckets "* ]] &&
    eager=(--save-eager)
  local text=0
  [[ $GPU_SETS == *" text-model "* || $GPU_SETS == *" text-serve "* ]] && text=1
  # Packages an earlier call on this warm machine exported (with their eager module when asked
  # for) are kept: exporting one again costs a minute or more.
  local name todo=""
  for name in $exports; do
    [[ -e models/$name.pt2 && (${#eager[@]} -eq 0 || -e models/$name.pt2.eager.pt) ]] || todo="$todo $name"
  done
  exports=$todo
  step "torch: build and export in the background"
  touch "$out/.torch-started"
  mkdir -p models
  (
    (
      rc=0
      scripts/gpu_build_torch.sh > "$out/torch-build.log" 2>&1 || rc=$?
      echo "rc=$rc" >> "$out/torch-build.log"
    ) &
    if [[ -n $exports ]]; then
      (
        rc=0
        # shellcheck disable=SC2086  # the model names are words
        TORCHINDUCTOR_COMPILE_THREADS=6 timeout 400 python3 scripts/export_model.py --out models "${eager[@]}" $exports \
          > "$out/export.log" 2>&1 || rc=$?
        echo "rc=$rc" >> "$out/export.log"
      ) &
    fi
    # A text encoder nobody here wrote, exported bare as a user would.
    if ((text)); then
      (
        rc=0
        TORCHINDUCTOR_COMPILE_THREADS=4 timeout 400 python3 scripts/text_model.py export --out models \
          > "$out/export-text.log" 2>&1 || rc=$?
        echo "rc=$rc" >> "$out/export-text.log"
      ) &
    fi
    # A torchvision model nobody here wrote, exported as a user would (--module).
    if [[ $GPU_SETS == *" serve-buckets "* && ! -e models/regnet_y_400mf.pt2.eager.pt ]]; then
      (
        rc=0
        TORCHINDUCTOR_COMPILE_THREADS=4 timeout 400 python3 scripts/export_model.py --out models --save-eager \
          --module scripts/gpu/user_models/regnet_y_400mf.py:build > "$out/export-user.log" 2>&1 || rc=$?
        echo "rc=$rc" >> "$out/export-user.log"
      ) &
    fi
    # The tests' small model, also as a package with no description (read from the package itself).
    if [[ $GPU_SETS == *" tests "* ]]; then
      (
        rc=0
        TORCHINDUCTOR_COMPILE_THREADS=2 timeout 300 python3 scripts/export_model.py --out models --bare \
          --module tests/python/tiny_model.py:build --name tiny > "$out/export-tiny.log" 2>&1 || rc=$?
        echo "rc=$rc" >> "$out/export-tiny.log"
      ) &
    fi
    wait
    touch "$out/.torch-done"
  ) &
}

for set in "$@"; do says "$set" times-the-host && run_set "$set"; done
start_torch_build "$@"
for set in "$@"; do says "$set" times-the-host || run_set "$set"; done
# A torch build nobody waited for still ends before the call does (its logs come back whole).
[[ -e $out/.torch-started ]] && { torch_ready > /dev/null 2>&1 || true; }
step "done ($failed set(s) failed)"
exit "$failed"
