"""ferry.pin: page-locks memory the caller already has for the length of a ``with`` block."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from . import _core
from ._view import View
from .errors import InvalidArgumentError

# The registration's maker, a module attribute so tests without a GPU can stand in for CUDA.
_register = _core._Registration


@contextlib.contextmanager
def pin(array, *, device: int = 0) -> Iterator[View]:
    """Registers ``array``'s memory with CUDA (cudaHostRegister, portable and mapped) for the block.

    ::

        frames = np.empty((64, 3, 224, 224), np.float32)
        with ferry.pin(frames) as pinned:          # page-locked until the block ends
            tensor = torch.from_dlpack(pinned.as_cuda())   # the GPU reads it in place

    The view exports the memory as kDLCUDAHost (``as_cuda()`` as kDLCUDA at its GPU address). The
    memory is unregistered when the block ends, also when it ends with an exception; the view is
    invalid from then on. ``array`` must be a writable, C-contiguous NumPy array (or an object
    with the buffer protocol), not already registered, and must outlive the block.
    """
    data = array if isinstance(array, np.ndarray) else np.frombuffer(array, dtype=np.uint8)
    if not data.flags.c_contiguous:
        raise InvalidArgumentError("ferry.pin needs C-contiguous memory (np.ascontiguousarray makes a copy)")
    if not data.flags.writeable:
        raise InvalidArgumentError("ferry.pin needs writable memory")
    if data.nbytes == 0:
        raise InvalidArgumentError("ferry.pin needs at least one byte")
    address = data.__array_interface__["data"][0]
    registration = _register(address, data.nbytes, device)

    def still_registered() -> str | None:
        return None if registration.active else "this memory is no longer pinned: its ferry.pin block has ended"

    try:
        yield View(address, data.shape, data.dtype, kind="host", device=device, owner=data,
                   read_only=False, valid=still_registered)
    finally:
        registration.release()
