"""scripts/plot_bench.py draws one question per picture: one panel per engine, every strategy with a
style (colour, marker, line style) of its own, the same in every panel, and the points of one size
spread sideways so that equal figures do not hide each other, log axes with plain numbers; it takes
one report of what scripts/collect_reports.py writes. The styles, the spread and the inputs are
checked everywhere; the figures where matplotlib is importable (python3-matplotlib)."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import plot_bench  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None


def result(strategy, engine, mb, median, **extra):
    return {"strategy": strategy, "engine": engine, "input_bytes": int(mb * 1e6), "output_bytes": 8,
            "latency_us": {"median": median, "p90": median * 1.1}, "throughput_per_s": 1e6 / median,
            "inflight": 1, "clients": 1, "devices": [0], "graph": False, "input_writes": "streaming", **extra}


def report_with_ties():
    """Two engines; pinned and registered measure the same at every size (the case that hid lines)."""
    results = []
    for engine in ("reduce", "touch"):
        for mb in (0.6, 19, 64):
            for strategy in plot_bench.STRATEGY_ORDER:
                median = 30 * mb if strategy in ("pinned", "registered") else 40 * mb
                results.append(result(strategy, engine, mb, median))
    results.append(result("pinned", "reduce", 19, 600, inflight=2))  # another run setting: a series of its own
    return {"objective": "latency", "machine": {"gpu_name": "test GPU", "link_peak_h2d_gbps": 55}, "results": results}


class CollectedReports(unittest.TestCase):
    """What scripts/collect_reports.py writes: one of its reports by name, or refused in one line."""
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.dir = pathlib.Path(folder.name)
        for name in ("a", "b"):
            (self.dir / f"{name}.json").write_text(json.dumps(report_with_ties()))
        subprocess.run([sys.executable, ROOT / "scripts" / "collect_reports.py", self.dir], check=True,
                       capture_output=True, timeout=60)

    def test_one_report_of_a_collection_by_name(self):
        for spec in (f"{self.dir}/reports.json#b", f"{self.dir}/reports.md#b"):
            with self.subTest(spec=spec):
                report, measured = plot_bench.load_measured(spec)
                self.assertEqual(len(measured), len(report_with_ties()["results"]))

    def test_a_whole_collection_is_refused_in_one_line(self):
        with self.assertRaises(SystemExit) as refused:
            plot_bench.load_measured(self.dir / "reports.json")
        self.assertEqual(str(refused.exception), f"plot_bench.py: {self.dir}/reports.json holds 2 reports; name one "
                                                 f"as {self.dir}/reports.json#NAME (a, b)")

    def test_a_file_that_is_not_a_report_is_refused_in_one_line(self):
        with self.assertRaises(SystemExit) as refused:
            plot_bench.load_measured(ROOT / "README.md")
        self.assertEqual(str(refused.exception), f"plot_bench.py: {ROOT / 'README.md'} is not JSON: expected a ferry "
                                                 f"bench report (ferry bench --json) or the reports.json of "
                                                 f"scripts/collect_reports.py (whole, or one report as "
                                                 f"reports.json#NAME)")


class Styles(unittest.TestCase):
    def test_every_series_has_a_style_of_its_own(self):
        names = list(plot_bench.STRATEGY_ORDER) + ["pinned [inflight 2]", "mapped [clients 4]"]
        styles = plot_bench.plan_styles(names)
        self.assertEqual(set(styles), set(names))
        triples = {(s["color"], s["marker"], str(s["linestyle"])) for s in styles.values()}
        self.assertEqual(len(triples), len(names))
        self.assertEqual(styles["device"]["color"], "black")  # the floor stands apart
        # Neighbours in ferry's order differ in each of the three, not only in one.
        ordered = [styles[n] for n in sorted(names, key=plot_bench.series_order) if n != "device"]
        for a, b in zip(ordered, ordered[1:]):
            self.assertNotEqual(a["color"], b["color"])
            self.assertNotEqual(a["marker"], b["marker"])
            self.assertNotEqual(a["linestyle"], b["linestyle"])

    def test_the_styles_do_not_depend_on_the_order_results_come_in(self):
        names = ["managed", "pinned", "device", "staged"]
        self.assertEqual(plot_bench.plan_styles(names), plot_bench.plan_styles(list(reversed(names))))

    def test_the_points_of_one_size_spread_around_it(self):
        factors = [plot_bench.dodge(i, 11) for i in range(11)]
        self.assertEqual(factors, sorted(factors))
        self.assertEqual(len(set(factors)), 11)
        self.assertAlmostEqual(factors[5], 1.0)
        self.assertAlmostEqual(factors[0] * factors[-1], 1.0, delta=0.1)  # about as far either side
        self.assertLess(factors[-1], 1.5)  # still read as the same size


@unittest.skipIf(plt is None, "matplotlib is not importable (install python3-matplotlib)")
class Figures(unittest.TestCase):
    def lines(self, ax):
        """(label, colour, marker, line style, x data) of each series of a panel: the data line of each
        errorbar (which carries the label), and each plain labelled line."""
        def entry(label, line):
            return label, line.get_color(), line.get_marker(), line.get_linestyle(), list(line.get_xdata())
        found = [entry(c.get_label(), c.lines[0]) for c in ax.containers if hasattr(c, "lines")]
        return found + [entry(line.get_label(), line) for line in ax.get_lines() if not line.get_label().startswith("_")]

    def test_one_panel_per_engine_no_series_drawn_over_another(self):
        report = report_with_ties()
        figure = plot_bench.make_figure(plt, report, report["results"], "strategies")
        panels = [ax for ax in figure.axes if ax.get_visible()]
        self.assertEqual([ax.get_title() for ax in panels],
                         ["reduce: median latency (whisker to p90)", "touch: median latency (whisker to p90)"])
        for ax in panels:
            lines = self.lines(ax)
            self.assertEqual(len({(c, m, s) for _, c, m, s, _ in lines}), len(lines), ax.get_title())
            tied = {label: xs for label, _, _, _, xs in lines if label in ("pinned", "registered")}
            for a, b in zip(tied["pinned"], tied["registered"]):
                self.assertNotEqual(a, b)  # the same figure, drawn side by side
        styles = {label: (c, m, s) for ax in panels for label, c, m, s, _ in self.lines(ax)}
        for ax in panels:  # one style per series across the panels
            for label, c, m, s, _ in self.lines(ax):
                self.assertEqual(styles[label], (c, m, s))
        self.assertIn("which strategy is fastest at each input size", figure._suptitle.get_text())
        plt.close(figure)

    def test_the_bandwidth_view_leaves_the_floor_out_and_draws_the_link(self):
        report = report_with_ties()
        figure = plot_bench.make_figure(plt, report, report["results"], "bandwidth")
        panels = [ax for ax in figure.axes if ax.get_visible()]
        self.assertEqual(len(panels), 2)
        labels = [label for label, *_ in self.lines(panels[0])]
        self.assertNotIn("device", labels)
        self.assertIn("link peak, pinned (55.0 GB/s)", labels)
        plt.close(figure)

    def test_log_axes_read_plain_numbers(self):
        report = report_with_ties()
        figure = plot_bench.make_figure(plt, report, report["results"], "strategies")
        figure.canvas.draw()
        ax = [ax for ax in figure.axes if ax.get_visible()][0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["0.6", "19", "64"])
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        self.assertTrue(labels)
        for label in labels:
            self.assertRegex(label, r"^[0-9.,]+$")  # 20, 50, 100, never 2x10^1
        plt.close(figure)

    def test_an_unknown_view_is_refused(self):
        with self.assertRaises(SystemExit) as refused:
            plot_bench.parse_arguments(["plot_bench.py", "--view", "pie", "r.json", "r.png"])
        self.assertIn("--view takes strategies or bandwidth", str(refused.exception))


if __name__ == "__main__":
    unittest.main()
