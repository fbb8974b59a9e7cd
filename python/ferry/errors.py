"""ferry's exceptions, mirroring the C++ hierarchy of ``ferry/core/error.hpp``.

::

    Error                       ferry::error: every error ferry raises on purpose
    ├── InvalidArgumentError    ferry::invalid_argument: bad input (also a ValueError)
    ├── UnsupportedError        ferry::unsupported: the platform cannot do what was asked
    ├── NoDeviceError           ferry::no_device: no usable GPU; the message names the cause
    └── CudaError               ferry::cuda_error: a CUDA call failed (``code``, ``code_name``)
        └── OutOfMemoryError    ferry::out_of_memory (also a MemoryError)

The CLI's exit codes follow the same classes: 2 for InvalidArgumentError, 3 for UnsupportedError
and NoDeviceError, 1 for the others.
"""
from __future__ import annotations


class Error(RuntimeError):
    """Base of every error ferry raises on purpose (C++ ``ferry::error``)."""


class InvalidArgumentError(Error, ValueError):
    """Bad input from the caller: an unknown name, a wrong size, an out-of-range option."""


class UnsupportedError(Error):
    """The platform cannot do what was asked (a strategy it lacks, memory it cannot register).

    Raised instead of silently falling back to something slower.
    """


class NoDeviceError(Error):
    """No usable CUDA device; the message names the cause, as the CLI's does.

    ``no CUDA device: <the cause>``: no driver, no device node, a driver too old, or GPUs hidden
    by ``CUDA_VISIBLE_DEVICES``.
    """


class CudaError(Error):
    """A CUDA runtime call failed; ``code`` and ``code_name`` are CUDA's."""

    code: int | None = None
    code_name: str | None = None


class OutOfMemoryError(CudaError, MemoryError):
    """A CUDA allocation failed for lack of memory (device, pinned or managed)."""


__all__ = ["Error", "InvalidArgumentError", "UnsupportedError", "NoDeviceError", "CudaError", "OutOfMemoryError"]
