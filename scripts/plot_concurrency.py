#!/usr/bin/env python3
"""Plots throughput against concurrent clients from ferry bench JSON reports, one line per
(strategy, in-flight slots): how the unified-memory recipe, its pinned baseline and ferry's best
configuration scale (docs/RESULTS.md).

Usage: python3 scripts/plot_concurrency.py out.png report1.json report2.json ...
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

if len(sys.argv) < 3:
    sys.exit(__doc__)
lines = defaultdict(list)
for path in sys.argv[2:]:
    for r in json.load(open(path, encoding="utf-8")).get("results", []):
        if r.get("refused"):
            continue
        label = f"{r['strategy']}, {r['inflight']} slot{'s' if r['inflight'] > 1 else ''}"
        lines[label].append((r["clients"], r["throughput_per_s"]))
fig, ax = plt.subplots(figsize=(7, 4.5))
for label, points in sorted(lines.items()):
    points.sort()
    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
ax.set_xscale("log", base=2)
ax.set_xlabel("concurrent clients")
ax.set_ylabel("requests / s")
engine = json.load(open(sys.argv[2], encoding="utf-8"))["results"][0]["engine"]
ax.set_title(f"{engine}: throughput under concurrent clients")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=120)
