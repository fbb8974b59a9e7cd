#!/usr/bin/env python3
"""Plots a ferry bench JSON report (the layout of src/bench/report/report_json.cpp), one question
per picture:

  python3 scripts/plot_bench.py report.json out.png                    which strategy is fastest
                                                                       at each input size
  python3 scripts/plot_bench.py --view bandwidth report.json out.png   how close each comes to
                                                                       the link
(out.svg for SVG). `ferry bench --plot` draws the first. report.json is a report ferry wrote, or
one of the reports.json of scripts/collect_reports.py as reports.json#NAME (reports.md#NAME, the
link docs/RESULTS.md gives, reads the same); anything else is refused in one line.

strategies: one panel per engine, each strategy's figure against input size, log scales: the
median latency (whisker up to p90), or the rate in requests per second for a run whose objective
was throughput. bandwidth: one panel per engine, the bytes in and out per request over its median
latency against the measured link peak. Engines named "sparse:<fraction>" are drawn together in a
panel of latency against the touched fraction instead.

Every strategy keeps one colour, marker and line style in every panel; the points of one size are
spread a little sideways, so strategies with the same figure (pinned and registered, say) are all
seen rather than drawn over each other. Sizes are decimal (MB), as ferry writes them. Refused and
failed results are left out (the report lists them); noisy results have hollow markers. Log axes
are labelled with plain numbers (2, 5, 10, 20).
"""
import os
import sys
from collections import defaultdict

import plot_inputs  # beside this file wherever it is (the build and installation copy them with it)
import plot_looks

MB = 1e6  # decimal, as ferry writes every size (and reads --size 19MB)
SPARSE_PREFIX = "sparse:"
VIEWS = ("strategies", "bandwidth")
# ferry's strategies in their usual order (`ferry bench --help`): the order of the styles and the legend.
STRATEGY_ORDER = ("pageable", "staged", "pinned", "mapped", "registered", "registered-mapped", "managed",
                  "managed-prefetch", "managed-advise", "system", "device")
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "*", "h")
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
FLOOR_STYLE = {"color": "black", "marker": "*", "linestyle": "-"}  # the device-resident floor
DODGE = 0.05  # sideways spread of one size's points, a fraction of the size per series


def fail(message):
    sys.exit(f"plot_bench.py: {message}")


def load_measured(spec):
    """The report of `spec` (a report, or one of a collected reports.json: scripts/plot_inputs.py)
    and its measured results; stops in one line naming the file where it is not one."""
    try:
        name, report = plot_inputs.read_one_report(spec)
    except plot_inputs.Refused as e:
        fail(str(e))
    measured = plot_inputs.measured(report["results"])
    if not measured:
        fail(f"report '{name}' ({spec}) has no measured results to plot")
    return report, measured


def sparse_fraction(engine):
    """The fraction of a "sparse:<fraction>" engine, or None for any other engine."""
    if not engine.startswith(SPARSE_PREFIX):
        return None
    try:
        return float(engine[len(SPARSE_PREFIX):])
    except ValueError:
        return None


def series_name(r):
    """The strategy plus any non-default run settings, so different runs never share a line."""
    settings = [f"inflight {r['inflight']}" if r.get("inflight", 1) != 1 else "",
                f"clients {r['clients']}" if r.get("clients", 1) != 1 else "",
                f"{len(r['devices'])} GPUs" if len(r.get("devices", [])) > 1 else "",
                "graph" if r.get("graph") else "",
                "cached writes" if r.get("input_writes", "cached") == "cached" else ""]
    settings = [s for s in settings if s]
    return f"{r['strategy']} [{', '.join(settings)}]" if settings else r["strategy"]


def series_order(name):
    """Sort key: ferry's strategy order, then the settings."""
    strategy = name.split(" [", 1)[0]
    rank = STRATEGY_ORDER.index(strategy) if strategy in STRATEGY_ORDER else len(STRATEGY_ORDER)
    return rank, name


