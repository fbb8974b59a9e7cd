#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, the `fuzz` preset: clang, ASan + UBSan) and runs
# each, one after the other, from its seed corpus (tests/fuzz/corpus/<target>/):
#   scripts/fuzz.sh                    every target, 60 s each
#   scripts/fuzz.sh --ci               the targets in ci_targets below, 25 s each (CI)
#   scripts/fuzz.sh SECONDS [TARGET..] the targets named (default: all), SECONDS each
#   scripts/fuzz.sh --campaign SECONDS [TARGET..]
#                                      a long run: each target goes on past its findings
#                                      (libFuzzer's fork mode) and they are all kept
# New inputs that reach new code go to build-fuzz/corpus/<target>/, not to the committed seeds. A
# crash, a sanitizer report, an exception the parser must not throw or a failed check stops that
# target (but for --campaign), leaves the input in build-fuzz/findings/<target>/ and fails the
# script after the other targets have run. Reproduce with: build-fuzz/tests/fuzz/fuzz_<target> FILE
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(http_infer_codec json_tensor grpc_infer_codec model_config io_description shm_range)
# What CI fuzzes: take a target out here, saying why, only while a known bug it finds is unfixed.
ci_targets=("${all_targets[@]}")

seconds=60
mode=()
targets=()
case "${1:-}" in
  --ci) seconds=25; targets=("${ci_targets[@]}"); shift ;;
  --campaign)
    seconds=${2:?--campaign needs SECONDS per target}; shift 2
    mode=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1) ;;
  ""|-*) ;;
  *) seconds=$1; shift ;;
esac
(($#)) && targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")

scripts/setup.sh
source scripts/env.sh
cmake --preset fuzz
cmake --build --preset fuzz

# Exceptions a parser must not throw end the run through std::terminate; ASan reports and UBSan
# (built with -fno-sanitize-recover) stop at the first error.
symbolizer=external_symbolizer_path=/usr/lib/llvm-14/bin/llvm-symbolizer
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:protect_shadow_gap=0:$symbolizer"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:$symbolizer"
failed=()
for target in "${targets[@]}"; do
  binary="build-fuzz/tests/fuzz/fuzz_$target"
  [[ -x "$binary" ]] || { echo "fuzz: no target '$target' (known: ${all_targets[*]})" >&2; exit 2; }
  rm -rf "build-fuzz/findings/$target"  # this run's findings only
  mkdir -p "build-fuzz/corpus/$target" "build-fuzz/findings/$target"
  dict=()
  [[ -f "tests/fuzz/$target.dict" ]] && dict=(-dict="tests/fuzz/$target.dict")
  echo "fuzz: $target ($seconds s)"
  # -timeout: one input running for seconds is a hang; -rss_limit_mb: a request must not need
  # more than this to be parsed or refused.
  if ! "$binary" "${mode[@]}" -max_total_time="$seconds" "${dict[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/findings/$target/" \
      "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" > "build-fuzz/findings/$target.log" 2>&1; then
    failed+=("$target")
    echo "fuzz: $target FAILED; its log, build-fuzz/findings/$target.log, ends:" >&2
    tail -n 60 "build-fuzz/findings/$target.log" >&2
  else
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^Done " "build-fuzz/findings/$target.log" || true
  fi
  # Fork mode's progress lines: executions, coverage, ooms/timeouts/crashes so far.
  if ((${#mode[@]})); then grep -E "^#[0-9]+: cov" "build-fuzz/findings/$target.log" | tail -n 1 || true; fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in: ${failed[*]} (inputs in build-fuzz/findings/)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no findings"
