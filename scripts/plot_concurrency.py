#!/usr/bin/env python3
"""Plots throughput against concurrent clients from `ferry bench` reports of a throughput
objective, one line per engine and input size, strategy and in-flight slots: how the unified-memory recipe
(managed memory with prefetch, one context), its pinned baseline and ferry's best configuration
scale (docs/RESULTS.md).

    python3 scripts/plot_concurrency.py OUT.png REPORT.json [REPORT.json ...]

Each REPORT is a report ferry wrote, the reports.json of scripts/collect_reports.py (all of its
reports) or one of them as reports.json#NAME (scripts/plot_inputs.py).
"""
import sys
from collections import defaultdict

import plot_inputs
import plot_looks

NAME = "plot_concurrency.py"


def series(reports):
    """{(engine, input MB, strategy, slots): [(clients, requests/s)]} of every measured throughput cell
    (a later report's cell of the same line and clients replaces an earlier one's)."""
    lines = defaultdict(dict)
    for path, report in reports:
        for r in plot_inputs.measured(report["results"]):
            if not r.get("throughput_per_s") or "clients" not in r:
                continue
            slots = r.get("inflight", 1)
            lines[(r["engine"], r["input_bytes"] / 1e6, r["strategy"], slots)][r["clients"]] = r["throughput_per_s"]
    return {key: sorted(points.items()) for key, points in lines.items()}


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    try:
        reports = [item for spec in argv[2:] for item in plot_inputs.read_reports(spec)]
    except plot_inputs.Refused as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return 2
    lines = series(reports)
    if not lines:
        print(f"{NAME}: no measured throughput cells (ferry bench --objective throughput) in {', '.join(argv[2:])}",
              file=sys.stderr)
        return 2
    plt = plot_looks.pyplot(NAME)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    engines = sorted({(engine, mb) for engine, mb, _, _ in lines})
    for i, key in enumerate(sorted(lines)):
        engine, mb, strategy, slots = key
        label = f"{strategy}, {slots} slot{'s' if slots != 1 else ''}"
        if len(engines) > 1:
            label = f"{engine}, {mb:.3g} MB in: {label}"
        points = lines[key]
        ax.plot([c for c, _ in points], [rate for _, rate in points], label=label, markersize=6,
                **plot_looks.line_style(i))
    ax.set_xscale("log", base=2)
    plot_looks.plain_log_axis(ax.xaxis, [c for points in lines.values() for c, _ in points])
    ax.set(xlabel="concurrent clients", ylabel="requests / s",
           title=("several engines" if len(engines) > 1 else f"{engines[0][0]}, {engines[0][1]:.3g} MB in")
           + ": throughput under concurrent clients")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    print(f"{NAME}: wrote {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
