"""A PyTorch model fed from ferry's buffers without a copy.

The CPU writes each batch into the buffer's host view (a NumPy array over ferry's memory), the
buffer's strategy makes it visible to the GPU (a DMA for pinned, nothing for mapped, a prefetch
for managed-prefetch), and torch.from_dlpack wraps the memory the GPU reads as a CUDA tensor:
no copy, and torch's stream waits for ferry's with an event. The model's output is checked
against the same model fed by an ordinary torch tensor.

    python examples/python/torch_from_ferry.py --strategy pinned
    python examples/python/torch_from_ferry.py --strategy mapped      # the GPU reads host memory
    python examples/python/torch_from_ferry.py --strategy managed-prefetch
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

import ferry


def gpu_tensor(buffer: ferry.Buffer) -> torch.Tensor:
    # Device memory is kDLCUDA, which torch takes as it is. torch refuses page-locked host
    # (kDLCUDAHost) and managed (kDLCUDAManaged) memory, so those go as_cuda(): the same bytes at
    # the address kernels use.
    return torch.from_dlpack(buffer.gpu if buffer.gpu.kind == "device" else buffer.as_cuda())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strategy", default="pinned", help="a ferry strategy (ferry.strategies())")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--features", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.features, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 10)).cuda().eval()
    batch = ferry.Buffer((args.batch, args.features), "float32", strategy=args.strategy, direction="input")
    rng = np.random.default_rng(0)
    with torch.inference_mode():
        for step in range(args.steps):
            batch.synchronize()  # the previous batch's copy is done: its host view may be rewritten
            batch.numpy()[:] = rng.standard_normal((args.batch, args.features), dtype=np.float32)
            batch.to_device()
            inputs = gpu_tensor(batch)
            assert inputs.data_ptr() == (batch.gpu.address if batch.gpu.kind == "device" else batch.as_cuda().address)
            scores = model(inputs).cpu()  # torch's stream waited for ferry's; .cpu() waits for torch's
            reference = model(torch.from_numpy(batch.numpy().copy()).cuda()).cpu()
            same = torch.allclose(scores, reference, rtol=1e-5, atol=1e-5)
            print(f"step {step}: {args.strategy} buffer -> model, no copy; matches a torch tensor's result: {same}")
            if not same:
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
