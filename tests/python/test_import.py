"""The package imports everywhere; without a GPU every first use says why, in the CLI's words."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

import ferry


def test_imports_and_describes_its_build():
    assert ferry.build_info["cuda_runtime"].count(".") == 1
    assert ferry.build_info["cuda_architectures"]
    assert ferry.build_info["backend_api"] >= 1
    names = [s["name"] for s in ferry.strategies()]
    assert names[:3] == ["pageable", "staged", "pinned"] and "managed-prefetch" in names and "device" in names
    assert names[-1] == "peer"  # registered after the built-ins
    assert {s["data_path"] for s in ferry.strategies()} == {"copy", "zero_copy", "migrate", "resident"}


@pytest.mark.no_gpu
def test_no_device_reason_is_the_clis(ferry_cli):
    reason = ferry.no_device_reason()
    assert reason.startswith("no CUDA device: ")
    cli = subprocess.run([ferry_cli, "bench", "--engine", "touch"], capture_output=True, text=True, check=False)
    assert cli.returncode == 3
    assert cli.stderr.strip() == f"ferry: {reason}"


@pytest.mark.no_gpu
@pytest.mark.parametrize("first_use", [
    lambda: ferry.Session("touch"),
    lambda: ferry.Session("mlp:2x256", strategy="managed", inflight=1),
    lambda: ferry.Buffer((1024,), strategy="pinned"),
    lambda: ferry.bench(engine="reduce", size="0.6MB", strategy="pinned"),
], ids=["session", "session-mlp", "buffer", "bench"])
def test_first_gpu_use_names_the_cause(first_use):
    with pytest.raises(ferry.NoDeviceError) as raised:
        first_use()
    assert str(raised.value) == ferry.no_device_reason()


@pytest.mark.no_gpu
def test_pin_without_a_gpu_names_the_cause():
    with pytest.raises(ferry.NoDeviceError, match="^no CUDA device: "):
        with ferry.pin(np.zeros(64, np.float32)):
            pytest.fail("the block must not run unpinned")


@pytest.mark.no_gpu
def test_devices_and_info_without_a_gpu():
    assert ferry.devices() == []
    record = ferry.info()
    assert record["devices"] == []
    assert record["no_device_reason"] == ferry.no_device_reason()
    assert isinstance(record["backends"], list)
