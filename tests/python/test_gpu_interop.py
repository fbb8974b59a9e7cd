"""ferry's buffers in PyTorch and CuPy on a GPU: the same memory (the data pointer is ferry's),
ordered after ferry's copies, for device, pinned, mapped and managed memory."""
from __future__ import annotations

import numpy as np
import pytest

import ferry
from ferry import _core

pytestmark = pytest.mark.gpu

STRATEGIES = ["device", "pinned", "mapped", "managed"]
EXPECTED_GPU_KIND = {"device": "device", "pinned": "device", "mapped": "host", "managed": "managed"}


def filled(strategy, value, shape=(4096, 4096)):
    buffer = ferry.Buffer(shape, "float32", strategy=strategy, direction="input")
    buffer.numpy()[:] = value
    buffer.to_device()
    return buffer


def cuda_view(buffer):
    return buffer.gpu if buffer.gpu.kind == "device" else buffer.as_cuda()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_buffer_kinds_and_dlpack_devices(strategy):
    buffer = ferry.Buffer((256,), "float32", strategy=strategy)
    assert buffer.gpu.kind == EXPECTED_GPU_KIND[strategy]
    expected = {"device": (2, 0), "host": (3, 0), "managed": (13, 0)}[buffer.gpu.kind]
    assert buffer.__dlpack_device__() == expected
    assert buffer.__cuda_array_interface__["stream"] == buffer.stream


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_torch_shares_the_pointer_and_waits_for_ferrys_copy(strategy):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    for value in (1.0, 2.0, 3.0):  # 64 MB each: a tensor read before the copy ended would differ
        buffer = filled(strategy, value)
        view = cuda_view(buffer)
        tensor = torch.from_dlpack(view)
        assert tensor.is_cuda and tensor.data_ptr() == view.address
        assert torch.all(tensor == value).item()


def test_torch_takes_pinned_host_memory_as_cuda():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    buffer = ferry.Buffer((1024,), "float32", strategy="pinned")
    buffer.numpy()[:] = np.arange(1024, dtype=np.float32)
    host = buffer.host
    assert host.kind == "host" and host.__dlpack_device__() == (3, 0)
    tensor = torch.from_dlpack(host.as_cuda())  # the GPU reads the pinned memory in place
    assert tensor.data_ptr() == host.as_cuda().address
    assert tensor.sum().item() == float(np.arange(1024).sum())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_cupy_shares_the_pointer(strategy):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    buffer = filled(strategy, 5.0, shape=(1024,))
    for source in (buffer, cuda_view(buffer)):
        try:
            array = cupy.from_dlpack(source)
        except (BufferError, TypeError, ValueError) as refused:  # a CuPy without kDLCUDAHost
            assert source.__dlpack_device__()[0] == 3, refused
            continue
        assert array.data.ptr == cuda_view(buffer).address
        assert float(array.sum()) == 5.0 * 1024
    assert cupy.asarray(buffer).data.ptr == buffer.__cuda_array_interface__["data"][0]


def test_pin_registers_for_the_block_only():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    frames = np.full((2048, 256), 4.0, np.float32)
    address = frames.ctypes.data
    assert _core._memory_kind(address)[0] == "pageable"
    with ferry.pin(frames) as pinned:
        assert _core._memory_kind(address)[0] == "host"
        tensor = torch.from_dlpack(pinned.as_cuda())
        assert torch.all(tensor == 4.0).item()
        torch.cuda.synchronize()
        del tensor
    assert _core._memory_kind(address)[0] == "pageable"
    with pytest.raises(RuntimeError):
        with ferry.pin(frames):
            raise RuntimeError("the block failed")
    assert _core._memory_kind(address)[0] == "pageable"
