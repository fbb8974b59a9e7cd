#!/usr/bin/env python3
"""Link efficiency against input size, from `ferry bench` reports of one-request-at-a-time cells:
each strategy's host-to-device rate as a share of the report's measured link peak (copy
strategies: the event-timed copy stage; zero-copy strategies: input bytes over the engine's
event-timed span), one line per strategy and input-write mode, one panel per engine. Each line
has a marker and line style of its own, and the points of one size are spread a little sideways,
so lines with the same figures (mapped and registered-mapped, say) are both seen.

    python3 scripts/plot_link.py OUT.png REPORT.json [REPORT.json ...]

Each REPORT is a report ferry wrote, the reports.json of scripts/collect_reports.py (all of its
reports) or one of them as reports.json#NAME (scripts/plot_inputs.py); each needs its measured
link peak (a run without --no-link-measure).
"""
import sys
from collections import defaultdict

import plot_inputs
import plot_looks

NAME = "plot_link.py"
DODGE = 0.012  # sideways spread of one size's points, a fraction of the size per series


def series(reports):
    """{engine: {(strategy, writes): [(input MB, % of link peak)]}}; raises plot_inputs.Refused for
    a report without a measured link peak."""
    lines = defaultdict(lambda: defaultdict(list))
    for name, report in reports:
        peak = report.get("machine", {}).get("link_peak_h2d_gbps") or 0
        if not peak:
            raise plot_inputs.Refused(f"report '{name}' has no measured link peak: expected a run without "
                                      "--no-link-measure")
        for r in plot_inputs.measured(report["results"]):
            if not r.get("h2d_gbps"):
                continue
            key = (r["strategy"], r.get("input_writes", "cached"))
            lines[r["engine"]][key].append((r["input_bytes"] / 1e6, 100 * r["h2d_gbps"] / peak))
    return lines


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    try:
        lines = series([item for spec in argv[2:] for item in plot_inputs.read_reports(spec)])
    except plot_inputs.Refused as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return 2
    if not lines:
        print(f"{NAME}: no cell with a host-to-device rate in {', '.join(argv[2:])}", file=sys.stderr)
        return 2
    plt = plot_looks.pyplot(NAME)
    engines = sorted(lines)
    keys = sorted({key for engine in engines for key in lines[engine]})
    styles = {key: plot_looks.line_style(i) for i, key in enumerate(keys)}  # one per series, every panel
    fig, axes = plt.subplots(1, len(engines), figsize=(6 * len(engines) + 2.5, 4.2), squeeze=False)
    for ax, engine in zip(axes[0], engines):
        sizes = []
        drawn = sorted(lines[engine].items())
        for i, (key, points) in enumerate(drawn):
            points.sort()
            sizes += [mb for mb, _ in points]
            spread = 1 + DODGE * (i - (len(drawn) - 1) / 2)
            strategy, writes = key
            ax.plot([p[0] * spread for p in points], [p[1] for p in points], label=f"{strategy} ({writes} writes)",
                    markersize=6, alpha=0.9, **styles[key])
        ax.axhline(90, color="grey", linewidth=0.8)
        ax.set_xscale("log")
        plot_looks.plain_log_axis(ax.xaxis, sizes)
        ax.set(xlabel="input MB (each size's points spread a little sideways)", ylabel="host-to-device rate, % of link peak", title=engine)
        ax.set_ylim(50, 102)
        ax.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for ax in axes[0][1:]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, h)
    fig.legend(list(seen.values()), list(seen), loc="upper left", bbox_to_anchor=(0.80, 0.95), fontsize="x-small",
               frameon=False)
    fig.tight_layout(rect=(0, 0, 0.80, 1))
    fig.savefig(out, dpi=110)
    print(f"{NAME}: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
