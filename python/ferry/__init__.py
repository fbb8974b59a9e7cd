"""ferry: inference inputs to the GPU and results back, by the strategy that costs least.

Python bindings of ferry's C++ library (https://github.com/ -- see README.md): sessions with
in-flight slots over built-in workloads and model files, buffers of every transfer strategy
exported to NumPy, DLPack and the CUDA array interface without a copy, registration of memory
you already have, and ``ferry bench``'s measurements as plain data.

Importing needs no GPU; the first call that does raises :class:`NoDeviceError` naming the cause
(``no_device_reason()`` says it beforehand).
"""
from __future__ import annotations

from . import errors
from ._bench import BenchReport, bench, load_report
from ._buffer import Buffer
from ._core import _build_info
from ._devices import devices, info, no_device_reason
from ._pin import pin
from ._session import Request, Session
from ._strategies import strategies
from ._view import View
from .errors import (CudaError, Error, InvalidArgumentError, NoDeviceError, OutOfMemoryError,
                     UnsupportedError)

__version__ = "0.1.0"
build_info: dict = dict(_build_info())
"""What this build has: its CUDA runtime, the GPU architectures it has code for, the backend API."""

__all__ = [
    "BenchReport", "Buffer", "CudaError", "Error", "InvalidArgumentError", "NoDeviceError", "OutOfMemoryError",
    "Request", "Session", "UnsupportedError", "View", "bench", "build_info", "devices", "errors", "info",
    "load_report", "no_device_reason", "pin", "strategies",
]
