# shellcheck shell=bash
# What every set of scripts/gpu/ shares, sourced by each set after `out=$1`: progress steps, one
# `ferry bench` run kept whole, and waiting for the torch build that scripts/gpu_host.sh runs in
# the background. A set runs from the repository root with the bundle's environment
# (scripts/gpu_host_env.sh) already exported by the runner.
: "${out:?scripts/gpu/lib.sh is sourced by a set after out=OUTDIR}"

# step TEXT: logs a step with its time to OUTDIR/steps.txt and, with TARBALL set, refreshes the
# tarball of OUTDIR, so a call cut short still returns what it measured.
step() {
  echo "== $(date -u +%T) $*" | tee -a "$out/steps.txt"
  if [[ -n ${TARBALL:-} ]]; then
    tar czf "$TARBALL" -C "$(dirname "$out")" "$(basename "$out")" 2> /dev/null || true
  fi
}

# b NAME ARGS...: one `ferry bench` run; its table (NAME.txt, ending with rc=N), JSON and markdown
# kept under OUTDIR. A bench that fails is a result, not the end of the set: b returns 0.
b() {
  local name=$1 rc=0
  shift
  mkdir -p "$(dirname "$out/$name")"
  step "ferry bench $*"
  echo "ferry bench $*" > "$out/$name.txt"
  timeout "${BENCH_TIMEOUT:-240}" "${FERRY:-ferry}" bench "$@" --json "$out/$name.json" --md "$out/$name.md" \
    >> "$out/$name.txt" 2>&1 || rc=$?
  echo "rc=$rc" >> "$out/$name.txt"
}

# record FILE TIMEOUT COMMAND...: runs a command into FILE (ending with rc=N); never fails the set.
record() {
  local file=$1 limit=$2 rc=0
  shift 2
  timeout "$limit" "$@" > "$file" 2>&1 || rc=$?
  echo "rc=$rc" >> "$file"
}

# run_tests FILE TIMEOUT cpu|gpu [GTEST ARGS...]: every test executable of that kind in the bundle
# (ferry_<layer>_tests, or ferry_<layer>_gpu_tests), one after another, each under a heading with
# its own TIMEOUT, into FILE, which ends with rc=N (the first non-zero exit code, or 0). Never
# fails the set. A filter that matches nothing in an executable runs none of its tests.
run_tests() {
  local file=$1 limit=$2 kind=$3 bin rc=0 one
  shift 3
  : > "$file"
  for bin in .bundle/bin/ferry_*_tests; do
    case $bin in
      *_gpu_tests) [[ $kind == gpu ]] || continue ;;
      *) [[ $kind == cpu ]] || continue ;;
    esac
    echo "== $(basename "$bin")" >> "$file"
    one=0
    timeout "$limit" "$bin" "$@" >> "$file" 2>&1 || one=$?
    ((rc != 0)) || rc=$one
  done
  echo "rc=$rc" >> "$file"
}
# test_summary FILE: each executable's heading and gtest's closing lines.
test_summary() { grep -E "^== |^\[  (PASSED|FAILED) |tests? ran|^rc=" "$1" || true; }

# torch_ready: waits for the runner's background build of the torch plugin and the model export
# (their end is marked by OUTDIR/.torch-done), then says whether both exist.
torch_ready() {
  if [[ ! -e $out/.torch-started ]]; then
    echo "torch: not built in this call (the runner builds it when a set that needs it is asked for)" >&2
    return 1
  fi
  if [[ ! -e $out/.torch-done ]]; then
    step "torch: waiting for the build and the export"
    local waited=0
    until [[ -e $out/.torch-done ]] || ((waited >= ${TORCH_WAIT:-500})); do
      sleep 2
      waited=$((waited + 2))
    done
    tail -n 2 "$out/torch-build.log" "$out/export.log" || true
  fi
  [[ -e build-torch/lib/ferry/backends/libferry_backend_torch.so && -e models/resnet50.pt2 ]]
}
