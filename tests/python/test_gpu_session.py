"""Sessions on a GPU: every strategy gives the engine's results, requests keep their own data,
the typestate holds, and a torch model run through a session matches PyTorch eager."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ferry

pytestmark = pytest.mark.gpu


def available_strategies():
    if ferry.no_device_reason():
        return ["pinned"]  # collected only: every test here skips without a GPU
    return [s["name"] for s in ferry.devices()[0]["strategies"] if s["available"]]


@pytest.mark.parametrize("strategy", available_strategies())
def test_touch_gives_its_results_under_every_strategy(strategy):
    session = ferry.Session("touch", strategy=strategy, inflight=2, size="1MB")
    rng = np.random.default_rng(1)
    for _ in range(3):
        with session.request() as r:
            values = rng.standard_normal(r.inputs["input"].shape, dtype=np.float32)
            r.inputs["input"].numpy()[:] = values
            r.run()
            np.testing.assert_array_equal(r.outputs["output"].numpy(), values * 2 + 1)


def test_graphs_on_auto_are_measured_at_warmup_and_answers_stay_right():
    session = ferry.Session("touch", strategy="pinned", inflight=2, size="64KB", graph="auto")
    assert session.graph == (False, "")  # nothing captured before the first warm-up
    session.warmup()
    active, figures = session.graph
    assert "us per request with CUDA graphs" in figures
    assert figures.endswith("kept") == active, figures
    with session.request() as r:
        r.inputs["input"].numpy()[:] = 3.0
        r.run()
        assert np.all(r.outputs["output"].numpy() == 7.0)


def test_views_say_what_memory_they_are():
    expected = {"pageable": "pageable", "pinned": "host", "mapped": "host", "managed": "managed", "device": "host"}
    for strategy, kind in expected.items():
        with ferry.Session("touch", strategy=strategy, inflight=1, size="64KB").request() as r:
            assert r.inputs["input"].kind == kind, strategy


def test_requests_in_flight_keep_their_own_data():
    session = ferry.Session("touch", strategy="pinned", inflight=2, size="4MB")
    first, second = session.request(), session.request()
    first.inputs["input"].numpy()[:] = 1.0
    second.inputs["input"].numpy()[:] = 2.0
    first.submit()
    second.submit()
    second.wait()
    first.wait()
    assert np.all(first.outputs["output"].numpy() == 3.0)
    assert np.all(second.outputs["output"].numpy() == 5.0)
    first.release()
    second.release()
    assert session.slots_in_use == 0


def test_the_typestate_holds():
    session = ferry.Session("touch", strategy="pinned", inflight=1, size="64KB")
    with session.request() as r:
        inputs = r.inputs["input"]
        inputs.numpy()[:] = 0.5
        with pytest.raises(ferry.InvalidArgumentError, match="only while the request is completed"):
            r.outputs["output"]
        r.submit()
        with pytest.raises(ferry.Error, match="only while the request is filling"):
            inputs.numpy()
        r.wait()
        outputs = r.outputs["output"]
        assert np.all(outputs.numpy() == 2.0)
    assert r.state == "released"
    with pytest.raises(ferry.Error, match="released"):
        outputs.numpy()
    with pytest.raises(ferry.Error, match="no slot of 1 came free"):
        held = session.request()
        session.request(timeout=0.05)
    held.release()


def test_session_outputs_feed_torch_without_a_copy():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    session = ferry.Session("touch", strategy="mapped", inflight=1, size="1MB")
    with session.request() as r:
        r.inputs["input"].numpy()[:] = 3.0
        r.run()
        output = r.outputs["output"]
        tensor = torch.from_dlpack(output.as_cuda())
        assert tensor.is_cuda and tensor.data_ptr() == output.as_cuda().address
        assert torch.all(tensor == 7.0).item()


# Loading a model package runs its compiled code in this process, so each load happens in a child
# Python: a crash there is a test result, not the end of the test run.
TORCHS_OWN_LOAD = """import sys, torch
model = torch._inductor.aoti_load_package(sys.argv[1])
print(model(torch.randn(16, 256, device="cuda")).shape)"""

FERRY_SESSION_MATCHES_EAGER = """import sys
import numpy as np, torch, ferry
package = sys.argv[1]
eager = torch.load(package + ".eager.pt", weights_only=False).cuda().eval()
session = ferry.Session(f"torch:{package}", strategy="pinned", inflight=2, batch=16)
features = np.random.default_rng(2).standard_normal((16, 256), dtype=np.float32)
outputs = session.run(features=features)
with torch.inference_mode():
    expected = eager(torch.from_numpy(features).cuda()).cpu().numpy()
np.testing.assert_allclose(outputs["scores"], expected, rtol=1e-4, atol=1e-4)
print("matches eager")"""


def in_a_child(code, *args):
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", code, *args], capture_output=True, text=True,
                          timeout=600)


def test_a_torch_model_through_a_session_matches_eager():
    pytest.importorskip("torch", reason="PyTorch is not installed")
    package = os.environ.get("FERRY_TORCH_MODEL")
    if not package:
        pytest.skip("no exported model: FERRY_TORCH_MODEL names tiny_model.py's .pt2 (scripts/gpu/python.sh exports it)")
    torchs_own = in_a_child(TORCHS_OWN_LOAD, package)
    if torchs_own.returncode < 0:
        pytest.skip(f"PyTorch's own torch._inductor.aoti_load_package dies of signal {-torchs_own.returncode} on this "
                    "package in this Python, so no library can run it in-process here (ferry bench and ferry serve "
                    "run it in their own processes)")
    ferrys = in_a_child(FERRY_SESSION_MATCHES_EAGER, package)
    assert ferrys.returncode == 0 and "matches eager" in ferrys.stdout, ferrys.stdout + ferrys.stderr
