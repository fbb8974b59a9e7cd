#!/usr/bin/env python3
"""Bar chart of throughput on one GPU vs several, from pairs of `ferry bench --json` reports.

    plot_scaling.py OUT.png LABEL ONE.json MANY.json [LABEL ONE.json MANY.json ...]

Each pair is the same workload and strategies run with `--devices 0` and with `--devices 0,1`;
bars are grouped per (label, strategy) and annotated with the ratio many/one.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def throughputs(path):
    with open(path) as f:
        return {r["strategy"]: r["throughput_per_s"] for r in json.load(f)["results"] if not r.get("refused")}


def main(argv):
    if len(argv) < 5 or (len(argv) - 2) % 3:
        sys.exit(__doc__)
    out, rest = argv[1], argv[2:]
    names, one, many = [], [], []
    for i in range(0, len(rest), 3):
        label, a, b = rest[i], throughputs(rest[i + 1]), throughputs(rest[i + 2])
        for strategy in a:
            if strategy in b:
                names.append(f"{label}\n{strategy}")
                one.append(a[strategy])
                many.append(b[strategy])
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 4.5))
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], one, 0.4, label="1 GPU")
    ax.bar([i + 0.2 for i in x], many, 0.4, label="2 GPUs")
    for i in x:
        ax.annotate(f"{many[i] / one[i]:.2f}x", (i + 0.2, many[i]), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(x), names, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("requests / s (log)")
    ax.set_title("Throughput, 1 vs 2 H200 (same slots and clients per GPU)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main(sys.argv)
