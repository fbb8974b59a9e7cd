#!/usr/bin/env python3
"""Throughput of `ferry serve` under perf_analyzer against concurrency, one line per protocol and
where the tensors travel (the request body, system or CUDA shared memory), one panel per model,
from perf_analyzer's CSV files (-f) as the serve sets of scripts/gpu_host.sh keep them:

    plot_serve.py OUT.png DIR [DIR...]

Each DIR holds files named [pa-]MODEL-PROTOCOL[-SHM]-cC.csv (SHM: none, system or cuda; absent:
none). A later DIR's run of the same model, protocol, path and concurrency replaces an earlier
one's (a re-measurement) and is drawn hollow. Throughput is perf_analyzer's infer/s: images for a
batched model.
"""
import csv
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAME = re.compile(r"(?:pa-)?(?P<model>[\w.]+?)-(?P<protocol>http|grpc)(?:-(?P<shm>none|body|system|cuda))?"
                  r"-c(?P<c>\d+)\.csv")
PATHS = {"none": "tensors in the body", "body": "tensors in the body", "system": "system shared memory",
         "cuda": "CUDA shared memory"}


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    runs, later = {}, set()
    for index, folder in enumerate(argv[2:]):
        for path in sorted(pathlib.Path(folder).glob("*.csv")):
            m = NAME.fullmatch(path.name)
            rows = list(csv.DictReader(path.open())) if m else []
            if rows:
                key = (m["model"], m["protocol"], PATHS[m["shm"] or "none"])
                runs.setdefault(key, {})[int(m["c"])] = float(rows[0]["Inferences/Second"])
                if index > 0:
                    later.add((*key, int(m["c"])))
    if not runs:
        sys.exit("plot_serve.py: no perf_analyzer CSV files named MODEL-PROTOCOL-SHM-cC.csv")
    models = sorted({k[0] for k in runs})
    fig, axes = plt.subplots(1, len(models), figsize=(7.5 * len(models), 4.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        for (m, protocol, where), points in sorted(runs.items()):
            if m != model:
                continue
            cs = sorted(points)
            line = ax.plot(cs, [points[c] for c in cs], marker="o", linestyle="-" if protocol == "http" else "--",
                           label=f"{protocol}, {where}")[0]
            again = [c for c in cs if (m, protocol, where, c) in later]
            if again:
                ax.scatter(again, [points[c] for c in again], s=70, facecolors="white",
                           edgecolors=line.get_color(), zorder=3)
        if any(k[0] == model for k in later):
            ax.plot([], [], "o", markerfacecolor="white", markeredgecolor="gray", label="hollow: re-measured")
        ax.set_xscale("log", base=2)
        ax.set(xlabel="clients (perf_analyzer concurrency)", ylabel="inferences / s", title=f"ferry serve: {model}")
        ax.set_ylim(bottom=0)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    print(f"plot_serve.py: wrote {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
