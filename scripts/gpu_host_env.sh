# shellcheck shell=bash
# Sourced on the GPU host before running a bundle from scripts/gpu_bundle.sh: the bundle's own
# libraries first, then cuBLAS from the CUDA toolkit or from PyTorch's wheels, whichever exists.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
libs="$root/.bundle/lib"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -e $d/libcublas.so.13 ]] && libs="$libs:$d"
done
site=$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
for d in "$site"/nvidia/cu13/lib "$site"/nvidia/cublas/lib; do
  [[ -e $d/libcublas.so.13 ]] && libs="$libs:$d"
done
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FERRY_PLOT_SCRIPT="$root/scripts/plot_bench.py"
export PATH="$root/.bundle/bin:$PATH"
