#!/usr/bin/env python3
"""Throughput of `ferry serve` under perf_analyzer against concurrency, one line per protocol and
where the tensors travel (the request body, system or CUDA shared memory), one panel per model,
from the tables scripts/summarise_perf_analyzer.py writes (one per run):

    plot_serve.py OUT.png SUMMARY.md [SUMMARY.md...]

A later table's row of the same model, protocol, path and concurrency replaces an earlier one's,
and rows marked with a dagger (re-measured) are drawn hollow. Throughput is perf_analyzer's
infer/s: images for a batched model.
"""
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PATHS = {"body": "tensors in the body", "system": "system shared memory", "cuda": "CUDA shared memory"}


def table_rows(path):
    """The summary's rows as dicts keyed by its header's column names."""
    header = None
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
        else:
            yield dict(zip(header, cells))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    runs, later = {}, set()
    for path in argv[2:]:
        for row in table_rows(path):
            key = (row["model"], row["protocol"], PATHS[row["tensors"]])
            clients = int(row["clients"])
            runs.setdefault(key, {})[clients] = float(row["infer/s"].rstrip("†"))
            if row["infer/s"].endswith("†"):
                later.add((*key, clients))
    if not runs:
        sys.exit("plot_serve.py: no rows in " + ", ".join(argv[2:]))
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
