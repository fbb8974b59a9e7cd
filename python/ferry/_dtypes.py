"""Element types: ferry's names (KServe's, as ``ferry/core/dtype.hpp`` writes them), NumPy's, DLPack's."""
from __future__ import annotations

import numpy as np

from .errors import InvalidArgumentError, UnsupportedError

# ferry/KServe name -> (NumPy name, DLPack type code, bits)
_FERRY = {
    "FP32": ("float32", 2, 32),
    "FP16": ("float16", 2, 16),
    "BF16": ("bfloat16", 4, 16),
    "INT8": ("int8", 0, 8),
    "UINT8": ("uint8", 1, 8),
    "INT32": ("int32", 0, 32),
    "INT64": ("int64", 0, 64),
    "BOOL": ("bool", 6, 8),
}
# DLPack codes of NumPy's kinds: int, uint, float, complex, bool.
_KIND_CODE = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


def from_ferry(name: str) -> str:
    """The NumPy name of a ferry dtype ("FP32" -> "float32")."""
    return _FERRY[name][0]


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype for a dtype name; bfloat16 needs ml_dtypes, which NumPy itself lacks."""
    if name == "bfloat16":
        try:
            import ml_dtypes  # noqa: PLC0415 - optional, only for bfloat16
        except ImportError:
            raise UnsupportedError("NumPy has no bfloat16: install ml_dtypes for NumPy views of bfloat16 "
                                   "tensors, or read them through __dlpack__ (torch.from_dlpack)") from None
        return np.dtype(ml_dtypes.bfloat16)
    try:
        return np.dtype(name)
    except TypeError:
        raise InvalidArgumentError(f"unknown dtype '{name}'") from None


def dlpack_type(name: str) -> tuple[int, int]:
    """(DLPack type code, bits) of a dtype name."""
    if name == "bfloat16":
        return 4, 16
    dtype = numpy_dtype(name)
    if dtype.kind not in _KIND_CODE:
        raise InvalidArgumentError(f"dtype '{name}' has no DLPack type")
    return _KIND_CODE[dtype.kind], dtype.itemsize * 8


def canonical(dtype) -> str:
    """A dtype name from a NumPy dtype, a type or a name ("float32", np.float16, "FP16", ...)."""
    if isinstance(dtype, str) and dtype in _FERRY:
        return _FERRY[dtype][0]
    if isinstance(dtype, str) and dtype == "bfloat16":
        return dtype
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise InvalidArgumentError(f"unknown dtype {dtype!r}") from None
    return "bfloat16" if resolved.name == "bfloat16" else resolved.name


def itemsize(name: str) -> int:
    return dlpack_type(name)[1] // 8
