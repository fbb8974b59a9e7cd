"""scripts/check_results_topics.py: a listed topic that is missing from docs/RESULTS.md, or that
names no date, host or command, fails the check with one line naming it; so does a topic the list
does not name."""
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_results_topics.py"
spec = importlib.util.spec_from_file_location("check_results_topics", SCRIPT)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

RESULTS = textwrap.dedent("""\
    # Measured results

    ## Reading a report
    Every cell carries its noise.

    ## Strategies
    *2026-11-30, `nvidia-h200`, `scripts/gpu_host.sh OUT matrix`.* Pinned is fastest.

    ## Fuzzing
    *2026-11-30, development machine, no GPU.* `FUZZ_TIME=60 scripts/fuzz.sh --ci`: no findings.
    """)
TOPICS = "# the topics\n\nguide: Reading a report\nStrategies\nFuzzing\n"


class Problems(unittest.TestCase):
    def test_every_listed_topic_with_its_date_host_and_command_passes(self):
        self.assertEqual(check.problems(RESULTS, TOPICS), [])

    def test_a_listed_topic_that_was_deleted_is_named(self):
        results = RESULTS.replace("## Strategies\n", "## Strategies, renamed\n")
        self.assertEqual(check.problems(results, TOPICS), [
            "docs/RESULTS.md: topic 'Strategies' is missing (listed in docs/results-topics.txt); restore it, or "
            "remove it from both files on purpose",
            "docs/RESULTS.md: topic 'Strategies, renamed' is not listed in docs/results-topics.txt; add it there"])

    def test_a_topic_without_its_date_host_or_command_says_which(self):
        cases = {
            "2026-11-30, ": "date (YYYY-MM-DD)",
            "`nvidia-h200`, ": "host",
            "`scripts/gpu_host.sh OUT matrix`": "command in backquotes",
        }
        for removed, named in cases.items():
            with self.subTest(removed=removed):
                found = check.problems(RESULTS.replace(removed, "", 1), TOPICS)
                self.assertEqual(found, [f"docs/RESULTS.md: topic 'Strategies' names no {named}"])

    def test_everything_missing_is_named_in_one_line(self):
        results = RESULTS.replace("*2026-11-30, `nvidia-h200`, `scripts/gpu_host.sh OUT matrix`.* ", "")
        self.assertEqual(check.problems(results, TOPICS), [
            "docs/RESULTS.md: topic 'Strategies' names no date (YYYY-MM-DD), no host, no command in backquotes"])

    def test_a_flag_or_a_word_in_backquotes_is_not_a_command(self):
        results = RESULTS.replace("`scripts/gpu_host.sh OUT matrix`", "`--max-time` and `pinned`")
        self.assertEqual(check.problems(results, TOPICS),
                         ["docs/RESULTS.md: topic 'Strategies' names no command in backquotes"])

    def test_commands_with_settings_in_front_count(self):
        for command in ("`AA_FLAGS=\"--max-time 3 --no-link-measure\" AA_BUDGET=490 scripts/gpu_host.sh OUT aa`",
                        "`ferry bench --engine reduce`", "`python3 scripts/plot_bench.py r.md r.png`"):
            with self.subTest(command=command):
                results = RESULTS.replace("`scripts/gpu_host.sh OUT matrix`", command)
                self.assertEqual(check.problems(results, TOPICS), [])

    def test_a_guide_needs_only_to_be_present(self):
        self.assertEqual(check.problems(RESULTS.replace("## Reading a report\n", "## Reading\n"), TOPICS), [
            "docs/RESULTS.md: topic 'Reading a report' is missing (listed in docs/results-topics.txt); restore it, "
            "or remove it from both files on purpose",
            "docs/RESULTS.md: topic 'Reading' is not listed in docs/results-topics.txt; add it there"])


class Script(unittest.TestCase):
    def run_check(self, results, topics):
        with tempfile.TemporaryDirectory() as tmp:
            results_path, topics_path = pathlib.Path(tmp, "RESULTS.md"), pathlib.Path(tmp, "topics.txt")
            results_path.write_text(results)
            topics_path.write_text(topics)
            return subprocess.run([sys.executable, SCRIPT, "--results", results_path, "--topics", topics_path],
                                  capture_output=True, text=True, timeout=60)

    def test_exit_code_and_lines(self):
        passed = self.run_check(RESULTS, TOPICS)
        self.assertEqual(passed.returncode, 0, passed.stdout + passed.stderr)
        self.assertIn("all 3 listed topics present", passed.stdout)
        failed = self.run_check(RESULTS.replace("## Fuzzing\n", ""), TOPICS)
        self.assertEqual(failed.returncode, 1)
        self.assertIn("topic 'Fuzzing' is missing", failed.stdout)

    def test_a_file_that_cannot_be_read_is_named(self):
        result = subprocess.run([sys.executable, SCRIPT, "--results", "/nonexistent/RESULTS.md"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr, "check_results_topics.py: cannot read /nonexistent/RESULTS.md: "
                                        "No such file or directory\n")


if __name__ == "__main__":
    unittest.main()