def plan_styles(names):
    """{series name: matplotlib style} for every series of the report, each different from all the
    others in colour, marker and line style together, the same in every panel."""
    styles = {}
    others = [n for n in sorted(set(names), key=series_order) if n != "device"]
    for i, name in enumerate(others):
        styles[name] = {"color": COLOURS[i % len(COLOURS)], "marker": MARKERS[i % len(MARKERS)],
                        "linestyle": LINE_STYLES[i % len(LINE_STYLES)]}
    if "device" in names:
        styles["device"] = dict(FLOOR_STYLE)
    return styles


def dodge(position, count):
    """The factor that spreads the `position`-th of `count` series around a size on a log axis."""
    return 1 + DODGE * (position - (count - 1) / 2)


def draw_series(ax, points, label, style, figure_of, whisker=None, spread=1.0):
    """points: (x, result) pairs of one series, drawn at x * spread; figure_of(result) is the y."""
    points = sorted(points, key=lambda p: p[0])
    xs = [x * spread for x, _ in points]
    ys = [figure_of(r) for _, r in points]
    common = dict(label=label, markersize=7, linewidth=1.6, alpha=0.9, **style)
    if whisker:
        upper = [max(whisker(r) - y, 0.0) for (_, r), y in zip(points, ys)]
        ax.errorbar(xs, ys, yerr=[[0.0] * len(ys), upper], capsize=3, **common)
    else:
        ax.plot(xs, ys, **common)
    # Hollow markers on top of noisy points: the figure had not settled when sampling stopped.
    noisy = [(x, y) for x, y, (_, r) in zip(xs, ys, points) if r.get("noisy")]
    if noisy:
        ax.scatter(*zip(*noisy), s=90, marker=style["marker"], facecolors="white", edgecolors=style["color"],
                   zorder=4)


def median_us(r):
    return r["latency_us"]["median"]


def bandwidth(r):
    """What crossed per request over the median's time, GB/s."""
    return (r["input_bytes"] + r.get("output_bytes", 0)) / (median_us(r) * 1e3)


def size_ticks(ax, sizes):
    plot_looks.plain_log_axis(ax.xaxis, sizes)


def plot_engine(ax, engine, results, styles, view, throughput, link_peak):
    series = defaultdict(list)
    for r in results:
        if view == "bandwidth" and (r["strategy"] == "device" or median_us(r) <= 0):
            continue  # the floor (`device`) crosses nothing
        series[series_name(r)].append((r["input_bytes"] / MB, r))
    names = sorted(series, key=series_order)
    for i, name in enumerate(names):
        spread = dodge(i, len(names))
        if view == "bandwidth":
            draw_series(ax, series[name], name, styles[name], bandwidth, spread=spread)
        elif throughput:
            draw_series(ax, series[name], name, styles[name], lambda r: r["throughput_per_s"], spread=spread)
        else:
            draw_series(ax, series[name], name, styles[name], median_us, lambda r: r["latency_us"]["p90"], spread)
    ax.set_xscale("log")
    size_ticks(ax, sorted({r["input_bytes"] / MB for r in results}))
    ax.set_xlabel("input size (MB; each size's points spread a little sideways)")
    if view == "bandwidth":
        if link_peak:
            ax.axhline(link_peak, color="black", linestyle="--", linewidth=1,
                       label=f"link peak, pinned ({link_peak:.1f} GB/s)")
        ax.set(title=f"{engine}: bytes in and out per request / median latency", ylabel="GB/s")
    elif throughput:
        ax.set(title=f"{engine}: throughput", ylabel="requests / s", yscale="log")
        plot_looks.plain_log_axis(ax.yaxis)
    else:
        ax.set(title=f"{engine}: median latency (whisker to p90)", ylabel="latency (µs)", yscale="log")
        plot_looks.plain_log_axis(ax.yaxis)


