#!/usr/bin/env bash
# Builds ferry here for sm_90 only (the GPU host's H200; build-gpu/, apart from the default
# build's every architecture) and packs the CLI and the test binaries, with the shared libraries
# the GPU host lacks, into .bundle/ (git-ignored) for the device tool to carry. cuBLAS is left
# out: it is ~600 MB and the GPU host has it (scripts/gpu_host_env.sh finds it there). The
# backends built here go where an installation has them (.bundle/lib/ferry/backends, found beside
# .bundle/bin/ferry), the tests' own backends to .bundle/test-backends. Binaries are stripped:
# the call that carries them is limited to 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/env.sh
cmake --preset default -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90-real >/dev/null
cmake --build build-gpu
rm -rf .bundle
mkdir -p .bundle
# The CLI and the test executables, one per layer and kind, with the libraries they load that the
# GPU host may lack (scripts/bundle_binary.sh); ferry_cpu_tests and ferry_gpu_tests name the
# targets that build them all, and are binaries only in a build tree from before the split.
programs=(build-gpu/bin/ferry)
for bin in build-gpu/tests/ferry_*_tests; do
  [[ $bin == */ferry_cpu_tests || $bin == */ferry_gpu_tests ]] || programs+=("$bin")
done
scripts/bundle_binary.sh .bundle "${programs[@]}"
mkdir -p .bundle/lib/ferry/backends .bundle/test-backends
cp build-gpu/lib/ferry/backends/libferry_backend_*.so .bundle/lib/ferry/backends/
cp build-gpu/tests/backends/libferry_backend_*.so .bundle/test-backends/
rm -f .bundle/lib/libcublas*.so*
# jemalloc, for serve-rate's allocator comparison (preloaded into `ferry serve` there only; the GPU
# host has none). ferry itself does not link it.
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [[ -e $jemalloc ]]; then cp "$jemalloc" .bundle/lib/; fi
strip --strip-unneeded .bundle/bin/* .bundle/lib/ferry/backends/*.so .bundle/test-backends/*.so 2>/dev/null || true
cp scripts/plot_bench.py scripts/plot_inputs.py scripts/plot_looks.py .bundle/bin/  # the script and what it imports
du -sh .bundle
