"""Session and Request: in-flight slots over an engine (``ferry/session/session.hpp``).

A request is one slot of the session, in the C++ typestate: *filling* (inputs writable), then
*pending* once submitted, then *completed* once waited for (outputs readable), and back to the
session when released (the end of its ``with`` block). Its views are valid only in their state.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from . import _core
from ._dtypes import from_ferry
from ._view import View
from .errors import Error, InvalidArgumentError


class _Views(Mapping):
    """Tensor name -> View of one side (inputs or outputs) of a request."""

    def __init__(self, request: Request, names: list[str], side: str):
        self._request = request
        self._names = names
        self._side = side

    def __getitem__(self, name: str) -> View:
        if name not in self._names:
            raise KeyError(f"'{name}' is not an {self._side[:-1]} of this engine; its {self._side}: "
                           f"{', '.join(self._names)}")
        return self._request._view(name, self._side)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class Request:
    """One request on one slot of a session; use it as a context manager::

        with session.request() as r:
            r.inputs["input"].numpy()[:] = x      # filling: inputs writable, zero copy
            r.run()                               # submit() then wait()
            y = r.outputs["output"].numpy().copy()   # completed: outputs readable
        # the slot is back in the session (a submitted request is waited for first)
    """

    def __init__(self, session: Session, slot: Any):
        self._session = session
        self._slot = slot
        self.inputs: Mapping[str, View] = _Views(self, session.inputs, "inputs")
        self.outputs: Mapping[str, View] = _Views(self, session.outputs, "outputs")

    @property
    def state(self) -> str:
        """"filling", "pending", "completed" or "released"."""
        return self._slot.state

    def _view(self, name: str, side: str) -> View:
        needed = "filling" if side == "inputs" else "completed"
        address, nbytes = self._slot.input(name) if side == "inputs" else self._slot.output(name)
        spec = self._session._specs[name]
        kind, _ = _core._memory_kind(address)
        slot = self._slot

        def in_state() -> str | None:
            if slot.state == needed:
                return None
            return f"the {side[:-1]} '{name}' is readable only while the request is {needed}; it is {slot.state}"

        # Outputs are writable too: the memory is the slot's until it is released, and consumers
        # such as torch.from_dlpack take no read-only tensors.
        return View(address, spec["shape"], from_ferry(spec["dtype"]), kind=kind, device=self._session.device,
                    owner=self, valid=in_state)

    def submit(self, timed: bool = True) -> None:
        """Hands the request to the GPU: the strategy's copies, the engine, the copies back.
        ``timed=False`` records no stage events (each costs about a microsecond)."""
        self._slot.submit(timed)

    def wait(self) -> None:
        """Blocks until the request is done; its outputs are then readable."""
        self._slot.wait()

    def run(self) -> None:
        """submit() then wait()."""
        self.submit()
        self.wait()

    def wait_inputs_consumed(self) -> None:
        """Blocks until the inputs' memory may be reused while the request still runs."""
        self._slot.wait_inputs_consumed()

    def times(self) -> dict[str, float | None]:
        """The completed request's device-side stage times (ms) and its host enqueue time (us)."""
        return self._slot.times()

    def release(self) -> None:
        """Gives the slot back to the session (waiting for a submitted request first)."""
        self._slot.release()

    def __enter__(self) -> Request:
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"ferry.Request(state={self.state})"


