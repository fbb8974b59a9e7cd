"""ferry.bench: ``ferry bench``'s measurement from Python, with the report as plain data."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import _core
from .errors import InvalidArgumentError

_CHOICES = {"objective": ("latency", "throughput"), "schedule": ("interleaved", "sequential"),
            "input_writes": ("cached", "streaming")}


class BenchReport(dict):
    """A bench report as plain data: the dict ``ferry bench --json`` writes (``results``: one
    dict per cell; ``machine``, ``winner``, ``recommendation``, ``command``, ``date``, ...)."""

    @property
    def results(self) -> list[dict[str, Any]]:
        return self.get("results", [])

    def to_pandas(self):
        """One row per cell, nested figures flattened ("latency_us.median", ...); needs pandas.

        Every numeric figure this ferry writes is a column of every frame (the result's field
        tables list them): NaN for cells of a report written before it was recorded, such as the
        GPU's own time per request ("gpu_us.median", with "gpu_noise" and "gpu_trial_noise", what
        ``ferry bench compare`` judges beside end-to-end latency), so code that reads them works
        on older reports too."""
        try:
            import pandas  # noqa: PLC0415 - optional dependency
        except ImportError:
            raise ImportError("BenchReport.to_pandas() needs pandas (pip install pandas)") from None
        frame = pandas.json_normalize(self.results)
        for column in _core._report_figure_columns():
            if column not in frame.columns:
                frame[column] = float("nan")
            elif column == "gpu_us.median" and "gpu_us.count" in frame.columns:
                # A cell of a newer report without GPU samples (refused) has a count of 0: unknown.
                frame.loc[frame["gpu_us.count"] == 0, column] = float("nan")
        return frame


def load_report(path: str | Path) -> BenchReport:
    """Reads a report that ``ferry bench --json`` wrote."""
    return BenchReport(json.loads(Path(path).read_text(encoding="utf-8")))


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [item for item in value.split(",") if item]
    return [str(item) for item in value]


def bench(engine: str | list[str] | None = None, *, size: str | list[str] | None = None,
          strategy: str | list[str] | None = None, batch: int | None = None, shape: list[str] | None = None,
          preprocess: str | None = None, inflight: int | str | None = None, clients: int | None = None,
          iterations: int | None = None, max_noise: float | None = None, min_samples: int | None = None,
          max_time: float | None = None, trials: int | None = None, max_trials: int | None = None,
          schedule: str | None = None, memory_margin: float | None = None, slowdown: float | None = None,
          duration: float | None = None, warmup: bool | None = None, graph: bool | None = None,
          recipes: bool | None = None, objective: str | None = None, input_writes: str | None = None,
          input_data: str | None = None, index_checks: bool | None = None, index_bound: list[str] | None = None,
          device: int | None = None, devices: str | list[int] | None = None,
          allow_oversubscription: bool | None = None, um_counters: bool | None = None, l2_flush: bool | None = None,
          link_measure: bool | None = None, profile: str | None = None,
          backend_directory: str | None = None) -> BenchReport:
    """Runs ``ferry bench`` through the library and returns its report (a :class:`BenchReport`).

    Each keyword is the CLI flag of that name (``--max-noise`` is ``max_noise``; ``--no-recipes``
    is ``recipes=False``, ``--no-um-counters`` ``um_counters=False``, ``--no-l2-flush`` ``l2_flush=False``, ``--no-link-measure``
    ``link_measure=False``, ``--no-index-checks`` ``index_checks=False``; ``--input-data`` is
    ``input_data``: "auto", "zero", "random" or a file's path); None keeps the CLI's default. Lists may be given as lists or as the
    CLI's comma-separated text. ``ferry bench --help`` describes every flag; ``--json``, ``--csv``,
    ``--md`` and ``--plot`` have no keyword (the report is returned: ``json.dump`` it, or
    ``to_pandas()``), nor has ``--placement`` (another report; the CLI runs it). Errors are the
    CLI's: a bad flag is an :class:`InvalidArgumentError` before anything runs, no usable GPU a
    :class:`NoDeviceError` naming the cause; a cell that fails is a row with its reason.
    """
    given = {key: value for key, value in locals().items() if value is not None}
    for key, allowed in _CHOICES.items():
        if key in given and given[key] not in allowed:
            raise InvalidArgumentError(f"{key} must be one of {', '.join(allowed)}, not '{given[key]}'")
    options: dict[str, Any] = dict(given)
    for key in ("engine", "size", "shape", "index_bound"):
        if key in options:
            options[key] = _listed(options[key])
    if "strategy" in options:
        options["strategy"] = ",".join(_listed(options["strategy"]))
    if "devices" in options:
        options["devices"] = ",".join(_listed(options["devices"]))
    if "inflight" in options:
        options["inflight"] = str(options["inflight"])
    if "um_counters" in options:
        options["no_um_counters"] = not options.pop("um_counters")
    if "l2_flush" in options:
        options["no_l2_flush"] = not options.pop("l2_flush")
    if "link_measure" in options:
        options["no_link_measure"] = not options.pop("link_measure")
    command = "ferry.bench(" + ", ".join(f"{k}={v!r}" for k, v in given.items()) + ")"
    return BenchReport(json.loads(_core._run_bench(options, command)))
