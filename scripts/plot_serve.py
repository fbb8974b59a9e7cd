#!/usr/bin/env python3
"""Throughput of `ferry serve` under perf_analyzer against concurrency, one line per protocol and
shared-memory mode, one panel per model, from the outputs the serve set of scripts/gpu_host.sh
keeps (OUTDIR/serve):

    plot_serve.py PERF_DIR OUT.png

PERF_DIR holds MODEL-PROTOCOL-SHM-cC.txt (perf_analyzer's own output); a run that printed no
throughput (it failed or did not finish) is left out of its line.
"""
import pathlib
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NAME = re.compile(r"(?P<model>[\w.]+)-(?P<protocol>http|grpc)-(?P<shm>none|system|cuda)-c(?P<c>\d+)\.txt")
THROUGHPUT = re.compile(r"Throughput: ([\d.]+) infer/sec")


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    runs = {}
    for path in pathlib.Path(argv[1]).glob("*.txt"):
        m = NAME.fullmatch(path.name)
        found = THROUGHPUT.search(path.read_text(errors="replace")) if m else None
        if found:
            key = (m["model"], m["protocol"], m["shm"])
            runs.setdefault(key, []).append((int(m["c"]), float(found.group(1))))
    models = sorted({k[0] for k in runs})
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4.2), squeeze=False)
    for ax, model in zip(axes[0], models):
        for (m, protocol, shm), points in sorted(runs.items()):
            if m != model:
                continue
            points.sort()
            ax.plot([c for c, _ in points], [t for _, t in points], marker="o",
                    linestyle="-" if protocol == "http" else "--", label=f"{protocol}, shm {shm}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("perf_analyzer concurrency")
        ax.set_ylabel("inferences / s (log)")
        ax.set_title(f"ferry serve: {model}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)


if __name__ == "__main__":
    main(sys.argv)
