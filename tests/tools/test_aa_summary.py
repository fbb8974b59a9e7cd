"""scripts/gpu/aa_summary.py: the A/A and A/B rates of `ferry bench compare` on both figures, from
comparisons written as `ferry bench compare --json` writes them, and from older ones without the
GPU figure (end to end only)."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "scripts" / "gpu" / "aa_summary.py"
BIG = 16 << 20


def figure(verdict, change, threshold=0.03):
    return {"verdict": verdict, "change": change, "threshold": threshold, "noise_a": 0.01, "noise_b": 0.01,
            "between_trials": False}


def cell(label, size, end_to_end, gpu=None):
    c = {"label": label, "input_bytes": size, "figure": "end-to-end"} | end_to_end
    c["gpu"] = None if gpu is None else {"figure": "gpu"} | gpu
    return c


def summarise(comparisons, runs):
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d)
        (out / "aa-runs.txt").write_text("\n".join(runs) + "\n")
        for (x, y), cells in comparisons.items():
            (out / f"aa-compare-{x}-{y}.json").write_text(json.dumps({"cells": cells}))
        result = subprocess.run([sys.executable, SUMMARY, out], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout


class BothFigures(unittest.TestCase):
    def test_rates_on_each_figure(self):
        # A/A: one cell of two called different end to end (the host), none on the GPU.
        aa = [cell("reduce / 19 MB / pageable", BIG + 1, figure("worse", 0.12), figure("same", 0.001)),
              cell("reduce / 600 KB / pinned", 600_000, figure("same", 0.01), figure("same", 0.0))]
        # A/B: of the two cells of 16 MB and up, the GPU finds both, end to end one; the small
        # cell does not count.
        ab = [cell("reduce / 19 MB / pageable", BIG + 1, figure("same", 0.04, 0.13), figure("worse", 0.10)),
              cell("reduce / 19 MB / pinned", BIG + 1, figure("worse", 0.10), figure("worse", 0.10)),
              cell("reduce / 600 KB / pinned", 600_000, figure("same", 0.02), figure("same", 0.0))]
        text = summarise({("A1", "B1"): ab, ("A1", "A2"): aa}, ["A1", "B1", "A2"])
        self.assertIn("A/A A1 vs A2: 1 of 2 cells called different end to end, 0 of 2 on the GPU", text)
        self.assertIn("false difference rate (A/A, every cell), end to end: 1 of 2 = 50.0%; on the GPU: 0 of 2 = 0.0%",
                      text)
        self.assertIn("A/B A1 vs B1 (expected: worse), cells of 16 MB and up: 2 of 2 found on the GPU where its "
                      "figure is its own, 0 of 0 where the host takes part, 1 of 2 end to end", text)
        self.assertIn("true difference rate (A/B and B/A, 10%, cells of 16 MB and up), on the GPU: 2 of 2 = 100.0%; "
                      "end to end: 1 of 2 = 50.0%", text)

    def test_cells_whose_gpu_figure_the_host_takes_part_in_are_counted_apart(self):
        own = cell("reduce / 19 MB / pinned", BIG + 1, figure("same", 0.04, 0.2), figure("worse", 0.10))
        hosted = cell("reduce / 19 MB / managed", BIG + 1, figure("same", 0.04, 0.2), figure("same", 0.10, 0.3))
        hosted["gpu_host_part"] = "the GPU's page faults are serviced by the driver on the CPU"
        text = summarise({("A1", "B1"): [own, hosted]}, ["A1", "B1"])
        self.assertIn("1 of 1 found on the GPU where its figure is its own, 0 of 1 where the host takes part, "
                      "0 of 2 end to end", text)
        self.assertIn("on the GPU: 1 of 1 = 100.0%; end to end: 0 of 2 = 0.0%", text)
        self.assertIn("beside it, on the GPU where the host takes part in the figure: 0 of 1 = 0.0%", text)

    def test_a_a_on_the_gpu_is_also_given_over_the_cells_whose_figure_is_its_own(self):
        own = cell("reduce / 19 MB / pinned", BIG + 1, figure("same", 0.01), figure("same", 0.01))
        hosted = cell("reduce / 600 KB / mapped", 600_000, figure("worse", 0.08), figure("worse", 0.08))
        hosted["gpu_host_part"] = "a GPU span of 22 µs is under 10 of the host's CUDA-call probes"
        text = summarise({("A1", "A2"): [own, hosted]}, ["A1", "A2"])
        self.assertIn("on the GPU: 1 of 2 = 50.0% (target: at most 5%)", text)
        self.assertIn("on the GPU, over the cells whose figure is its own: 0 of 1 = 0.0%", text)

    def test_each_strategy_says_its_noise_how_often_it_was_found_and_how_much_slower_b_came_out(self):
        def pinned(verdict, change, noise):
            g = figure(verdict, change) | {"noise_a": noise, "noise_b": 0.004}
            return cell("reduce / 19 MB / pinned", BIG + 1, figure("same", change, 0.2), g)
        # A1 -> B1 worse by 10%; B1 -> A2 better by 1/(1 + -0.0826) - 1 = +9.0% B over A, missed.
        text = summarise({("A1", "B1"): [pinned("worse", 0.10, 0.01)], ("B1", "A2"): [pinned("same", -0.0826, 0.02)]},
                         ["A1", "B1", "A2"])
        self.assertIn("  pinned: 0.4-2.0%; 1 of 2; +9.0 to +10.0%", text)

    def test_older_comparisons_count_end_to_end_only(self):
        old = [{"label": "reduce / 19 MB / pinned", "input_bytes": BIG + 1} | figure("worse", 0.10)]
        text = summarise({("A1", "B1"): old}, ["A1", "B1"])
        self.assertIn("on the GPU: unknown (no cell with the figure); end to end: 1 of 1 = 100.0%", text)
        self.assertIn("no comparison carries the GPU figure", text)


if __name__ == "__main__":
    unittest.main()
