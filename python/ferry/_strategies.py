"""The transfer strategies and their properties (``ferry/memory/strategy.hpp``)."""
from __future__ import annotations

from typing import Any

from . import _core


def strategies() -> list[dict[str, Any]]:
    """Every strategy: name, data path (copy, zero_copy, migrate, resident), whether it uses
    managed memory or wraps caller memory, and a one-line summary. Needs no GPU; which of them
    a GPU offers, and why not, is in ``devices()``."""
    return [dict(s) for s in _core._strategies()]
