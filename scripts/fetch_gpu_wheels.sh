#!/usr/bin/env bash
# Downloads into .whl/ (git-ignored) the Python wheels the GPU host lacks for
# the serve and serve-suite sets of scripts/gpu_host.sh, for its python 3.12 on x86-64 (the device README's recipe):
#   perf-analyzer   Triton's load generator; a Python wrapper around a prebuilt binary that needs
#                   glibc >= 2.38 (why it cannot run on the development machine). It needs no
#                   Python package: it speaks HTTP/gRPC itself and dlopens libcudart.so for
#                   --shared-memory cuda.
#   tritonclient    the serve test suite's client, [http,grpc] with their dependencies, at the
#                   versions scripts/setup.sh installs here (build-tools/venv);
#   cuda-bindings   what tritonclient.utils.cuda_shared_memory imports (cuda.bindings.runtime),
#                   for tests/serve/test_cuda_shm.py, in the CUDA 13.0 series of the host's driver;
#   nanobind, scikit-build-core (with pathspec), pytest (with pluggy, iniconfig, pygments)
#                   what scripts/gpu/python.sh builds and tests the Python package with, at the
#                   versions scripts/setup.sh installs here (exceptiongroup and tomli only satisfy
#                   the requirement check below: Python 3.12 does not use them).
# numpy and ml_dtypes are left out: the host's python has them (numpy 2.5.x for PyTorch, ml_dtypes
# for JAX), a second copy on PYTHONPATH would shadow theirs, and the wheels travel within a 64 MiB
# limit shared with the bundle: carry .bundle/lib, .bundle/bin/ferry and .whl (about 62 MiB with
# the working tree), not the whole .bundle with its test binaries.
# On the GPU host, before using them:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#     --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
#   scripts/fetch_gpu_wheels.sh [--without-cuda-bindings | --python-only]   (here; re-running replaces .whl/)
# --without-cuda-bindings saves 12 MB of the carry limit; test_cuda_shm then skips, saying so
# (unless the host has cuda-bindings of its own). --python-only fetches only the Python package's
# wheels (about 3 MB), for a call that carries nothing of the serve sets.
set -euo pipefail
cd "$(dirname "$0")/.."
with_cuda_bindings=1
serve_wheels=1
[[ ${1:-} == --without-cuda-bindings ]] && with_cuda_bindings=0
[[ ${1:-} == --python-only ]] && { with_cuda_bindings=0; serve_wheels=0; }

python_wheels=(
  nanobind==2.15.0 scikit-build-core==1.1.2 pathspec==1.1.1 packaging==26.4
  pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 pygments==2.21.0 exceptiongroup==1.3.1 tomli==2.4.0
  typing_extensions==4.16.0
)
wheels=("${python_wheels[@]}")
((serve_wheels)) && wheels+=(
  perf-analyzer==2.60.0
  tritonclient==2.73.0
  python-rapidjson==1.25 urllib3==2.8.0
  geventhttpclient==2.6.1 gevent==26.9.0 greenlet==3.3.2 zope.event==6.2 zope.interface==8.7
  brotli==1.2.1 certifi==2026.10.19.post1
  grpcio==1.85.3 protobuf==6.33.6
)
((with_cuda_bindings)) && wheels+=("cuda-bindings==13.0.*" "cuda-pathfinder>=1.1,<2")
# pip matches manylinux tags exactly: list every glibc level up to the host's (2.39; perf-analyzer
# ships only manylinux_2_38).
platforms=()
for n in 17 24 27 28 31 34 35 38 39; do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
platforms+=(--platform manylinux2014_x86_64 --platform manylinux1_x86_64)

rm -rf .whl
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d .whl "${wheels[@]}"

# Every requirement of what came (Windows-only ones aside) must be among the wheels or on the host
# already (numpy, ml_dtypes), so the --no-deps install there cannot leave an import broken.
normalize() { tr 'A-Z_.' 'a-z--'; }
have=$(for f in .whl/*.whl; do basename "$f" | cut -d- -f1; done | normalize | sort -u)
missing=0
for f in .whl/*.whl; do
  while read -r name; do
    n=$(echo "$name" | normalize)
    [[ $n == numpy || $n == ml-dtypes ]] && continue
    grep -qx "$n" <<<"$have" || { echo "fetch_gpu_wheels: $(basename "$f") needs $name, which is not in .whl/"; missing=1; }
  done < <(unzip -p "$f" '*/METADATA' | grep '^Requires-Dist:' | grep -v 'extra ==' |
           grep -v 'sys_platform == "win32"' | sed -E 's/^Requires-Dist: *([A-Za-z0-9_.-]+).*/\1/' | sort -u)
done
ls .whl
du -sh .whl
exit $missing
