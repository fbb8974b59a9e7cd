#!/usr/bin/env python3
"""Plots a ferry bench JSON report (the layout of src/bench/report/report_json.cpp).

Usage: python3 scripts/plot_bench.py report.json out.png   (or out.svg)

One row of panels per engine: median latency (whisker up to p90), throughput, and the bandwidth
each strategy achieves (bytes in and out per median request) against the measured link peak,
each against input size, one line per strategy, log scales, the legend beside the panels. Engines
named "sparse:<fraction>" are drawn together in a final panel of latency against the touched
fraction instead, one line per strategy. Sizes are decimal (MB), as ferry writes them. Refused and
failed results are left out (the report lists them); noisy results have hollow markers.
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
    measured = [r for r in report.get("results", []) if not r.get("refused") and not r.get("failed")]
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


def plot_engine(ax_latency, ax_throughput, ax_bandwidth, engine, results, link_peak):
    series = by_strategy(results, lambda r: r["input_bytes"] / MB)
    for strategy, points in sorted(series.items()):
        draw_series(ax_latency, list(points), strategy, with_whisker=True)
        draw_series(ax_throughput, list(points), strategy, with_whisker=False)
        # What crossed per request over the median's time; the floor (`device`) crosses nothing.
        moved = sorted((x, (r["input_bytes"] + r.get("output_bytes", 0)) / (r["latency_us"]["median"] * 1e3))
                       for x, r in points if r["strategy"] != "device" and r["latency_us"]["median"] > 0)
        if moved:
            ax_bandwidth.plot(*zip(*moved), marker="o", label=strategy)
        else:
            ax_bandwidth.plot([], [])  # keep the colours of the other panels
    if link_peak:
        ax_bandwidth.axhline(link_peak, color="black", linestyle="--", linewidth=1,
                             label=f"link peak, pinned ({link_peak:.1f} GB/s)")
    ax_latency.set(title=f"{engine}: latency (median, whisker to p90)", xlabel="input size (MB)",
                   ylabel="latency (µs)", xscale="log", yscale="log")
    ax_throughput.set(title=f"{engine}: throughput", xlabel="input size (MB)",
                      ylabel="requests / s", xscale="log", yscale="log")
    ax_bandwidth.set(title=f"{engine}: bytes in and out per request / median", xlabel="input size (MB)",
                     ylabel="GB/s", xscale="log")


def plot_sparse(ax, results):
    # One line per strategy: the inputs of a sparse sweep differ by their few index bytes only.
    series = defaultdict(list)
    for r in results:
        series[series_name(r)].append((sparse_fraction(r["engine"]), r))
    for name, points in sorted(series.items()):
        draw_series(ax, points, name, with_whisker=True)
    fractions = [sparse_fraction(r["engine"]) for r in results]
    # Fractions are usually chosen by decades (0.001, 0.01, 0.1): spread them out when they are.
    spans_decades = min(fractions) > 0 and max(fractions) / min(fractions) >= 10
    table = max(r["input_bytes"] for r in results) / MB
    ax.set(title=f"sparse, {table:.3g} MB table: latency by the fraction read\n(median, whisker to p90)",
           xlabel="fraction of the table's pages read", ylabel="latency (µs)", yscale="log",
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
    machine = report.get("machine", {})
    link_peak = machine.get("link_peak_h2d_gbps") or 0
    columns = 3 if engines else 1  # a sparse sweep alone is one panel
    fig, axes = plt.subplots(rows, columns, figsize=(19 if engines else 9.5, 4.4 * rows), squeeze=False)
    for row, (engine, results) in enumerate(sorted(engines.items())):
        plot_engine(axes[row][0], axes[row][1], axes[row][2], engine, results, link_peak)
    if sparse:
        plot_sparse(axes[-1][0], sparse)
        for ax in axes[-1][1:]:
            ax.set_visible(False)
    for row in axes:
        for ax in row:
            if ax.get_visible():
                ax.grid(True, which="both", alpha=0.3)
        # One legend per row, beside its last visible panel, where it covers no data.
        shown = [ax for ax in row if ax.get_visible()]
        handles, labels = shown[-1].get_legend_handles_labels() if len(shown) > 1 else shown[0].get_legend_handles_labels()
        if len(shown) > 1:
            extra_h, extra_l = shown[0].get_legend_handles_labels()
            for h, l in zip(extra_h, extra_l):
                if l not in labels:
                    handles.append(h)
                    labels.append(l)
        shown[-1].legend(handles, labels, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                         borderaxespad=0)

    title = " · ".join(s for s in ("ferry bench", machine.get("gpu_name", ""), report.get("date", "")) if s)
    if any(r.get("noisy") for r in measured):
        title += "\nhollow markers: noisy (the median had not settled when sampling stopped)"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(out_path)
    print(f"plot_bench.py: wrote {out_path}")


if __name__ == "__main__":
    main(sys.argv)
