"""ferry.pin registers on entry and unregisters on every way out of its block."""
from __future__ import annotations

import numpy as np
import pytest

import ferry
from ferry import _pin


class FakeRegistration:
    """Stands in for cudaHostRegister/cudaHostUnregister (ferry._core._Registration) and records them."""

    log: list = []

    def __init__(self, address, nbytes, device):
        self.active = True
        FakeRegistration.log.append(("register", address, nbytes, device))

    def release(self):
        if self.active:
            FakeRegistration.log.append(("unregister",))
        self.active = False


@pytest.fixture
def registrations(monkeypatch):
    FakeRegistration.log = []
    monkeypatch.setattr(_pin, "_register", FakeRegistration)
    return FakeRegistration.log


def test_registers_the_arrays_bytes_and_unregisters_at_the_end(registrations):
    frames = np.zeros((4, 16), np.float32)
    with ferry.pin(frames, device=1) as pinned:
        assert registrations == [("register", frames.ctypes.data, frames.nbytes, 1)]
        assert pinned.kind == "host" and pinned.__dlpack_device__() == (3, 0)
        assert pinned.numpy().ctypes.data == frames.ctypes.data
        assert pinned.shape == (4, 16) and pinned.dtype == "float32"
    assert registrations[-1] == ("unregister",)


def test_unregisters_when_the_block_raises(registrations):
    with pytest.raises(KeyError):
        with ferry.pin(np.zeros(8, np.uint8)):
            raise KeyError("the caller's own failure")
    assert [entry[0] for entry in registrations] == ["register", "unregister"]


def test_the_view_is_invalid_after_the_block(registrations):
    with ferry.pin(np.zeros(8, np.float32)) as pinned:
        pass
    with pytest.raises(ferry.Error, match="no longer pinned"):
        pinned.numpy()


def test_buffer_protocol_objects_are_pinned_as_bytes(registrations):
    memory = bytearray(64)
    with ferry.pin(memory) as pinned:
        assert pinned.shape == (64,) and pinned.dtype == "uint8"
    assert len(registrations) == 2


@pytest.mark.parametrize(("array", "words"), [
    (np.zeros((8, 8), np.float32)[:, ::2], "C-contiguous"),
    (np.frombuffer(b"\0" * 16, np.uint8), "writable"),
    (np.zeros(0, np.float32), "at least one byte"),
])
def test_memory_it_cannot_pin_is_refused_before_registering(registrations, array, words):
    with pytest.raises(ferry.InvalidArgumentError, match=words):
        with ferry.pin(array):
            pass
    assert registrations == []
