"""Shared by the Python package's tests: the `gpu` mark skips, saying why, without a usable GPU,
and `no_gpu` marks what only a machine without one can check (its messages)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import ferry

SOURCE_DIR = Path(os.environ.get("FERRY_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a usable CUDA GPU (skipped, saying why, without one)")
    config.addinivalue_line("markers", "no_gpu: checks what ferry says on a machine without a GPU")


def pytest_collection_modifyitems(config, items):
    reason = ferry.no_device_reason()
    for item in items:
        if "gpu" in item.keywords and reason:
            item.add_marker(pytest.mark.skip(reason=reason))
        if "no_gpu" in item.keywords and not reason:
            item.add_marker(pytest.mark.skip(reason="this machine has a GPU: the no-GPU messages cannot show"))


@pytest.fixture
def ferry_cli() -> str:
    """The ferry CLI: FERRY_BIN (ctest sets it to the build's) or `ferry` on PATH."""
    path = os.environ.get("FERRY_BIN") or shutil.which("ferry")
    if not path:
        pytest.skip("no ferry CLI: set FERRY_BIN or put ferry on PATH")
    return path


@pytest.fixture
def outdir() -> Path | None:
    """Where GPU tests leave their figures (FERRY_TEST_OUTDIR), or None."""
    value = os.environ.get("FERRY_TEST_OUTDIR")
    if not value:
        return None
    path = Path(value)
    path.mkdir(parents=True, exist_ok=True)
    return path
