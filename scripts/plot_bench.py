#!/usr/bin/env python3
"""Plots a ferry bench JSON report (the layout of src/bench/report_json.cpp).

Usage: python3 scripts/plot_bench.py report.json out.png   (or out.svg)

One row of panels per engine: median latency (whisker up to p90) and throughput, each against
input size, one line per strategy, log scales. Engines named "sparse:<fraction>" are drawn
together in a final panel of latency against the touched fraction instead. Refused results
are left out (the report lists them); noisy results are drawn with hollow markers.
"""
import json
import os
import sys
from collections import defaultdict

MB = 1e6  # decimal, as ferry writes every size (and reads --size 19MB)
SPARSE_PREFIX = "sparse:"


def fail(message):
    sys.exit(f"plot_bench.py: {message}")


def load_measured(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"cannot read {path}: {e}")
    measured = [r for r in report.get("results", []) if not r.get("refused")]
    if not measured:
        fail(f"{path} has no measured results to plot")
    return report, measured


def sparse_fraction(engine):
    """The fraction of a "sparse:<fraction>" engine, or None for any other engine."""
    if not engine.startswith(SPARSE_PREFIX):
        return None
    try:
        return float(engine[len(SPARSE_PREFIX):])
    except ValueError:
        return None


def draw_series(ax, points, label, with_whisker):
    """points: (x, result) pairs of one strategy; draws median latency or throughput."""
    points.sort(key=lambda p: p[0])
    xs = [x for x, _ in points]
    if with_whisker:
        ys = [r["latency_us"]["median"] for _, r in points]
        upper = [max(r["latency_us"]["p90"] - r["latency_us"]["median"], 0.0) for _, r in points]
        line = ax.errorbar(xs, ys, yerr=[[0.0] * len(ys), upper], marker="o", capsize=3, label=label)
        color = line[0].get_color()
    else:
        ys = [r["throughput_per_s"] for _, r in points]
        color = ax.plot(xs, ys, marker="o", label=label)[0].get_color()
    # Hollow markers on top of noisy points: the median had not settled when sampling stopped.
    noisy = [(x, y) for (x, r), y in zip(points, ys) if r.get("noisy")]
    if noisy:
        ax.scatter(*zip(*noisy), s=80, facecolors="white", edgecolors=color, zorder=3)


def series_name(r):
    """The strategy plus any non-default run settings, so different runs never share a line."""
    settings = [f"inflight {r['inflight']}" if r.get("inflight", 1) != 1 else "",
                f"clients {r['clients']}" if r.get("clients", 1) != 1 else "",
                f"{len(r['devices'])} GPUs" if len(r.get("devices", [])) > 1 else "",
                "graph" if r.get("graph") else "",
                "cached writes" if r.get("input_writes", "cached") == "cached" else ""]
    settings = [s for s in settings if s]
    return f"{r['strategy']} [{', '.join(settings)}]" if settings else r["strategy"]


def by_strategy(results, x_of):
    series = defaultdict(list)
    for r in results:
        series[series_name(r)].append((x_of(r), r))
    return series


def plot_engine(ax_latency, ax_throughput, engine, results):
    series = by_strategy(results, lambda r: r["input_bytes"] / MB)
    for strategy, points in sorted(series.items()):
        draw_series(ax_latency, list(points), strategy, with_whisker=True)
        draw_series(ax_throughput, list(points), strategy, with_whisker=False)
    ax_latency.set(title=f"{engine}: latency (median, whisker to p90)", xlabel="input size (MB)",
                   ylabel="latency (µs)", xscale="log", yscale="log")
    ax_throughput.set(title=f"{engine}: throughput", xlabel="input size (MB)",
                      ylabel="requests / s", xscale="log", yscale="log")


def plot_sparse(ax, results):
    sizes = {r["input_bytes"] for r in results}

    def label(strategy, size):
        return strategy if len(sizes) == 1 else f"{strategy} @ {size / MB:.3g} MB"

    series = defaultdict(list)
    for r in results:
        series[label(series_name(r), r["input_bytes"])].append((sparse_fraction(r["engine"]), r))
    for name, points in sorted(series.items()):
        draw_series(ax, points, name, with_whisker=True)
    fractions = [sparse_fraction(r["engine"]) for r in results]
    # Fractions are usually chosen by decades (0.001, 0.01, 0.1): spread them out when they are.
    spans_decades = min(fractions) > 0 and max(fractions) / min(fractions) >= 10
    ax.set(title="sparse: latency vs fraction touched (median, whisker to p90)",
           xlabel="fraction of the input touched", ylabel="latency (µs)", yscale="log",
           xscale="log" if spans_decades else "linear")


def main(argv):
    if len(argv) != 3:
        fail("usage: python3 scripts/plot_bench.py report.json out.png|out.svg")
    report_path, out_path = argv[1], argv[2]
    extension = os.path.splitext(out_path)[1].lower()
    if extension not in (".png", ".svg"):
        fail(f"output must end in .png or .svg, not '{extension or out_path}'")
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing: install python3-matplotlib (apt), "
             "or `pip install matplotlib` for a non-system python")

    report, measured = load_measured(report_path)
    engines = defaultdict(list)
    sparse = []
    for r in measured:
        (sparse if sparse_fraction(r["engine"]) is not None else engines[r["engine"]]).append(r)

    rows = len(engines) + (1 if sparse else 0)
    fig, axes = plt.subplots(rows, 2, figsize=(13, 4.2 * rows), squeeze=False)
    for row, (engine, results) in enumerate(sorted(engines.items())):
        plot_engine(axes[row][0], axes[row][1], engine, results)
    if sparse:
        plot_sparse(axes[-1][0], sparse)
        axes[-1][1].set_visible(False)
    for ax in axes.flat:
        if ax.get_visible():
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small")

    machine = report.get("machine", {})
    title = " · ".join(s for s in ("ferry bench", machine.get("gpu_name", ""), report.get("date", "")) if s)
    if any(r.get("noisy") for r in measured):
        title += "\nhollow markers: noisy (the median had not settled when sampling stopped)"
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_path)
    print(f"plot_bench.py: wrote {out_path}")


if __name__ == "__main__":
    main(sys.argv)
