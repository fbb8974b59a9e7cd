"""What a view exports, checked on host memory a test owns (the views of ferry's own buffers and
sessions need a GPU: test_gpu_*.py)."""
from __future__ import annotations

import numpy as np
import pytest

import ferry
from ferry import View
from ferry import _view


def view_of(array, kind="pageable", **kwargs):
    return View(array.ctypes.data, array.shape, array.dtype, kind=kind, device=0, owner=array, **kwargs)


class FakeStream:
    """Stands in for a buffer's stream and ready event, recording what consumers asked of it."""

    ready_event = 0xE7
    stream = 0x5EA

    def __init__(self):
        self.synchronized = 0

    def synchronize(self):
        self.synchronized += 1


def test_numpy_is_the_memory_itself():
    memory = np.zeros((4, 8), np.float32)
    array = view_of(memory).numpy()
    array[1, 2] = 7.5
    assert memory[1, 2] == 7.5
    assert array.ctypes.data == memory.ctypes.data
    assert array.shape == (4, 8) and array.dtype == np.float32 and array.flags.writeable


def test_read_only_views_give_read_only_arrays():
    memory = np.arange(6, dtype=np.int32)
    array = view_of(memory, read_only=True).numpy()
    assert not array.flags.writeable
    with pytest.raises(ValueError):
        array[0] = 1
    assert not np.from_dlpack(view_of(memory, read_only=True)).flags.writeable


def test_an_array_keeps_the_memory_alive():
    memory = np.arange(16, dtype=np.float32)
    array = view_of(memory).numpy()
    del memory
    assert array[15] == 15.0  # the view, and through it the owner, are the array's base


@pytest.mark.parametrize(("kind", "device"), [("pageable", (1, 0)), ("host", (3, 0)), ("managed", (13, 0))])
def test_dlpack_device_by_kind_and_shared_pointer(kind, device):
    memory = np.arange(12, dtype=np.float16).reshape(3, 4)
    view = view_of(memory, kind=kind)
    assert view.__dlpack_device__() == device
    imported = np.from_dlpack(view)  # NumPy takes CPU, CUDA-host and managed memory
    assert imported.ctypes.data == memory.ctypes.data
    assert imported.dtype == np.float16 and imported.shape == (3, 4)


def test_device_memory_is_kdlcuda_and_not_numpy():
    memory = np.zeros(4, np.float32)  # stands for device memory: only its description is read
    view = view_of(memory, kind="device")
    assert view.__dlpack_device__() == (2, 0)
    with pytest.raises(ferry.UnsupportedError, match="device memory"):
        view.numpy()


def test_cuda_array_interface_v3_where_the_gpu_can_reach_it():
    memory = np.zeros((2, 3), np.float32)
    assert not hasattr(view_of(memory), "__cuda_array_interface__")  # pageable
    interface = view_of(memory, kind="managed", ready=FakeStream()).__cuda_array_interface__
    assert interface["version"] == 3
    assert interface["shape"] == (2, 3) and interface["typestr"] == "<f4"
    assert interface["data"] == (memory.ctypes.data, False)
    assert interface["stream"] == FakeStream.stream
    assert view_of(memory, kind="device").__cuda_array_interface__["stream"] is None  # nothing pending


def test_as_cuda_exports_kdlcuda_and_refuses_pageable_memory():
    memory = np.zeros(8, np.float32)
    assert view_of(memory, kind="managed").as_cuda().__dlpack_device__() == (2, 0)
    with pytest.raises(ferry.UnsupportedError, match="ferry.pin"):
        view_of(memory).as_cuda()


def test_consumer_streams_are_ordered_after_ferrys(monkeypatch):
    waits = []
    monkeypatch.setattr(_view._core, "_stream_wait_event", lambda stream, event: waits.append((stream, event)))
    memory = np.zeros(8, np.float32)
    ready = FakeStream()
    device_view = view_of(memory, kind="managed", ready=ready)

    device_view.__dlpack__(stream=0x1234)
    device_view.__dlpack__()  # None: the legacy default stream (1), as the array API says
    device_view.__dlpack__(stream=-1)  # the consumer asked for no ordering
    assert waits == [(0x1234, FakeStream.ready_event), (1, FakeStream.ready_event)]
    with pytest.raises(ferry.InvalidArgumentError, match="ambiguous"):
        device_view.__dlpack__(stream=0)

    host_view = view_of(memory, kind="host", ready=ready)
    host_view.__dlpack__()  # the consumer is the CPU: it waits for the stream
    assert ready.synchronized == 1 and len(waits) == 2


def test_a_view_past_its_validity_says_why():
    memory = np.zeros(4, np.float32)
    view = view_of(memory, valid=lambda: "the request went back to its session")
    for use in (view.numpy, view.__dlpack__, view.as_cuda):
        with pytest.raises(ferry.Error, match="went back to its session"):
            use()


def test_bfloat16_needs_ml_dtypes_for_numpy(monkeypatch):
    memory = np.zeros(4, np.uint16)
    view = View(memory.ctypes.data, (4,), "bfloat16", kind="pageable", device=0, owner=memory)
    assert view.nbytes == 8
    monkeypatch.setitem(__import__("sys").modules, "ml_dtypes", None)
    with pytest.raises(ferry.UnsupportedError, match="ml_dtypes"):
        view.numpy()
    assert np.from_dlpack is not None and view.__dlpack_device__() == (1, 0)
