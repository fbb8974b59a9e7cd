#!/usr/bin/env bash
# Whether this machine can run CUDA at all, asked before minutes of building: an NVIDIA driver
# (libcuda.so.1 where the loader finds it, or an nvidia-smi that lists a GPU), a GPU device node
# (/dev/nvidia*; /dev/dxg under WSL) and CUDA_VISIBLE_DEVICES not hiding every GPU. Silent with exit 0
# where they are; else one line "no CUDA device: <why>", worded as ferry's own, and exit 3. ferry
# itself then checks what a script cannot (the driver's CUDA version, the GPU's architecture).
#   scripts/gpu_check.sh
set -uo pipefail

driver_library() {
  local ldconfig dir
  ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
  [[ -x $ldconfig ]] && "$ldconfig" -p 2>/dev/null | grep -q '^[[:space:]]*libcuda\.so\.1 ' && return 0
  local IFS=:
  for dir in ${LD_LIBRARY_PATH:-} /usr/lib/wsl/lib; do
    [[ -n $dir && -e $dir/libcuda.so.1 ]] && return 0
  done
  return 1
}

device_nodes() {
  local node
  for node in /dev/nvidiactl /dev/nvidia[0-9]* /dev/dxg; do
    [[ -e $node ]] && return 0
  done
  return 1
}

smi_lists_a_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

in_container="; in a container, start it with the GPU (e.g. docker run --gpus all)"
if ! driver_library && ! smi_lists_a_gpu; then
  if device_nodes; then
    echo "no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)$in_container"
  else
    echo "no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded) and there is no" \
      "/dev/nvidia* device node$in_container"
  fi
  exit 3
fi
if ! device_nodes; then
  echo "no CUDA device: the NVIDIA driver is installed but there is no /dev/nvidia* device node: its kernel" \
    "module is not loaded, or this container was started without the GPU"
  exit 3
fi
if [[ ${CUDA_VISIBLE_DEVICES+set} == set && ( -z $CUDA_VISIBLE_DEVICES || $CUDA_VISIBLE_DEVICES == -1 ) ]]; then
  echo "no CUDA device: CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' hides every GPU of this machine (unset it," \
    "or name a GPU that exists)"
  exit 3
fi
if command -v nvidia-smi >/dev/null && ! smi_lists_a_gpu; then
  echo "no CUDA device: nvidia-smi lists no GPU ($(nvidia-smi -L 2>&1 | head -1))"
  exit 3
fi
exit 0
