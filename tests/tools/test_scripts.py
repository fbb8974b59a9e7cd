"""The repository's scripts a new user meets first, without a GPU: scripts/bench.sh stops before
building when there is no GPU (one line, exit 3); scripts/setup.sh refuses a purpose it does not
know; scripts/test.sh's skip summary counts skips by their reasons; scripts/gpu_build_torch.sh
names a python without PyTorch (exit 3); scripts/bundle_binary.sh collects a program with the
libraries it loads, and refuses one whose library is missing."""
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

    def test_nothing_skipped_prints_nothing(self):
        result = self.summary('<testsuite><testcase name="a" status="run"/></testsuite>')
        self.assertEqual((result.returncode, result.stdout), (0, ""))

    def test_an_unreadable_file_is_said(self):
        result = self.summary("<testsuite")
        self.assertEqual(result.returncode, 2)
        self.assertIn("skip_summary.py: cannot read", result.stderr)


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
