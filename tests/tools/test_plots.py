"""Every scripts/plot_*.py on what scripts/collect_reports.py writes: it draws from the collected
reports.json (whole, or one report as reports.json#NAME) and says where it wrote, or refuses the
file in one line naming it and what it expected; each line of a plot has a marker and a line style
of its own; log axes read 2, 5, 10, 20, never 2x10^1. Refusals are checked everywhere, the figures
where matplotlib is importable (python3-matplotlib)."""
import contextlib
import io
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))
import plot_concurrency  # noqa: E402
import plot_inputs  # noqa: E402
import plot_link  # noqa: E402
import plot_looks  # noqa: E402
import plot_scaling  # noqa: E402
import plot_serve  # noqa: E402
import plot_unified_memory_claim  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

COVERED = {"plot_bench.py": "test_plot_bench.py", "plot_concurrency.py": "Concurrency", "plot_link.py": "Link",
           "plot_scaling.py": "Scaling", "plot_serve.py": "Serve", "plot_unified_memory_claim.py": "UnifiedMemoryClaim"}


def cell(strategy, engine="reduce", mb=16, **extra):
    return {"strategy": strategy, "engine": engine, "input_bytes": int(mb * 1e6), "output_bytes": 8,
            "latency_us": {"median": 100.0, "p90": 110.0}, "inflight": 1, "clients": 1, "devices": [0],
            "input_writes": "streaming", **extra}


def report(results, objective="latency", peak=55.0):
    return {"schema_version": 1, "objective": objective, "machine": {"gpu_name": "test GPU", "link_peak_h2d_gbps": peak},
            "results": results}


def collected(folder, reports):
    """Writes each NAME.json into `folder` and collects them with scripts/collect_reports.py."""
    folder = pathlib.Path(folder)
    for name, data in reports.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
        (folder / f"{name}.md").write_text(f"# ferry bench report\n\n{name}\n\n| engine | input | strategy |\n"
                                           "|:---|---:|:---|\n| reduce | 16 MB | pinned |\n")
    subprocess.run([sys.executable, SCRIPTS / "collect_reports.py", folder], check=True, capture_output=True,
                   timeout=60)
    return folder / "reports.json"


def run_script(script, *args):
    return subprocess.run([sys.executable, SCRIPTS / script, *map(str, args)], capture_output=True, text=True,
                          timeout=120)


class Harness(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.dir = pathlib.Path(folder.name)
        self.out = self.dir / "out.png"

    def draw(self, module, *args):
        """Runs the script's main in this process; returns (exit code, stdout, the figure it drew)."""
        before = set(plt.get_fignums())
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            code = module.main([module.NAME, str(self.out), *map(str, args)])
        new = sorted(set(plt.get_fignums()) - before)
        figure = plt.figure(new[-1]) if new else None
        if figure is not None:
            self.addCleanup(plt.close, figure)
            figure.canvas.draw()
        return code, stdout.getvalue(), figure

    def assert_wrote(self, code, stdout, script):
        self.assertEqual(code, 0)
        self.assertEqual(stdout, f"{script}: wrote {self.out}\n")
        self.assertTrue(self.out.exists())

    def assert_refused(self, script, *args, says):
        result = run_script(script, self.out, *args)
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)  # one line, no traceback
        self.assertTrue(result.stderr.startswith(f"{script}: "), result.stderr)
        self.assertIn(says, result.stderr)
        self.assertFalse(self.out.exists())

    def assert_lines_apart(self, ax):
        lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
        self.assertGreater(len(lines), 1)
        looks = {(line.get_marker(), str(line.get_linestyle())) for line in lines}
        self.assertEqual(len(looks), len(lines), [line.get_label() for line in lines])

    def assert_plain_ticks(self, axis, expected=None):
        labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
        self.assertTrue(labels)
        for label in labels:
            self.assertRegex(label, r"^[0-9.,]+$")  # never 2x10^1 or $10^{1}$
        if expected is not None:
            self.assertEqual(labels, expected)


class Looks(unittest.TestCase):
    def test_sixty_lines_have_sixty_looks_and_neighbours_differ_in_each(self):
        looks = [plot_looks.line_style(i) for i in range(60)]
        self.assertEqual(len({(s["marker"], str(s["linestyle"])) for s in looks}), 60)
        for a, b in zip(looks, looks[1:]):
            self.assertNotEqual(a["marker"], b["marker"])
            self.assertNotEqual(a["linestyle"], b["linestyle"])
            self.assertNotEqual(a["color"], b["color"])

    def test_numbers_are_plain(self):
        self.assertEqual([plot_looks.plain_number(v) for v in (2, 5.0, 10, 20, 12500, 0.6, 0.05)],
                         ["2", "5", "10", "20", "12,500", "0.6", "0.05"])

    def test_every_plot_script_is_tested_here(self):
        self.assertEqual(sorted(p.name for p in SCRIPTS.glob("plot_*.py") if p.name not in ("plot_inputs.py",
                                                                                              "plot_looks.py")),
                         sorted(COVERED))


