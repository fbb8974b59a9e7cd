#!/usr/bin/env python3
"""Bar chart of throughput on one GPU against several, from pairs of `ferry bench` reports.

    python3 scripts/plot_scaling.py OUT.png LABEL ONE.json MANY.json [LABEL ONE.json MANY.json ...]

Each pair is the same workload and strategies run with `--devices 0` and with `--devices 0,1`;
bars are grouped per (label, strategy) and annotated with the ratio many/one. ONE and MANY are
reports ferry wrote, or reports of the reports.json of scripts/collect_reports.py named as
reports.json#NAME (a collected file that holds one report is taken whole; scripts/plot_inputs.py).
"""
import sys

import plot_inputs
import plot_looks

NAME = "plot_scaling.py"


def throughputs(spec):
    """{strategy: requests/s} of one report's measured cells, and its GPU count."""
    name, report = plot_inputs.read_one_report(spec)
    cells = [r for r in plot_inputs.measured(report["results"]) if r.get("throughput_per_s")]
    if not cells:
        raise plot_inputs.Refused(f"report '{name}' has no measured throughput: expected a run with "
                                  "--objective throughput")
    gpus = max(len(r.get("devices", [0])) for r in cells)
    return {r["strategy"]: r["throughput_per_s"] for r in cells}, gpus


def main(argv):
    if len(argv) < 5 or (len(argv) - 2) % 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, rest = argv[1], argv[2:]
    names, one, many, gpus = [], [], [], set()
    try:
        for i in range(0, len(rest), 3):
            label, (a, a_gpus), (b, b_gpus) = rest[i], throughputs(rest[i + 1]), throughputs(rest[i + 2])
            gpus.add((a_gpus, b_gpus))
            for strategy in a:
                if strategy in b:
                    names.append(f"{label}\n{strategy}")
                    one.append(a[strategy])
                    many.append(b[strategy])
    except plot_inputs.Refused as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return 2
    if not names:
        print(f"{NAME}: no strategy was measured in both reports of any pair", file=sys.stderr)
        return 2
    plt = plot_looks.pyplot(NAME)
    # The pairs' GPU counts name the bars where every pair has the same ones.
    few, more = (f"{a} GPU{'s' if a > 1 else ''}" for a in next(iter(gpus))) if len(gpus) == 1 else ("ONE", "MANY")
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 4.5))
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], one, 0.4, label=few, hatch=plot_looks.hatch(0), edgecolor="black", linewidth=0.5)
    ax.bar([i + 0.2 for i in x], many, 0.4, label=more, hatch=plot_looks.hatch(1), edgecolor="black", linewidth=0.5)
    for i in x:
        ax.annotate(f"{many[i] / one[i]:.2f}x", (i + 0.2, many[i]), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(x), names, fontsize=7)
    ax.set_yscale("log")
    plot_looks.plain_log_axis(ax.yaxis)
    ax.set_ylabel("requests / s (log)")
    ax.set_title(f"Throughput, {few} against {more} (same slots and clients per GPU)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"{NAME}: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
