#!/usr/bin/env python3
"""The unified-memory recipe's claim against what ferry chooses, as bars: ResNet-50's throughput at
each batch and client count with the unified-memory recipe (managed memory with prefetch, one
context), pinned copies in one context, and pinned with the in-flight slots `--inflight auto`
found, from the reports of scripts/gpu_host.sh's seed-claim set (seed-bB-cC-one.json:
managed-prefetch and pinned; seed-bB-cC-auto.json: pinned at --inflight auto) in DIR, or from
their reports.json (scripts/collect_reports.py), given as DIR or as the file:

    python3 scripts/plot_unified_memory_claim.py OUT.png DIR|DIR/reports.json
"""
import pathlib
import re
import sys

import plot_inputs
import plot_looks

NAME = "plot_unified_memory_claim.py"
RUN = re.compile(r"seed-b(?P<batch>\d+)-c(?P<clients>\d+)-(?P<how>one|auto)")
RECIPE = "managed-prefetch, 1 context"
ORDER = [RECIPE, "pinned, 1 context", "pinned, --inflight auto"]
EXPECTED = "the seed-claim set's seed-bB-cC-one.json and seed-bB-cC-auto.json, or their collected reports.json"


def reports(where):
    """(name, report) of each run: the set's seed-*.json files of a folder and its reports.json, or
    the reports.json given."""
    where = pathlib.Path(where)
    if not where.is_dir():
        return plot_inputs.read_reports(where)
    found = []
    if (where / "reports.json").exists():
        found += plot_inputs.read_reports(where / "reports.json")
    for path in sorted(where.glob("seed-*.json")):
        found += plot_inputs.read_reports(path)
    return found


def cells_of(runs):
    """{(clients, batch): {series: (requests/s, noise, slots)}} of the runs named as the set names them."""
    cells = {}
    for name, report in runs:
        m = RUN.fullmatch(name)
        if not m:
            continue
        for r in plot_inputs.measured(report["results"]):
            series = "pinned, --inflight auto" if m["how"] == "auto" else f"{r['strategy']}, 1 context"
            noise = max(r.get("throughput_noise", 0), r.get("throughput_trial_noise", 0))
            cells.setdefault((int(m["clients"]), int(m["batch"])), {})[series] = (r["throughput_per_s"], noise,
                                                                                 r.get("inflight", 1))
    return cells


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cells = cells_of(reports(argv[2]))
    except plot_inputs.Refused as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return 2
    if not cells:
        print(f"{NAME}: no runs in {argv[2]}: expected {EXPECTED}", file=sys.stderr)
        return 2
    plt = plot_looks.pyplot(NAME)
    keys = sorted(cells)
    width = 0.27
    fig, ax = plt.subplots(figsize=(11, 4.6))
    for i, series in enumerate(ORDER):
        xs = [k + (i - 1) * width for k in range(len(keys))]
        values = [cells[key].get(series, (0, 0, 0)) for key in keys]
        bars = ax.bar(xs, [v[0] for v in values], width, yerr=[v[0] * v[1] for v in values], capsize=2,
                      hatch=plot_looks.hatch(i), edgecolor="black", linewidth=0.5,
                      label=series + (" (the unified-memory recipe)" if series == RECIPE else ""))
        if series.endswith("auto"):
            for bar, v in zip(bars, values):
                if v[0] > 0:
                    ax.annotate(f"{v[2]} slots", (bar.get_x() + bar.get_width() / 2, bar.get_height() * (1 + v[1])),
                                xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                                fontsize="x-small")
    ax.set_xticks(range(len(keys)), [f"batch {b}\n{c} clients" for c, b in keys])
    ax.set(ylabel="requests / s (whisker: noise)",
           title="ResNet-50 fp16, one H200: the unified-memory recipe against pinned copies")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    print(f"{NAME}: wrote {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