class Session:
    """N slots in flight over an engine, each input and output moved by a strategy.

    ``engine`` is what ``ferry bench --engine`` takes: a built-in workload ("touch", "reduce",
    "reduce:4", "sparse:0.1", "mlp:4x1024") or a model file through its backend plugin
    ("torch:model.pt2", "trt:model.plan", found as the CLI finds them: ``backend_directory``,
    then ``FERRY_BACKEND_PATH``, then beside the installed library). ``size`` sizes touch, reduce
    and sparse ("19MB"); ``batch`` binds mlp's and a model file's leading dynamic dim; ``shapes``
    gives concrete input shapes by name. ``tensor_strategies`` names tensors that go another way
    than ``strategy``. ``graph``: True runs requests as CUDA graphs where the engine allows;
    "auto" keeps them only where the first :meth:`warmup` measures them faster (:attr:`graph`
    then gives both figures). Without a usable GPU it raises :class:`ferry.NoDeviceError` naming
    the cause.
    """

    def __init__(self, engine: str, strategy: str = "pinned", inflight: int = 2, device: int = 0, *,
                 size: str | None = None, batch: int = 16, shapes: Mapping[str, Any] | None = None,
                 tensor_strategies: Mapping[str, str] | None = None, graph: bool | str = False,
                 allow_oversubscription: bool = False, backend_directory: str | None = None):
        request = _core._SessionRequest()
        request.engine = engine
        request.strategy = strategy
        request.inflight = int(inflight)
        request.device = int(device)
        request.size = size or ""
        request.batch = int(batch)
        request.shapes = {name: [int(d) for d in dims] for name, dims in (shapes or {}).items()}
        request.tensor_strategies = dict(tensor_strategies or {})
        request.graph = ("on" if graph else "off") if isinstance(graph, bool) else str(graph)
        request.allow_oversubscription = allow_oversubscription
        request.backend_directory = backend_directory or ""
        self._core = _core._Session(request)
        self._specs = {spec["name"]: spec for spec in self._core.io()}
        self.inputs = [s["name"] for s in self._specs.values() if s["role"] == "input"]
        self.outputs = [s["name"] for s in self._specs.values() if s["role"] == "output"]

    @property
    def io(self) -> list[dict[str, Any]]:
        """Each tensor: name, dtype (ferry's name: "FP32", ...), concrete shape, role, nbytes."""
        return list(self._specs.values())

    @property
    def device(self) -> int:
        return self._core.device

    @property
    def slots(self) -> int:
        return self._core.slots

    @property
    def slots_in_use(self) -> int:
        return self._core.slots_in_use

    @property
    def engine(self) -> str:
        return self._core.engine_name

    @property
    def graph(self) -> tuple[bool, str]:
        """(whether requests run as CUDA graphs, why not when asked for; under "auto" the figures)."""
        return self._core.graph_active, self._core.graph_reason

    def strategy_of(self, tensor: str) -> str:
        """The strategy tensor ``tensor`` goes by."""
        return self._core.strategy_of(tensor)

    def warmup(self, rounds: int = 3) -> None:
        """Runs every slot like real requests until pages and handles settle (overwrites views)."""
        self._core.warmup(rounds)

    def request(self, timeout: float | None = None) -> Request:
        """A filling request on a free slot, blocking until one is free (at most ``timeout`` s)."""
        if timeout is None:
            return Request(self, self._core.acquire())
        slot = self._core.try_acquire(timeout)
        if slot is None:
            raise Error(f"no slot of {self.slots} came free within {timeout} s")
        return Request(self, slot)

    def run(self, inputs: Mapping[str, Any] | None = None, **named: Any) -> dict[str, np.ndarray]:
        """One request: copies each input in (by name), runs it, returns copies of the outputs."""
        given = {**(inputs or {}), **named}
        unknown = sorted(set(given) - set(self.inputs))
        if unknown:
            raise InvalidArgumentError(f"not inputs of this engine: {', '.join(unknown)}; its inputs: "
                                       f"{', '.join(self.inputs)}")
        with self.request() as r:
            for name, value in given.items():
                target = r.inputs[name].numpy()
                target[...] = np.asarray(value).reshape(target.shape)
            r.run()
            return {name: r.outputs[name].numpy().copy() for name in self.outputs}

    def __repr__(self) -> str:
        return f"ferry.Session(engine={self.engine}, slots={self.slots}, device={self.device})"
