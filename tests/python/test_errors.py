"""ferry's C++ errors arrive as the Python classes that mirror their hierarchy."""
from __future__ import annotations

import pytest

import ferry
from ferry import _core


@pytest.mark.parametrize(("kind", "cls"), [
    ("error", ferry.Error),
    ("invalid_argument", ferry.InvalidArgumentError),
    ("unsupported", ferry.UnsupportedError),
    ("no_device", ferry.NoDeviceError),
    ("cuda_error", ferry.CudaError),
    ("out_of_memory", ferry.OutOfMemoryError),
])
def test_each_cpp_error_becomes_its_class(kind, cls):
    with pytest.raises(cls) as raised:
        _core._throw_error(kind, f"the {kind} message")
    assert type(raised.value) is cls  # the most derived class, not a base
    assert str(raised.value) == f"the {kind} message"


def test_cuda_errors_carry_cudas_code():
    with pytest.raises(ferry.OutOfMemoryError) as raised:
        _core._throw_error("out_of_memory", "no room")
    assert raised.value.code_name == "cudaErrorMemoryAllocation"
    assert raised.value.code == 2


def test_hierarchy_mirrors_the_cpp_one():
    for cls in (ferry.InvalidArgumentError, ferry.UnsupportedError, ferry.NoDeviceError, ferry.CudaError):
        assert issubclass(cls, ferry.Error)
    assert issubclass(ferry.OutOfMemoryError, ferry.CudaError)
    assert issubclass(ferry.OutOfMemoryError, MemoryError)
    assert issubclass(ferry.InvalidArgumentError, ValueError)
    assert not issubclass(ferry.NoDeviceError, ferry.UnsupportedError)


def test_other_exceptions_keep_their_python_mapping():
    with pytest.raises(RuntimeError) as raised:
        _core._throw_error("no such kind", "x")
    assert not isinstance(raised.value, ferry.Error)


@pytest.mark.parametrize(("call", "words"), [
    (lambda: ferry.Session("bogus"), "unknown workload"),
    (lambda: ferry.Session("touch", strategy="fastest"), "unknown strategy 'fastest'"),
    (lambda: ferry.Session("touch", tensor_strategies={"input": "nope"}), "unknown strategy 'nope'"),
    (lambda: ferry.Session("touch", size="12 parsecs"), "12 parsecs"),
    (lambda: ferry.Session("touch", inflight=0), "inflight must be at least 1"),
    (lambda: ferry.Session("touch", graph="sometimes"), "graph must be False, True or \"auto\", not 'sometimes'"),
    (lambda: ferry.bench(engine="bogus"), "unknown workload"),
    (lambda: ferry.bench(engine="touch", inflight=0), "--inflight must be a count from 1 to 64"),
    (lambda: ferry.bench(engine="touch", objective="fastest"), "objective must be one of latency, throughput"),
    (lambda: ferry.bench(engine="touch", trials=5, max_trials=2), "--max-trials (2) must be at least --trials (5)"),
    (lambda: ferry.Buffer((0, 4)), "dims must be positive"),
    (lambda: ferry.Buffer((4,), dtype="complex1024"), "unknown dtype"),
], ids=["engine", "strategy", "tensor-strategy", "size", "inflight", "graph", "bench-engine", "bench-inflight",
        "bench-objective", "bench-trials", "buffer-shape", "buffer-dtype"])
def test_bad_input_is_invalid_argument_before_any_gpu(call, words):
    with pytest.raises(ferry.InvalidArgumentError) as raised:
        call()
    assert words in str(raised.value)
