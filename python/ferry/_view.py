"""View: a typed window on memory ferry owns or registered, exported without a copy.

A view knows what its memory is (``kind``) and exports it by the protocols that fit:

========== ================================= =================== ============================
kind       memory                            ``__dlpack_device__`` NumPy / CUDA array interface
========== ================================= =================== ============================
pageable   ordinary host memory              (kDLCPU, 0)         NumPy; no CUDA interface
host       page-locked host memory: pinned,  (kDLCUDAHost, 0)    NumPy; CUDA interface at the
           mapped or registered                                  GPU's address of it
managed    cudaMallocManaged                 (kDLCUDAManaged, d) NumPy and CUDA interface
device     device memory                     (kDLCUDA, d)        CUDA interface only
========== ================================= =================== ============================

Every export first orders the consumer after ferry's work on the memory: ``__dlpack__(stream=S)``
makes stream S wait for ferry's stream with an event (no host blocking); ``stream=None`` means the
legacy default stream for device and managed memory (the array API's rule) and a blocking wait
for host memory (the consumer is the CPU); ``stream=-1`` skips it. ``__cuda_array_interface__``
(version 3) carries ferry's stream in its ``stream`` field for the consumer to synchronise on.

PyTorch refuses kDLCUDAHost and kDLCUDAManaged in ``torch.from_dlpack``; ``as_cuda()`` exports
the same memory as kDLCUDA at the address kernels use, which is what the GPU dereferences for
mapped, registered and managed memory alike (reads of host memory then cross the link; managed
pages migrate on access).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _core
from ._dtypes import canonical, dlpack_type, numpy_dtype
from .errors import Error, InvalidArgumentError, UnsupportedError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
_DLPACK_TYPE = {"pageable": KDL_CPU, "host": KDL_CUDA_HOST, "managed": KDL_CUDA_MANAGED, "device": KDL_CUDA}
_LEGACY_DEFAULT_STREAM = 1


class _ArrayInterface:
    """What NumPy reads ``__array_interface__`` from; the array it makes keeps this (and so the
    view and the memory's owner) alive."""

    def __init__(self, view: View, interface: dict[str, Any]):
        self.view = view
        self.__array_interface__ = interface


class View:
    """A typed window on memory ferry owns or registered (see the module's table).

    Views come from :class:`ferry.Buffer` (``host``, ``gpu``), from a request of a
    :class:`ferry.Session` (``inputs``, ``outputs``) and from :func:`ferry.pin`. A view is valid
    for as long as its source says (a request's views while the request holds its slot in the
    right state, a pinned view until the ``with`` block ends); using it later raises
    :class:`ferry.Error` naming why. Arrays already taken from it keep the memory alive but may
    see it reused: copy what you keep.
    """

    def __init__(self, address: int, shape, dtype, *, kind: str, device: int, owner: Any,
                 read_only: bool = False, ready: Any = None, valid: Callable[[], str | None] | None = None,
                 export_as: int | None = None):
        if kind not in _DLPACK_TYPE:
            raise InvalidArgumentError(f"unknown memory kind '{kind}'")
        self._address = int(address)
        self._shape = tuple(int(d) for d in shape)
        self._dtype = canonical(dtype)
        self._kind = kind
        self._device = int(device)
        self._owner = owner
        self._read_only = read_only
        self._ready = ready  # has .ready_event, .stream and .synchronize(), or None: nothing pending
        self._valid = valid
        self._dl_type = _DLPACK_TYPE[kind] if export_as is None else export_as

    # -- what it is ---------------------------------------------------------------------------
    @property
    def address(self) -> int:
        """The address of the first byte (the host's for host memory, unless ``as_cuda()``)."""
        return self._address

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> str:
        """The element type's NumPy name ("float32", "float16", "bfloat16", ...)."""
        return self._dtype

    @property
    def nbytes(self) -> int:
        return math.prod(self._shape) * dlpack_type(self._dtype)[1] // 8

    @property
    def kind(self) -> str:
        """What the memory is: "pageable", "host" (page-locked), "managed" or "device"."""
        return self._kind

    @property
    def device(self) -> int:
        """The GPU the memory belongs to or was made for."""
        return self._device

    @property
    def read_only(self) -> bool:
        return self._read_only

    def __repr__(self) -> str:
        return (f"ferry.View(shape={self._shape}, dtype={self._dtype}, kind={self._kind}, device={self._device}"
                f"{', read-only' if self._read_only else ''})")

    def _check(self) -> None:
        if self._valid is not None and (why := self._valid()) is not None:
            raise Error(why)

    # -- NumPy ---------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The memory as a NumPy array, without a copy (writable unless the view is read-only).

        Device memory has no host address: read it through ``__dlpack__`` (torch, CuPy) instead.
        """
        self._check()
        if self._kind == "device" or self._dl_type == KDL_CUDA:
            raise UnsupportedError("this view is device memory (or exported as it): NumPy cannot read it; use "
                                   "torch.from_dlpack / cupy.from_dlpack, or the buffer's host view")
        self._wait_host()
        dtype = numpy_dtype(self._dtype)
        interface = {"version": 3, "shape": self._shape, "typestr": dtype.str, "descr": dtype.descr,
                     "data": (self._address, self._read_only), "strides": None}
        return np.asarray(_ArrayInterface(self, interface)).view(dtype)

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        if copy:
            array = array.copy()
        return array if dtype is None else array.astype(dtype, copy=False)

    # -- DLPack --------------------------------------------------------------------------------
    def __dlpack_device__(self) -> tuple[int, int]:
        device_id = self._device if self._dl_type in (KDL_CUDA, KDL_CUDA_MANAGED) else 0
        return self._dl_type, device_id

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None):
        """A DLPack capsule of this memory (no copy), after ordering ``stream`` behind ferry's work."""
        self._check()
        self._order_consumer(stream)
        code, bits = dlpack_type(self._dtype)
        device_type, device_id = self.__dlpack_device__()
        source = _core._dlpack_source(self._address, list(self._shape), code, bits, device_type, device_id,
                                      self._read_only, self)
        return source.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    def _order_consumer(self, stream: int | None) -> None:
        if self._ready is None or stream == -1:
            return
        if stream == 0:
            raise InvalidArgumentError("stream 0 is ambiguous in DLPack: pass 1 for the legacy default stream, "
                                       "2 for the per-thread one, or the stream's handle")
        if stream is None:
            if self._dl_type in (KDL_CPU, KDL_CUDA_HOST):
                self._ready.synchronize()  # the consumer is the CPU
                return
            stream = _LEGACY_DEFAULT_STREAM
        _core._stream_wait_event(int(stream), self._ready.ready_event)

    def _wait_host(self) -> None:
        if self._ready is not None:
            self._ready.synchronize()

    # -- CUDA array interface -------------------------------------------------------------------
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """Version 3, at the address kernels use; ``stream`` is ferry's (None: nothing pending)."""
        if self._kind == "pageable" and self._dl_type != KDL_CUDA:
            raise AttributeError("pageable host memory has no CUDA address (register it with ferry.pin)")
        self._check()
        dtype = numpy_dtype(self._dtype)
        return {"version": 3, "shape": self._shape, "typestr": dtype.str, "descr": dtype.descr,
                "data": (self._gpu_address(), self._read_only), "strides": None,
                "stream": self._ready.stream if self._ready is not None else None}

    def _gpu_address(self) -> int:
        if self._kind == "host" and self._dl_type != KDL_CUDA:
            return _core._device_address_of_host(self._address)
        return self._address

    def as_cuda(self) -> View:
        """The same memory exported as CUDA device memory (kDLCUDA) at the address kernels use.

        For consumers that take only kDLCUDA, such as ``torch.from_dlpack``, which refuses pinned
        (kDLCUDAHost) and managed (kDLCUDAManaged) memory: the GPU reads and writes page-locked
        host memory in place over the link, and managed pages migrate where they are touched, so
        the tensor is correct, only its accesses cost what the memory's kind costs.
        """
        self._check()
        if self._kind == "pageable":
            raise UnsupportedError("pageable host memory has no CUDA address: register it with ferry.pin first")
        return View(self._gpu_address(), self._shape, self._dtype, kind=self._kind, device=self._device,
                    owner=self, read_only=self._read_only, ready=self._ready, valid=self._valid,
                    export_as=KDL_CUDA)
