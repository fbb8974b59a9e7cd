"""scripts/gpu/serve_buckets_summary.py: the serve-buckets set's summary from perf_analyzer's CSVs,
the bench's JSON, the bucket counters and the front end's own round trip, with the checks the
buckets are held to computed right (met and missed alike), and one line when the folder holds no
run."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "scripts" / "gpu" / "serve_buckets_summary.py"
HEADER = "Concurrency,Inferences/Second,Client Send,p50 latency,p90 latency,p95 latency,p99 latency\n"


def write_pa(folder, stem, images_per_s, p50_us, p99_us):
    (folder / f"{stem}.csv").write_text(HEADER + f"1,{images_per_s},0,{p50_us},{p99_us},{p99_us},{p99_us}\n")


def summarise(folder):
    return subprocess.run([sys.executable, str(SUMMARY), str(folder)], capture_output=True, text=True)


class ServeBucketsSummary(unittest.TestCase):
    def test_checks_are_met_or_missed_by_their_figures(self):
        with tempfile.TemporaryDirectory() as d:
            folder = pathlib.Path(d)
            (folder / "bench-m-b1.json").write_text(json.dumps(
                {"results": [{"strategy": "device", "latency_us": {"median": 1000.0}}]}))
            write_pa(folder, "m_b16-b1-c1", 900, 1100, 1300)       # 1.10x the bench: met
            write_pa(folder, "m_b16_before-b1-c1", 600, 1700, 1900)  # 1.70x: missed
            write_pa(folder, "m_b16-b1-c16", 8400, 1900, 2500)
            write_pa(folder, "m_b16-b1-c64", 9500, 6000, 8000)
            write_pa(folder, "m_b16-b16-c16", 10000, 20000, 25000)  # 95%: met
            write_pa(folder, "m_b16-mixed-b1-c32", 3000, 9000, 12000)
            write_pa(folder, "m_b16-mixed-b16-c4", 5000, 12000, 15000)  # 80%: missed
            write_pa(folder, "m_b64_t5-b1-c64", 9000, 4000, 4900)
            (folder / "m_b16-buckets.txt").write_text(
                'ferry_padded_rows_total{model="m_b16",version="1"} 7\n'
                'ferry_bucket_executions_total{model="m_b16",version="1",bucket="1"} 40\n'
                'ferry_bucket_executions_total{model="m_b16",version="1",bucket="16"} 9\n')
            write_pa(folder, "frontend_grpc-b1-c1", 2000, 450, 600)
            (folder / "frontend_grpc-b1-c1.txt").write_text("  Server:\n    Avg request latency: 30 usec\n")
            (folder / "checks.txt").write_text("m_b16 batch 3: ok\n")
            result = summarise(folder)
            self.assertEqual(result.returncode, 0, result.stderr)
            text = result.stdout
            b16 = next(line for line in text.splitlines() if line.startswith("| b16 |"))
            self.assertIn("1.10 (met)", b16)
            self.assertIn("0.95 (met)", b16)
            self.assertIn("0.80 (MISSED)", b16)
            self.assertIn("1: 40, 16: 9; padded 7", b16)
            self.assertEqual([cell.strip() for cell in b16.split("|")[5:7]], ["8400", "9500"])  # x16, x64
            before = next(line for line in text.splitlines() if line.startswith("| b16_before |"))
            self.assertIn("1.70 (MISSED)", before)
            target = next(line for line in text.splitlines() if line.startswith("| target 5 ms |"))
            self.assertEqual(target.split("|")[2].strip(), "9000")
            self.assertIn("m_b16 batch 3: ok", text)
            front = next(line for line in text.splitlines() if line.startswith("| gRPC, CUDA shared memory |"))
            self.assertEqual([cell.strip() for cell in front.split("|")[2:5]], ["0.450", "0.030", "0.420"])
            self.assertNotIn("HTTP, in the body", text)  # not measured, not shown

    def test_a_folder_without_a_run_is_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            result = summarise(pathlib.Path(d))
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("no perf_analyzer CSV", result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
