"""Buffer: one tensor's memory under one transfer strategy (``ferry/memory/buffer.hpp``)."""
from __future__ import annotations

import math
from typing import Any

from . import _core
from ._dtypes import canonical, itemsize
from ._view import View
from .errors import InvalidArgumentError


class Buffer:
    """One tensor's memory under a strategy: a host view the CPU writes and reads, and the memory
    the GPU reads, with the strategy's copies between them on a stream of the buffer's own.

    ``Buffer((16, 3, 224, 224), "float32", strategy="pinned")`` is pinned host memory plus device
    memory; "mapped" is one page-locked host allocation the GPU reads in place; "managed" one
    managed allocation; "device" device memory with a pinned staging view. ``ferry.strategies()``
    lists them all; a strategy the GPU cannot do is refused with the reason.

    The buffer exports its GPU side (``gpu``) by DLPack and the CUDA array interface, so
    ``torch.from_dlpack(buffer)`` is a tensor over ferry's memory, ordered after ``to_device()``.
    """

    def __init__(self, shape, dtype: Any = "float32", *, strategy: str = "pinned", device: int = 0,
                 direction: str = "inout", allow_oversubscription: bool = False):
        self._shape = tuple(int(d) for d in ((shape,) if isinstance(shape, int) else shape))
        if any(d <= 0 for d in self._shape):
            raise InvalidArgumentError(f"a buffer's dims must be positive, not {self._shape}")
        self._dtype = canonical(dtype)
        nbytes = math.prod(self._shape) * itemsize(self._dtype)
        self._core = _core._Buffer(nbytes, strategy, device, direction, allow_oversubscription)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def nbytes(self) -> int:
        return self._core.bytes

    @property
    def strategy(self) -> str:
        return self._core.strategy

    @property
    def device(self) -> int:
        return self._core.device

    @property
    def stream(self) -> int:
        """ferry's stream for this buffer's copies (a cudaStream_t as an integer)."""
        return self._core.stream

    def _view(self, address: int) -> View:
        kind, _ = _core._memory_kind(address)
        return View(address, self._shape, self._dtype, kind=kind, device=self.device, owner=self, ready=self._core)

    @property
    def host(self) -> View:
        """What the CPU writes (inputs) and reads (outputs): pageable, page-locked or managed memory."""
        return self._view(self._core.host_address)

    @property
    def gpu(self) -> View:
        """What the GPU reads: device memory, the mapped host memory itself, or the managed memory."""
        return self._view(self._core.device_address)

    def numpy(self):
        """The host view as a writable NumPy array, without a copy."""
        return self.host.numpy()

    def to_device(self) -> None:
        """Makes what the CPU wrote visible to the GPU (the strategy's copy or prefetch, or nothing),
        on the buffer's stream; consumers of ``gpu`` are ordered after it."""
        self._core.to_device()

    def to_host(self) -> None:
        """Makes what the GPU wrote visible in the host view; returns once it is."""
        self._core.to_host()

    def synchronize(self) -> None:
        """Waits for every copy enqueued on the buffer's stream."""
        self._core.synchronize()

    def as_cuda(self) -> View:
        """The GPU side exported as kDLCUDA (for ``torch.from_dlpack``; see ``View.as_cuda``)."""
        return self.gpu.as_cuda()

    def __dlpack__(self, **kwargs):
        return self.gpu.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.gpu.__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self.gpu.__cuda_array_interface__

    def __repr__(self) -> str:
        return f"ferry.Buffer(shape={self._shape}, dtype={self._dtype}, strategy={self.strategy}, device={self.device})"
