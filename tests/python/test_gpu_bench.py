"""ferry.bench measures what the CLI measures: the same cell from both, medians within 2%."""
from __future__ import annotations

import json
import subprocess

import pytest

import ferry

pytestmark = pytest.mark.gpu

CELL = {"engine": "touch", "size": "19MB", "strategy": "pinned"}


def test_python_and_cli_agree_on_a_cell(ferry_cli, tmp_path, outdir):
    cli_json = tmp_path / "cli.json"
    subprocess.run([ferry_cli, "bench", "--engine", CELL["engine"], "--size", CELL["size"], "--strategy",
                    CELL["strategy"], "--json", str(cli_json)], check=True, capture_output=True)
    cli = json.loads(cli_json.read_text())["results"][0]
    python = ferry.bench(**CELL).results[0]
    figures = {side: {"median_us": cell["latency_us"]["median"], "noise": cell["noise"],
                      "iterations": cell["iterations"]} for side, cell in (("cli", cli), ("python", python))}
    figures["difference"] = python["latency_us"]["median"] / cli["latency_us"]["median"] - 1
    if outdir is not None:
        (outdir / "bench_python_vs_cli.json").write_text(json.dumps({"cell": CELL, **figures}, indent=2))
    assert abs(figures["difference"]) <= 0.02, figures


def test_report_has_the_cells_asked_for():
    report = ferry.bench(engine="reduce", size=["0.6MB"], strategy=["pinned", "mapped"], max_time=0.5, trials=1,
                         um_counters=False, link_measure=False)
    assert [(c["engine"], c["strategy"]) for c in report.results] == [("reduce", "pinned"), ("reduce", "mapped")]
    assert report["command"].startswith("ferry.bench(")
    assert all(c["output_matches"] for c in report.results if not c["refused"])
