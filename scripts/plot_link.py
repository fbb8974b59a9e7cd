#!/usr/bin/env python3
"""Link efficiency against input size, from `ferry bench` JSON reports of one-request-at-a-time
cells: each strategy's host-to-device rate as a share of the report's measured link peak (copy
strategies: the event-timed copy stage; zero-copy strategies: input bytes over the engine's
event-timed span), one line per strategy and input-write mode, one panel per engine.

    plot_link.py OUT.png REPORT.json [REPORT.json ...]
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, paths = sys.argv[1], sys.argv[2:]
    # engine -> (strategy, writes) -> [(MB, % of peak)]
    lines = defaultdict(lambda: defaultdict(list))
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        peak = report["machine"].get("link_peak_h2d_gbps", 0)
        if not peak:
            print(f"{path}: no measured link peak; run without --no-link-measure", file=sys.stderr)
            return 1
        for r in report["results"]:
            if r.get("refused") or not r.get("h2d_gbps"):
                continue
            key = (r["strategy"], r.get("input_writes", "cached"))
            lines[r["engine"]][key].append((r["input_bytes"] / 1e6, 100 * r["h2d_gbps"] / peak))
    engines = sorted(lines)
    fig, axes = plt.subplots(1, len(engines), figsize=(6 * len(engines), 4.2), squeeze=False)
    for ax, engine in zip(axes[0], engines):
        for (strategy, writes), points in sorted(lines[engine].items()):
            points.sort()
            style = "-" if writes == "streaming" else ":"
            ax.plot([p[0] for p in points], [p[1] for p in points], style, marker="o",
                    label=f"{strategy} ({writes} writes)")
        ax.axhline(90, color="grey", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("input MB")
        ax.set_ylabel("host-to-device rate, % of link peak")
        ax.set_title(engine)
        ax.set_ylim(50, 102)
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
