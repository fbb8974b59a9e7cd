"""The repository's scripts a new user meets first, without a GPU: scripts/bench.sh stops before
building when there is no GPU (one line, exit 3, in ferry's own words); scripts/setup.sh refuses a
purpose it does not know; scripts/test.sh's skip summary counts skips by their reasons, pytest's
too, and its console leaves the skipped tests' lines to the log (scripts/ctest_console.py);
scripts/gpu_build_torch.sh names a python without PyTorch (exit 3); scripts/bundle_binary.sh
collects a program with the libraries it loads, and refuses one whose library is missing."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import textwrap
import time
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)


def has_gpu():
    return run([SCRIPTS / "gpu_check.sh"]).returncode == 0


class BenchWithoutAGpu(unittest.TestCase):
    @unittest.skipIf(has_gpu(), "this machine has a GPU: bench.sh would build and run")
    def test_bench_says_why_in_one_line_before_building(self):
        start = time.monotonic()
        result = run([SCRIPTS / "bench.sh", "--engine", "reduce"])
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")  # nothing installed, configured or built
        self.assertRegex(result.stderr, r"^bench: no CUDA device: [^\n]+\n$")
        self.assertLess(time.monotonic() - start, 20)

    @unittest.skipIf(has_gpu(), "this machine has a GPU: neither says why there is none")
    @unittest.skipUnless(os.environ.get("FERRY_BIN"), "FERRY_BIN is not set (ctest sets it to the build's ferry)")
    def test_bench_and_ferry_give_the_same_reason(self):
        bench = run([SCRIPTS / "bench.sh"])
        ferry = run([os.environ["FERRY_BIN"], "info"])
        self.assertEqual((bench.returncode, ferry.returncode), (3, 3), bench.stderr + ferry.stderr)
        self.assertTrue(bench.stderr.startswith("bench: no CUDA device: "), bench.stderr)
        self.assertTrue(ferry.stderr.startswith("ferry: no CUDA device: "), ferry.stderr)
        self.assertEqual(bench.stderr[len("bench: "):], ferry.stderr[len("ferry: "):])

    @unittest.skipIf(has_gpu(), "this machine has a GPU")
    def test_the_check_says_what_is_missing(self):
        result = run([SCRIPTS / "gpu_check.sh"])
        self.assertEqual(result.returncode, 3)
        self.assertTrue(result.stdout.startswith("no CUDA device: "), result.stdout)
        self.assertTrue(any(what in result.stdout for what in ("no NVIDIA driver", "no /dev/nvidia* device node",
                                                                "CUDA_VISIBLE_DEVICES", "nvidia-smi")),
                        result.stdout)


class Setup(unittest.TestCase):
    def test_an_unknown_purpose_is_refused_before_installing(self):
        for args in (["--for", "everything"], ["--for"], ["--bench"]):
            with self.subTest(args=args):
                result = run([SCRIPTS / "setup.sh", *args])
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                self.assertIn("setup:", result.stderr)
                self.assertEqual(result.stdout, "")


class SkipSummary(unittest.TestCase):
    JUNIT = textwrap.dedent("""\
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuite name="(empty)" tests="6" failures="0" disabled="0" skipped="5">
          <testcase name="Gpu.One" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
            <system-out>[ RUN      ] Gpu.One
        ../tests/support/gpu_main.cpp:13: Skipped
        no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)
        [  SKIPPED ] Gpu.One (0 ms)</system-out></testcase>
          <testcase name="Gpu.Two" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
            <system-out>../tests/support/gpu_main.cpp:13: Skipped
        no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)
        </system-out></testcase>
          <testcase name="Cli.Thing" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
            <system-out>../tests/info/test_x.cpp:9: Skipped
        the ferry CLI is not built (FERRY_BUILD_APPS=OFF)
        [  SKIPPED ] Cli.Thing (0 ms)</system-out></testcase>
          <testcase name="tools.export_model" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
            <system-out>skipped: PyTorch is not importable here (No module named 'torch')
        </system-out></testcase>
          <testcase name="Quiet.One" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
            <system-out>[  SKIPPED ] Quiet.One (0 ms)</system-out></testcase>
          <testcase name="Passes" status="run"><system-out>[       OK ] Passes</system-out></testcase>
        </testsuite>
        """)

    def summary(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return run(["python3", SCRIPTS / "skip_summary.py", f.name])

    def test_skips_are_counted_by_their_reason_most_first(self):
        result = self.summary(self.JUNIT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines(), [
            "test: 5 of 6 tests skipped",
            "  2 skipped: no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)",
            "  1 skipped: PyTorch is not importable here (No module named 'torch')",
            "  1 skipped: no reason given (ctest: SKIP_REGULAR_EXPRESSION_MATCHED)",
            "  1 skipped: the ferry CLI is not built (FERRY_BUILD_APPS=OFF)"])

    PYTEST = textwrap.dedent("""\
        <?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" tests="4">
        <testcase classname="test_a" name="test_x"><skipped type="pytest.skip"
          message="no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)">a.py:2: ...</skipped>
        </testcase>
        <testcase classname="test_a" name="test_y"><skipped type="pytest.skip" message="needs two GPUs">a.py:4</skipped>
        </testcase>
        <testcase classname="test_a" name="test_z"/><testcase classname="test_b" name="test_w"/>
        </testsuite></testsuites>
        """)
    PYTHON_TESTS_RAN = '<testcase name="python.tests" status="run"><system-out>4 tests</system-out></testcase>'

    def write(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_pytests_skips_inside_python_tests_are_counted_with_the_rest(self):
        ctest = self.write(self.JUNIT.replace("</testsuite>", self.PYTHON_TESTS_RAN + "</testsuite>"))
        result = run(["python3", SCRIPTS / "skip_summary.py", ctest, self.write(self.PYTEST)])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines(), [
            "test: 5 of 7 tests skipped, and 2 of 4 pytest tests inside python.tests",
            "  3 skipped: no CUDA device: no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)",
            "  1 skipped: PyTorch is not importable here (No module named 'torch')",
            "  1 skipped: needs two GPUs",
            "  1 skipped: no reason given (ctest: SKIP_REGULAR_EXPRESSION_MATCHED)",
            "  1 skipped: the ferry CLI is not built (FERRY_BUILD_APPS=OFF)"])

    def test_a_pytest_file_is_not_read_when_python_tests_did_not_run(self):
        # A file left by an earlier run: this run's ctest did not run python.tests.
        result = run(["python3", SCRIPTS / "skip_summary.py", self.write(self.JUNIT), self.write(self.PYTEST)])
        self.assertEqual(result.stdout.splitlines()[0], "test: 5 of 6 tests skipped")
        self.assertNotIn("needs two GPUs", result.stdout)

    def test_no_line_is_wider_than_160_characters(self):
        long_reason = "no CUDA device: " + " ".join(f"word{i}" for i in range(60))
        junit = self.JUNIT.replace("the ferry CLI is not built (FERRY_BUILD_APPS=OFF)", long_reason)
        result = self.summary(junit)
        lines = result.stdout.splitlines()
        self.assertLessEqual(max(len(line) for line in lines), 160, result.stdout)
        start = next(i for i, line in enumerate(lines) if "word0 " in line)
        self.assertTrue(lines[start].startswith("  1 skipped: no CUDA device: word0 word1"))
        self.assertTrue(lines[start + 1].startswith(" " * len("  1 skipped: ") + "word"), lines[start + 1])
        self.assertEqual(" ".join(line.strip() for line in lines[start:start + 3]).split("skipped: ", 1)[1],
                         long_reason)

    def test_nothing_skipped_prints_nothing(self):
        result = self.summary('<testsuite><testcase name="a" status="run"/></testsuite>')
        self.assertEqual((result.returncode, result.stdout), (0, ""))

    def test_an_unreadable_file_is_said(self):
        result = self.summary("<testsuite")
        self.assertEqual(result.returncode, 2)
        self.assertIn("skip_summary.py: cannot read", result.stderr)


class CtestConsole(unittest.TestCase):
    """scripts/ctest_console.py: what of ctest's output test.sh shows on the console."""
    WIDE = "ParamSuite/Copy.Works/0  # GetParam() = 4-byte object <00-00 00-00> " + "x" * 200
    OUTPUT = textwrap.dedent(f"""\
        Test project /src/build
              Start   1: Gpu.One
         1/4 Test   #1: Gpu.One ..........................***Skipped   0.01 sec
              Start   2: Cpu.Two
         2/4 Test   #2: Cpu.Two ..........................   Passed    0.02 sec
              Start   3: {WIDE}
         3/4 Test   #3: {WIDE} ...   Passed    0.01 sec
              Start   4: Cpu.Four
         4/4 Test   #4: Cpu.Four .........................***Failed    0.03 sec
        an error line of the failed test {"y" * 200}

        75% tests passed, 1 tests failed out of 4

        Total Test time (real) =   0.07 sec

        The following tests did not run:
        \t  1 - Gpu.One (Skipped)
        \t  3 - {WIDE} (Skipped)
        The following tests FAILED:
        \t  4 - Cpu.Four (Failed)
        Errors while running CTest
        """)

    def test_skips_go_to_the_log_and_failures_stay_on_the_console(self):
        with tempfile.TemporaryDirectory() as folder:
            log = pathlib.Path(folder) / "test.log"
            result = subprocess.run(["python3", SCRIPTS / "ctest_console.py", log], input=self.OUTPUT,
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(log.read_text(), self.OUTPUT)  # all of it, whole
        console = result.stdout.splitlines()
        self.assertEqual(console, [
            "Test project /src/build",
            " 2/4 Test   #2: Cpu.Two ..........................   Passed    0.02 sec",
            (" 3/4 Test   #3: " + self.WIDE)[:125] + "..." + "x" * 7 + " ...   Passed    0.01 sec",
            " 4/4 Test   #4: Cpu.Four .........................***Failed    0.03 sec",
            ("an error line of the failed test " + "y" * 200)[:160],  # the failed test's output, whole
            ("an error line of the failed test " + "y" * 200)[160:],
            "",
            "75% tests passed, 1 tests failed out of 4",
            "",
            "Total Test time (real) =   0.07 sec",
            "",
            "The following tests FAILED:",
            "\t  4 - Cpu.Four (Failed)",
            "Errors while running CTest"])
        self.assertLessEqual(max(len(line) for line in console), 160)


class GpuBuildTorch(unittest.TestCase):
    def test_a_python_without_pytorch_is_3(self):
        with tempfile.TemporaryDirectory() as folder:
            # A python that cannot import torch, whatever this machine has installed.
            python = pathlib.Path(folder) / "python3"
            python.write_text('#!/bin/sh\nexec python3 -S -c "import sys; sys.path = []; exec(sys.argv[1])" "$2"\n')
            python.chmod(0o755)
            result = run([SCRIPTS / "gpu_build_torch.sh"], env=dict(os.environ, FERRY_TORCH_PYTHON=str(python)))
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertRegex(result.stderr, r"^gpu_build_torch: no PyTorch for .*; activate the environment with your "
                                        r"PyTorch, or set FERRY_TORCH_PYTHON to its python\n$")

    def test_a_cpu_build_of_pytorch_is_3(self):
        with tempfile.TemporaryDirectory() as folder:
            python = pathlib.Path(folder) / "python3"
            python.write_text("#!/bin/sh\necho 'PyTorch 2.11.0+cpu of /x/python3 is a CPU build: the backend needs a "
                              "CUDA one' >&2\nexit 1\n")
            python.chmod(0o755)
            result = run([SCRIPTS / "gpu_build_torch.sh"], env=dict(os.environ, FERRY_TORCH_PYTHON=str(python)))
        self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
        self.assertIn("is a CPU build: the backend needs a CUDA one", result.stderr)
        self.assertEqual(result.stdout, "")  # it stopped before looking for CMake or configuring


@unittest.skipIf(shutil.which("cc") is None, "no C compiler (cc) to make a program with a library of its own")
class BundleBinary(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.root = pathlib.Path(self.folder.name)
        (self.root / "greeting.c").write_text('const char* greeting(void) { return "hello from a library"; }\n')
        (self.root / "main.c").write_text('#include <stdio.h>\nconst char* greeting(void);\n'
                                          'int main(void) { puts(greeting()); return 0; }\n')
        (self.root / "lib").mkdir()
        subprocess.run(["cc", "-shared", "-fPIC", "-o", self.root / "lib" / "libgreeting.so", self.root / "greeting.c"],
                       check=True)
        subprocess.run(["cc", "-o", self.root / "hello", self.root / "main.c", f"-L{self.root / 'lib'}", "-lgreeting",
                        f"-Wl,-rpath,{self.root / 'lib'}"], check=True)

    def bundle(self, *programs):
        return run([SCRIPTS / "bundle_binary.sh", self.root / "bundle", *programs])

    def test_the_program_runs_from_the_bundle_alone(self):
        result = self.bundle(self.root / "hello")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1 program(s)", result.stdout)
        libraries = sorted(p.name for p in (self.root / "bundle" / "lib").iterdir())
        self.assertEqual(libraries, ["libgreeting.so"])  # and not the C library
        shutil.rmtree(self.root / "lib")  # the program's own library is gone from where it was built
        ran = run([self.root / "bundle" / "bin" / "hello"],
                  env=dict(os.environ, LD_LIBRARY_PATH=str(self.root / "bundle" / "lib")))
        self.assertEqual(ran.stdout, "hello from a library\n", ran.stderr)

    def test_a_library_that_cannot_be_found_is_an_error(self):
        shutil.rmtree(self.root / "lib")
        result = self.bundle(self.root / "hello")
        self.assertEqual(result.returncode, 1)
        self.assertIn("needs libgreeting.so and the loader cannot find it here", result.stderr)

    def test_no_such_program_is_2(self):
        result = self.bundle(self.root / "absent")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no such program", result.stderr)


if __name__ == "__main__":
    unittest.main()
