#!/usr/bin/env python3
"""Throughput of `ferry serve` under perf_analyzer against concurrency, one line per protocol and
where the tensors travel (the request body, system or CUDA shared memory), one panel per model,
from the tables scripts/summarise_perf_analyzer.py writes (one per run):

    python3 scripts/plot_serve.py OUT.png SUMMARY.md [SUMMARY.md...]

A later table's row of the same model, protocol, path and concurrency replaces an earlier one's,
and rows marked with a dagger (re-measured) are drawn hollow. Throughput is perf_analyzer's
infer/s: images for a batched model. Every line has a marker and line style of its own. A file
that is not such a table (a `ferry bench` report, or what scripts/collect_reports.py writes) is
refused in one line naming it.
"""
import pathlib
import sys

import plot_looks

NAME = "plot_serve.py"
PATHS = {"body": "tensors in the body", "system": "system shared memory", "cuda": "CUDA shared memory"}
COLUMNS = ("model", "protocol", "tensors", "clients", "infer/s")
EXPECTED = (f"a table of scripts/summarise_perf_analyzer.py (columns {', '.join(COLUMNS)}), not a ferry bench "
            "report (plot_bench.py and the other plot scripts take those)")


class Refused(Exception):
    """A file that is not a summary table; the message is one line naming it."""


def table_rows(path):
    """The summary's rows as dicts keyed by its header's column names; Refused where the file has
    no table with the summary's columns or a row that does not read."""
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise Refused(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    header, rows = None, []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise Refused(f"{path}: its table has no column {', '.join(missing)}: expected {EXPECTED}")
            continue
        row = dict(zip(header, cells))
        try:
            rows.append((row["model"], row["protocol"], PATHS[row["tensors"]], int(row["clients"]),
                         float(row["infer/s"].rstrip("†")), row["infer/s"].endswith("†")))
        except (KeyError, ValueError):
            raise Refused(f"{path}:{number}: a row that does not read ({line.strip()[:60]}...): expected "
                          f"{EXPECTED}") from None
    if header is None:
        raise Refused(f"{path} has no table: expected {EXPECTED}")
    return rows


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    runs, later = {}, set()
    try:
        for path in argv[2:]:
            for model, protocol, where, clients, rate, again in table_rows(path):
                key = (model, protocol, where)
                runs.setdefault(key, {})[clients] = rate
                if again:
                    later.add((*key, clients))
    except Refused as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return 2
    if not runs:
        print(f"{NAME}: no rows in " + ", ".join(argv[2:]), file=sys.stderr)
        return 2
    plt = plot_looks.pyplot(NAME)
    models = sorted({k[0] for k in runs})
    series = sorted({k[1:] for k in runs})
    styles = {key: plot_looks.line_style(i) for i, key in enumerate(series)}  # one per series, every panel
    fig, axes = plt.subplots(1, len(models), figsize=(7.5 * len(models), 4.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        clients = []
        for (m, protocol, where), points in sorted(runs.items()):
            if m != model:
                continue
            cs = sorted(points)
            clients += cs
            style = styles[(protocol, where)]
            ax.plot(cs, [points[c] for c in cs], label=f"{protocol}, {where}", markersize=6, **style)
            again = [c for c in cs if (m, protocol, where, c) in later]
            if again:
                ax.scatter(again, [points[c] for c in again], s=70, marker=style["marker"], facecolors="white",
                           edgecolors=style["color"], zorder=3)
        if any(k[0] == model for k in later):
            ax.plot([], [], "o", markerfacecolor="white", markeredgecolor="gray", label="hollow: re-measured")
        ax.set_xscale("log", base=2)
        plot_looks.plain_log_axis(ax.xaxis, clients)
        ax.set(xlabel="clients (perf_analyzer concurrency)", ylabel="inferences / s", title=f"ferry serve: {model}")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    print(f"{NAME}: wrote {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
