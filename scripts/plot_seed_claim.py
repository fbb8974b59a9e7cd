#!/usr/bin/env python3
"""The seed's claim against what ferry chooses, as bars: ResNet-50's throughput at each batch and
client count with unified memory and prefetch in one context (the seed's recipe), pinned copies
in one context, and pinned with the in-flight slots `--inflight auto` found, from the reports of
scripts/gpu_host.sh's seed-claim set (seed-bB-cC-one.json: managed-prefetch and pinned;
seed-bB-cC-auto.json: pinned at --inflight auto), or their reports.json (scripts/collect_reports.py):

    plot_seed_claim.py OUT.png DIR
"""
import json
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAME = re.compile(r"seed-b(?P<batch>\d+)-c(?P<clients>\d+)-(?P<how>one|auto)")


def reports(folder):
    """(name, report) of each run: the set's seed-*.json files, or the folder's reports.json
    (scripts/collect_reports.py) that keeps them under their names."""
    folder = pathlib.Path(folder)
    collected = folder / "reports.json"
    if collected.exists():
        yield from json.loads(collected.read_text()).items()
    for path in sorted(folder.glob("seed-*.json")):
        yield path.stem, json.loads(path.read_text())


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    cells = {}  # (clients, batch) -> {series: (req/s, noise)}
    for name, report in reports(argv[2]):
        m = NAME.fullmatch(name)
        if not m:
            continue
        for r in report["results"]:
            if r.get("failed") or r.get("refused"):
                continue
            series = f"{r['strategy']}, 1 context" if m["how"] == "one" else f"{r['strategy']}, {r['inflight']} slots (auto)"
            if m["how"] == "auto":
                series = "pinned, --inflight auto"
            noise = max(r.get("throughput_noise", 0), r.get("throughput_trial_noise", 0))
            cells.setdefault((int(m["clients"]), int(m["batch"])), {})[series] = (r["throughput_per_s"], noise,
                                                                                 r.get("inflight", 1))
    if not cells:
        sys.exit("plot_seed_claim.py: no seed-bB-cC-one|auto.json reports")
    order = ["managed-prefetch, 1 context", "pinned, 1 context", "pinned, --inflight auto"]
    keys = sorted(cells)
    width = 0.27
    fig, ax = plt.subplots(figsize=(11, 4.6))
    for i, series in enumerate(order):
        xs = [k + (i - 1) * width for k in range(len(keys))]
        values = [cells[key].get(series, (0, 0, 0)) for key in keys]
        bars = ax.bar(xs, [v[0] for v in values], width, yerr=[v[0] * v[1] for v in values], capsize=2,
                      label=series + (" (the seed's recipe)" if i == 0 else ""))
        if series.endswith("auto"):
            for bar, v in zip(bars, values):
                if v[0] > 0:
                    ax.annotate(f"{v[2]} slots", (bar.get_x() + bar.get_width() / 2, bar.get_height() * (1 + v[1])),
                                xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                                fontsize="x-small")
    ax.set_xticks(range(len(keys)), [f"batch {b}\n{c} clients" for c, b in keys])
    ax.set(ylabel="requests / s (whisker: noise)",
           title="ResNet-50 fp16, one H200: the seed's unified memory against pinned copies")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    print(f"plot_seed_claim.py: wrote {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
