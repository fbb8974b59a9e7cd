"""The machine: its GPUs, ``ferry info``'s record, and why there is no usable GPU."""
from __future__ import annotations

import json
from typing import Any

from . import _core


def devices() -> list[dict[str, Any]]:
    """Every usable GPU as ``ferry info`` describes it (capabilities, platform class, which
    strategies work or why not, the platform's advice), as plain dicts; ``[]`` without one
    (``no_device_reason()`` says why)."""
    return json.loads(_core._devices_json())


def info(measure: bool = False, *, device: int | None = None, profile: str | None = None,
         backend_directory: str | None = None) -> dict[str, Any]:
    """``ferry info --json``'s record as a dict: CUDA versions, each GPU with its strategies and
    advice (measured on this machine where a profile is), the backends found.

    ``measure=True`` is ``ferry info --measure``: a quick calibration first (saving the GPU's
    profile, seconds) and the pinned link peak. Without a GPU the record is
    ``{"devices": [], "no_device_reason": "no CUDA device: ...", "backends": [...]}``.
    """
    return json.loads(_core._info_json(measure, device, profile, backend_directory or ""))


def no_device_reason() -> str | None:
    """Why there is no usable GPU, in the CLI's words ("no CUDA device: ..."), or None."""
    return _core.no_device_reason() or None
