"""The bench report as plain data: read from a report `ferry bench --json` wrote on a GPU host."""
from __future__ import annotations

import json

import pytest

import ferry
from conftest import SOURCE_DIR

REPORT = SOURCE_DIR / "docs" / "results" / "bench" / "smoke.json"


def test_a_report_is_plain_data():
    report = ferry.load_report(REPORT)
    assert isinstance(report, dict)
    assert json.loads(json.dumps(report)) == report  # nothing but JSON's types
    assert report["schema_version"] == 1
    assert report["results"] is report.results and len(report.results) == 44
    cell = report.results[0]
    assert {"engine", "strategy", "input_bytes", "latency_us", "refused"} <= set(cell)
    assert cell["latency_us"]["median"] > 0
    assert {"machine", "winner", "recommendation", "command", "date"} <= set(report)


def test_to_pandas_has_a_row_per_cell():
    pandas = pytest.importorskip("pandas", reason="pandas is optional: to_pandas() needs it")
    report = ferry.load_report(REPORT)
    frame = report.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == len(report.results)
    assert list(frame["strategy"]) == [cell["strategy"] for cell in report.results]
    assert frame["latency_us.median"].iloc[0] == report.results[0]["latency_us"]["median"]


def test_to_pandas_without_pandas_says_so(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    with pytest.raises(ImportError, match="needs pandas"):
        ferry.load_report(REPORT).to_pandas()


@pytest.mark.no_gpu
def test_bench_without_a_gpu_fails_cleanly_after_checking_its_flags():
    with pytest.raises(ferry.NoDeviceError, match="^no CUDA device: "):
        ferry.bench(engine=["reduce", "touch"], size="0.6MB,19MB", strategy=["pinned", "mapped"],
                    max_time=0.5, trials=1, um_counters=False, link_measure=False)


def _with_gpu_figure(tmp_path):
    """The smoke report with its first cell as a newer ferry writes it: the GPU's time per request."""
    data = json.loads(REPORT.read_text(encoding="utf-8"))
    data["results"][0] |= {"gpu_us": {"count": 200, "median": 351.5}, "gpu_noise": 0.001, "gpu_trial_noise": 0.0007,
                           "host_copy_gbps": 11.2}
    path = tmp_path / "with_gpu.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_gpu_figure_reads_where_a_report_has_it(tmp_path):
    report = ferry.load_report(_with_gpu_figure(tmp_path))
    assert report.results[0]["gpu_us"]["median"] == 351.5
    assert report.results[0]["gpu_noise"] == 0.001
    assert "gpu_us" not in report.results[1]  # the smoke report predates the figure


def test_to_pandas_has_the_gpu_columns_for_every_report(tmp_path):
    pytest.importorskip("pandas", reason="pandas is optional: to_pandas() needs it")
    old = ferry.load_report(REPORT).to_pandas()
    assert old["gpu_us.median"].isna().all()  # a report written before the GPU figure: unknown
    assert old["host_copy_gbps"].isna().all()
    frame = ferry.load_report(_with_gpu_figure(tmp_path)).to_pandas()
    assert frame["gpu_us.median"].iloc[0] == 351.5
    assert frame["gpu_trial_noise"].iloc[0] == 0.0007
    assert frame["gpu_us.median"].iloc[1:].isna().all()


def test_to_pandas_has_a_column_for_every_figure_of_the_field_tables():
    pytest.importorskip("pandas", reason="pandas is optional: to_pandas() needs it")
    frame = ferry.load_report(REPORT).to_pandas()
    columns = ferry._core._report_figure_columns()
    assert {"latency_us.median", "noise", "gpu_us.median", "throughput_gbps", "host_copy_gbps"} <= set(columns)
    assert set(columns) <= set(frame.columns)
    assert frame["throughput_gbps"].isna().all()  # the smoke report predates it
