"""How every plot of scripts/plot_*.py looks: each line a colour, marker and line style of its own,
so no line hides another (two with the same figures stay apart by their markers and dashes, in
grey print too), each bar group a hatch of its own, and log axes labelled with plain numbers
(2, 5, 10, 20), never 2x10^1.
"""
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "*", "h")
# Five line styles against twelve markers: the pair repeats only after sixty lines.
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
HATCHES = ("", "//", "..", "xx", "\\\\", "oo")


def line_style(index):
    """The index-th line's colour, marker and line style (matplotlib keywords): neighbours differ
    in all three, and no two of the first sixty lines share both marker and line style."""
    return {"color": COLOURS[index % len(COLOURS)], "marker": MARKERS[index % len(MARKERS)],
            "linestyle": LINE_STYLES[index % len(LINE_STYLES)]}


def hatch(index):
    return HATCHES[index % len(HATCHES)]


def plain_number(value):
    """A tick's label: 2, 5, 10, 20, 1,000, 0.5; never 2x10^1."""
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:g}"


def plain_log_axis(axis, ticks=None):
    """Plain labels on a log axis (ax.xaxis or ax.yaxis): at `ticks` (the data's own values, such as
    its sizes or client counts) where given, else at 1, 2 and 5 of each decade; no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    axis.set_major_locator(FixedLocator(sorted(set(ticks))) if ticks else LogLocator(base=10, subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: plain_number(value)))
    axis.set_minor_locator(NullLocator())


def pyplot(script):
    """matplotlib's pyplot, drawing to files only; without matplotlib, `script` stops in one line."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit(f"{script}: matplotlib is missing: install python3-matplotlib (apt), or "
                         "`pip install matplotlib` for a non-system python") from None
    return plt
