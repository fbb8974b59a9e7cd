#!/usr/bin/env bash
# The Python package on the GPU host, in one call (about 5 minutes):
#   scripts/gpu/python.sh OUTDIR
# Run from the repository root after `source scripts/gpu_host_env.sh` (the bundle's ferry on
# PATH), with .whl/ from `scripts/fetch_gpu_wheels.sh --python-only` (nanobind, scikit-build-core,
# pytest: the host has no network). It
#  1. builds the extension ferry._core and the libtorch backend plugin in one CMake tree
#     (build-python/, sm_90) against the host's Python 3.12 and PyTorch, while
#     scripts/export_model.py exports tests/python/tiny_model.py as an AOTInductor package;
#  2. runs tests/python (pytest): the GPU tests share data pointers with torch.from_dlpack (and
#     cupy.from_dlpack where CuPy is installed) for device, pinned, mapped and managed memory, run
#     the exported model through a ferry.Session against PyTorch eager, and run ferry.bench and
#     `ferry bench` on the same cell (both medians in OUTDIR/bench_python_vs_cli.json);
#  3. runs both examples (torch_from_ferry.py per strategy, compare_strategies.py with its plot).
# Everything lands in OUTDIR: steps.txt (each step with its time), the logs, pytest.txt and
# pytest.xml, the figures and the plot.
set -euo pipefail
out=${1:?usage: scripts/gpu/python.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
start=$SECONDS
step() { echo "[$((SECONDS - start)) s] $*" | tee -a "$out/steps.txt"; }

# Python, PyTorch and the build keep the host's own libraries: only the bundle's ferry runs with
# the bundle's (as scripts/gpu_host.sh does), through a wrapper the tests call as the CLI.
bundle=$PWD/.bundle
host_ld_path=$(tr ":" "\n" <<<"${LD_LIBRARY_PATH:-}" | { grep -vx "$bundle/lib" || true; } | paste -sd: -)
export LD_LIBRARY_PATH=$host_ld_path
printf '#!/usr/bin/env bash\nsource %q\nexec %q "$@"\n' "$PWD/scripts/gpu_host_env.sh" "$bundle/bin/ferry" \
  >/tmp/ferry-with-bundle && chmod +x /tmp/ferry-with-bundle

step "python: $(python3 --version 2>&1), $(command -v python3); torch $(python3 -c 'import torch; print(torch.__version__)')"
include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [[ ! -e $include/Python.h ]]; then
  step "no Python.h in $include: this Python has no development headers, so no extension can be built for it"
  exit 1
fi

# The build's Python tools, from the carried wheels, beside (not into) the host's environment.
site=/tmp/ferry-python-site
rm -rf "$site"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
  .whl/{nanobind,scikit_build_core,pathspec,packaging,pytest,pluggy,iniconfig,pygments}-*.whl
export PYTHONPATH=$site

step "export tests/python/tiny_model.py (background)"
(rc=0; python3 scripts/export_model.py --module tests/python/tiny_model.py:build --name tiny --out "$out/models" \
   --save-eager >"$out/export.log" 2>&1 || rc=$?; echo "$rc" >"$out/export.rc") &
exporter=$!

step "configure build-python"
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-python -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real \
  -DFERRY_BUILD_PYTHON=ON -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_APPS=OFF -DFERRY_BUILD_SERVE=OFF \
  -DPython_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$torch_prefix" >"$out/configure.log" 2>&1 ||
  { step "configure failed:"; tail -20 "$out/configure.log" | tee -a "$out/steps.txt"; exit 1; }
step "build ferry._core, its stubs and the torch backend"
cmake --build build-python --target ferry_python ferry_python_stub ferry_backend_torch >"$out/build.log" 2>&1 ||
  { step "build failed:"; grep -m 20 -E "error|FAILED" "$out/build.log" | tee -a "$out/steps.txt"; exit 1; }
cp build-python/python/ferry/_core.pyi "$out/"
wait "$exporter" || true
step "export finished with $(cat "$out/export.rc")"

export PYTHONPATH=$PWD/build-python/python:$site
export FERRY_BACKEND_PATH=$PWD/build-python/lib/ferry/backends
export FERRY_TEST_OUTDIR=$out FERRY_SOURCE_DIR=$PWD FERRY_BIN=/tmp/ferry-with-bundle
[[ $(cat "$out/export.rc") == 0 ]] && export FERRY_TORCH_MODEL=$out/models/tiny.pt2
python3 -c 'import ferry, json; print(json.dumps({"build": ferry.build_info, "devices": ferry.devices()}, indent=2))' \
  >"$out/devices.json" 2>"$out/import.log" || { step "import ferry failed:"; tee -a "$out/steps.txt" <"$out/import.log"; exit 1; }

# A model package in this Python process: PyTorch's own loader first (in a child, so a crash is a
# result), then ferry's session under gdb where the host has it, for a backtrace of any crash.
if [[ -n ${FERRY_TORCH_MODEL:-} ]]; then
  rc=0
  timeout 120 python3 -X faulthandler -c 'import sys, torch
m = torch._inductor.aoti_load_package(sys.argv[1])
print("torch loader:", m(torch.randn(16, 256, device="cuda")).shape)' "$FERRY_TORCH_MODEL" >"$out/torch_own_loader.txt" 2>&1 || rc=$?
  step "PyTorch's own aoti_load_package in this Python: rc=$rc, $(tail -1 "$out/torch_own_loader.txt")"
  if command -v gdb >/dev/null; then
    timeout 180 gdb -batch -ex run -ex bt -ex "info sharedlibrary" --args python3 -m pytest -x -p no:cacheprovider \
      tests/python/test_gpu_session.py -k torch_model >"$out/torch_session_gdb.txt" 2>&1 || true
    step "gdb: $(grep -m1 -E "SIG|passed|failed" "$out/torch_session_gdb.txt")"
  else
    step "no gdb on this host"
  fi
fi

# PYTEST_ARGS narrows the run (e.g. "-x tests/python/test_gpu_session.py"); the default is every test.
read -r -a pytest_args <<<"${PYTEST_ARGS:-tests/python}"
step "pytest ${pytest_args[*]}"
status=0
python3 -X faulthandler -m pytest -v -rs -p no:cacheprovider --junitxml "$out/pytest.xml" "${pytest_args[@]}" \
  >"$out/pytest.txt" 2>&1 || status=$?
step "pytest: $(tail -1 "$out/pytest.txt")"

for strategy in pinned mapped managed-prefetch device; do
  python3 examples/python/torch_from_ferry.py --strategy "$strategy" >>"$out/torch_from_ferry.txt" 2>&1 || status=1
done
step "torch_from_ferry.py: $(grep -c 'matches a torch tensor.s result: True' "$out/torch_from_ferry.txt") of 20 steps matched"
python3 examples/python/compare_strategies.py --size 0.6MB,19MB --strategy pinned,mapped,managed,device \
  --max-time 1 --out "$out/strategies.png" >"$out/compare_strategies.txt" 2>&1 || status=1
step "compare_strategies.py: $(tail -1 "$out/compare_strategies.txt")"
[[ -e $out/bench_python_vs_cli.json ]] && step "bench vs CLI: $(tr -d '\n ' <"$out/bench_python_vs_cli.json")"
step "done, status $status"
exit $status