class Inputs(Harness):
    def test_a_report_a_collection_and_one_of_it(self):
        one = report([cell("pinned")])
        path = collected(self.dir, {"a": one, "b": report([cell("mapped")])})
        self.assertEqual([name for name, _ in plot_inputs.read_reports(path)], ["a", "b"])
        self.assertEqual(plot_inputs.read_reports(f"{path}#b")[0][1]["results"][0]["strategy"], "mapped")
        self.assertEqual(plot_inputs.read_reports(self.dir / "reports.md#a")[0][0], "a")  # RESULTS.md's link
        single = self.dir / "single.json"
        single.write_text(json.dumps(one))
        self.assertEqual(plot_inputs.read_one_report(single)[0], "single")

    def test_what_is_not_a_report_is_refused_naming_the_file(self):
        path = collected(self.dir, {"a": report([cell("pinned")]), "b": report([cell("mapped")])})
        profile = self.dir / "profile.json"
        profile.write_text('{"curves": []}')
        cases = {self.dir / "reports.md": "is not JSON: expected a ferry bench report",
                 profile: "is a calibration profile (ferry calibrate): expected a ferry bench report",
                 f"{path}#c": "has no report 'c': it holds a, b",
                 self.dir / "absent.json": "cannot read"}
        for spec, says in cases.items():
            with self.subTest(spec=spec):
                with self.assertRaises(plot_inputs.Refused) as refused:
                    plot_inputs.read_reports(spec)
                self.assertIn(str(spec).split("#")[0], str(refused.exception))
                self.assertIn(says, str(refused.exception))
        with self.assertRaises(plot_inputs.Refused) as refused:
            plot_inputs.read_one_report(path)
        self.assertEqual(str(refused.exception), f"{path} holds 2 reports; name one as {path}#NAME (a, b)")


class Concurrency(Harness):
    def reports(self):
        runs = {}
        for clients in (2, 8, 16):
            runs[f"c{clients}"] = report([cell(s, clients=clients, inflight=n, throughput_per_s=100.0 * clients)
                                          for s, n in (("managed-prefetch", 1), ("pinned", 1), ("pinned", 4))],
                                         objective="throughput")
        return collected(self.dir, runs)

    @unittest.skipIf(plt is None, "matplotlib is not importable (install python3-matplotlib)")
    def test_draws_from_the_collected_reports(self):
        code, stdout, figure = self.draw(plot_concurrency, self.reports())
        self.assert_wrote(code, stdout, "plot_concurrency.py")
        ax = figure.axes[0]
        self.assert_lines_apart(ax)  # the three lines have the same figures: only their looks tell them apart
        self.assert_plain_ticks(ax.xaxis, ["2", "8", "16"])

    def test_refuses_what_is_not_a_report(self):
        (self.dir / "notes.md").write_text("# notes\n")
        self.assert_refused("plot_concurrency.py", self.dir / "notes.md", says="notes.md is not JSON")

    def test_refuses_reports_without_throughput(self):
        path = collected(self.dir, {"a": report([cell("pinned")])})
        self.assert_refused("plot_concurrency.py", path, says="no measured throughput cells")


class Link(Harness):
    def reports(self, peak=55.0):
        results = [cell(s, engine=e, mb=mb, h2d_gbps=40.0 if "mapped" in s else 52.0)
                   for e in ("reduce", "touch") for mb in (16, 19, 64)
                   for s in ("pinned", "registered", "mapped", "registered-mapped")]
        return collected(self.dir, {"link": report(results, peak=peak), "cached": report(
            [cell("pinned", mb=mb, h2d_gbps=48.0, input_writes="cached") for mb in (16, 19, 64)], peak=peak)})

    @unittest.skipIf(plt is None, "matplotlib is not importable (install python3-matplotlib)")
    def test_says_where_it_wrote_and_no_line_hides_another(self):
        code, stdout, figure = self.draw(plot_link, self.reports())
        self.assert_wrote(code, stdout, "plot_link.py")
        panels = [ax for ax in figure.axes if ax.get_title()]
        self.assertEqual([ax.get_title() for ax in panels], ["reduce", "touch"])
        for ax in panels:
            self.assert_lines_apart(ax)
            lines = {line.get_label(): line for line in ax.get_lines()}
            # mapped and registered-mapped measured the same: drawn side by side, not one over the other
            self.assertNotEqual(list(lines["mapped (streaming writes)"].get_xdata()),
                                list(lines["registered-mapped (streaming writes)"].get_xdata()))
            self.assert_plain_ticks(ax.xaxis, ["16", "19", "64"])

    def test_refuses_a_report_without_its_link_peak(self):
        self.assert_refused("plot_link.py", self.reports(peak=0), says="has no measured link peak")