def plot_sparse(ax, results, styles):
    # One line per strategy: the inputs of a sparse sweep differ by their few index bytes only.
    series = defaultdict(list)
    for r in results:
        series[series_name(r)].append((sparse_fraction(r["engine"]), r))
    names = sorted(series, key=series_order)
    fractions = sorted({sparse_fraction(r["engine"]) for r in results})
    # Fractions are usually chosen by decades (0.001, 0.01, 0.1): spread them out when they are.
    spans_decades = fractions[0] > 0 and fractions[-1] / fractions[0] >= 10
    for i, name in enumerate(names):
        draw_series(ax, series[name], name, styles[name], median_us, lambda r: r["latency_us"]["p90"],
                    dodge(i, len(names)) if spans_decades else 1.0)
    table = max(r["input_bytes"] for r in results) / MB
    ax.set(title=f"sparse, {table:.3g} MB table: median latency by the fraction read (whisker to p90)",
           xlabel="fraction of the table's pages read", ylabel="latency (µs)", yscale="log",
           xscale="log" if spans_decades else "linear")
    plot_looks.plain_log_axis(ax.yaxis)
    if spans_decades:
        plot_looks.plain_log_axis(ax.xaxis, fractions)


def parse_arguments(argv):
    args = list(argv[1:])
    view = "strategies"
    if "--view" in args:
        at = args.index("--view")
        if at + 1 >= len(args) or args[at + 1] not in VIEWS:
            fail(f"--view takes {' or '.join(VIEWS)}")
        view = args[at + 1]
        del args[at:at + 2]
    if len(args) != 2:
        fail("usage: python3 scripts/plot_bench.py [--view strategies|bandwidth] report.json out.png|out.svg")
    return view, args[0], args[1]


def make_figure(plt, report, measured, view):
    """The figure of `view` for the report's measured results: one panel per engine (and one for a
    sparse sweep), one legend beside them."""
    engines = defaultdict(list)
    sparse = []
    for r in measured:
        (sparse if sparse_fraction(r["engine"]) is not None else engines[r["engine"]]).append(r)
    if view == "bandwidth":
        sparse = []  # a sparse read moves what it touches, not its table: no bandwidth to draw
        if not engines:
            fail("the report has only sparse engines: --view bandwidth has nothing to draw")

    machine = report.get("machine", {})
    throughput = report.get("objective") == "throughput"
    styles = plan_styles([series_name(r) for r in measured])
    panels = len(engines) + (1 if sparse else 0)
    columns = 1 if panels == 1 else 2
    rows = (panels + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(8 * columns + 2.5, 6.2 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, (engine, results) in zip(flat, sorted(engines.items())):
        plot_engine(ax, engine, results, styles, view, throughput, machine.get("link_peak_h2d_gbps") or 0)
    if sparse:
        plot_sparse(flat[len(engines)], sparse, styles)
    for ax in flat[panels:]:
        ax.set_visible(False)
    for ax in flat[:panels]:
        ax.grid(True, which="major", alpha=0.3)

    # One legend for the figure, beside the panels: every series has one style everywhere.
    handles = {}
    for ax in flat[:panels]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    ordered = sorted(handles, key=lambda n: (n.startswith("link peak"), series_order(n)))
    fig.legend([handles[n] for n in ordered], ordered, loc="upper left", bbox_to_anchor=(0.80, 0.93),
               fontsize="small", frameon=False)

    question = {"strategies": "which strategy is fastest at each input size",
                "bandwidth": "how close each strategy comes to the link"}[view]
    title = " · ".join(s for s in ("ferry bench", machine.get("gpu_name", ""), report.get("date", "")) if s)
    title += f"\n{question}"
    if any(r.get("noisy") for r in measured):
        title += " (hollow markers: noisy, the figure had not settled when sampling stopped)"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.80, 0.95))
    return fig


def main(argv):
    view, report_path, out_path = parse_arguments(argv)
    extension = os.path.splitext(out_path)[1].lower()
    if extension not in (".png", ".svg"):
        fail(f"output must end in .png or .svg, not '{extension or out_path}'")
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing: install python3-matplotlib (apt), "
             "or `pip install matplotlib` for a non-system python")
    report, measured = load_measured(report_path)
    make_figure(plt, report, measured, view).savefig(out_path, dpi=110)
    print(f"plot_bench.py: wrote {out_path}")


if __name__ == "__main__":
    main(sys.argv)