class Scaling(Harness):
    def reports(self):
        return collected(self.dir, {
            "one": report([cell(s, throughput_per_s=1000.0) for s in ("pinned", "device")], "throughput"),
            "many": report([cell(s, devices=[0, 1], throughput_per_s=1990.0) for s in ("pinned", "device")],
                           "throughput")})

    @unittest.skipIf(plt is None, "matplotlib is not importable (install python3-matplotlib)")
    def test_draws_a_pair_named_in_the_collection(self):
        path = self.reports()
        code, stdout, figure = self.draw(plot_scaling, "mlp", f"{path}#one", f"{path}#many")
        self.assert_wrote(code, stdout, "plot_scaling.py")
        ax = figure.axes[0]
        self.assertEqual([t.get_text() for t in ax.get_legend().get_texts()], ["1 GPU", "2 GPUs"])
        self.assertEqual(len({p.get_hatch() for p in ax.patches}), 2)  # the two bars apart in grey print too
        self.assert_plain_ticks(ax.yaxis)

    def test_a_whole_collection_is_refused_naming_its_reports(self):
        path = self.reports()
        self.assert_refused("plot_scaling.py", "mlp", path, f"{path}#many",
                            says=f"holds 2 reports; name one as {path}#NAME (many, one)")


class UnifiedMemoryClaim(Harness):
    def reports(self):
        runs = {}
        for batch in (8, 16):
            runs[f"seed-b{batch}-c16-one"] = report(
                [cell(s, throughput_per_s=v / batch) for s, v in (("managed-prefetch", 3000), ("pinned", 4000))],
                "throughput")
            runs[f"seed-b{batch}-c16-auto"] = report([cell("pinned", inflight=6, throughput_per_s=12000 / batch)],
                                                     "throughput")
        return collected(self.dir, runs)

    @unittest.skipIf(plt is None, "matplotlib is not importable (install python3-matplotlib)")
    def test_draws_from_the_folder_or_its_reports_json(self):
        path = self.reports()
        for where in (path.parent, path):
            with self.subTest(where=where):
                code, stdout, figure = self.draw(plot_unified_memory_claim, where)
                self.assert_wrote(code, stdout, "plot_unified_memory_claim.py")
                ax = figure.axes[0]
                self.assertIn("the unified-memory recipe", ax.get_title())
                self.assertIn("managed-prefetch, 1 context (the unified-memory recipe)",
                              [t.get_text() for t in ax.get_legend().get_texts()])
                self.assertNotIn("seed", ax.get_title() + " ".join(t.get_text() for t in ax.get_legend().get_texts()))
                self.assertEqual(len({p.get_hatch() for p in ax.patches}), 3)

    def test_refuses_reports_of_another_set(self):
        path = collected(self.dir, {"other": report([cell("pinned", throughput_per_s=1.0)], "throughput")})
        self.assert_refused("plot_unified_memory_claim.py", path, says="expected the seed-claim set's")


class Serve(Harness):
    TABLE = "| model | batch | protocol | tensors | clients | infer/s |\n|---|---:|---|---|---:|---:|\n" + "".join(
        f"| m | 16 | {p} | {t} | {c} | 1000 |\n" for p in ("http", "grpc") for t in ("body", "system", "cuda")
        for c in (1, 4, 16, 64))

    @unittest.skipIf(plt is None, "matplotlib is not importable (install python3-matplotlib)")
    def test_draws_a_summary_table(self):
        table = self.dir / "perf_analyzer.md"
        table.write_text(self.TABLE)
        code, stdout, figure = self.draw(plot_serve, table)
        self.assert_wrote(code, stdout, "plot_serve.py")
        ax = figure.axes[0]
        self.assert_lines_apart(ax)  # six lines, all at the same figures
        self.assert_plain_ticks(ax.xaxis, ["1", "4", "16", "64"])

    def test_refuses_what_collect_reports_writes(self):
        path = collected(self.dir, {"a": report([cell("pinned")])})
        self.assert_refused("plot_serve.py", path, says="has no table: expected a table of "
                                                        "scripts/summarise_perf_analyzer.py")
        self.assert_refused("plot_serve.py", path.with_suffix(".md"), says="its table has no column model")


if __name__ == "__main__":
    unittest.main()
