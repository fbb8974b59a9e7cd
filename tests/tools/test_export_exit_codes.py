"""scripts/export_model.py's exit codes, those of the ferry CLI: 2 for what was asked wrong (a flag,
a file, a model function that is not there), 3 for what this machine cannot do (no PyTorch, no GPU),
1 for a failure while running (the user's own code raising). Runs everywhere: where PyTorch is
missing (CI), the cases past its import run against a stand-in `torch` package that has no GPU, put
first on PYTHONPATH; where PyTorch is importable, a real one with its GPUs hidden says the same."""
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "export_model.py"
YOUR_MODEL = ROOT / "examples" / "your-model" / "model.py"

# Just enough of PyTorch's surface for the script to import and reach its device check: no GPU.
STAND_IN = {
    "torch/__init__.py": '''
        class device:
            def __init__(self, name):
                self.type, _, index = name.partition(":")
                self.index = int(index) if index else None

        class cuda:
            @staticmethod
            def is_available():
                return False

            @staticmethod
            def device_count():
                return 0
        ''',
    "torch/nn/__init__.py": "",
    "torch/nn/functional.py": "",
}
# A torch that cannot be imported, whatever this python has installed.
ABSENT = {"torch/__init__.py": 'raise ImportError("No module named \'torch\' (hidden by the test)")'}


def real_torch():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


class ExitCodes(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.root = pathlib.Path(self.folder.name)

    def packages(self, files):
        """A folder holding `files` (path: text), for PYTHONPATH."""
        where = self.root / f"site{len(list(self.root.iterdir()))}"
        for path, text in files.items():
            (where / path).parent.mkdir(parents=True, exist_ok=True)
            (where / path).write_text(textwrap.dedent(text))
        return where

    def run_script(self, *args, site=None, **environment):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **environment)
        if site is not None:
            env["PYTHONPATH"] = str(site)
        return subprocess.run([sys.executable, str(SCRIPT), *args, "--out", str(self.root / "out")],
                              capture_output=True, text=True, env=env, cwd=self.root, timeout=300)

    def assert_exit(self, result, code, says):
        self.assertEqual(result.returncode, code, result.stdout + result.stderr)
        self.assertIn(says, result.stderr)

    def test_a_wrong_command_line_is_2_without_pytorch_too(self):
        absent = self.packages(ABSENT)
        for args, says in ((["nosuch"], "no built-in model nosuch"),
                           ([], "name built-in models or give --module"),
                           (["--module", "model.py"], "expected FILE.py:FUNCTION"),
                           (["--module", "missing.py:build"], "no such file missing.py"),
                           (["resnet50", "--device", "tpu"], "expected cuda, cuda:N or cpu")):
            with self.subTest(args=args):
                self.assert_exit(self.run_script(*args, site=absent), 2, says)

    def test_no_pytorch_is_3(self):
        result = self.run_script("--module", f"{YOUR_MODEL}:build", site=self.packages(ABSENT))
        self.assert_exit(result, 3, "export_model.py: PyTorch is not importable by ")
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)  # one line, no traceback

    def test_no_gpu_is_3(self):
        result = self.run_script("--module", f"{YOUR_MODEL}:build", site=self.packages(STAND_IN))
        self.assert_exit(result, 3, "export_model.py: no CUDA device: PyTorch sees no GPU here")

    @unittest.skipUnless(real_torch(), "PyTorch is not importable here (the stand-in covers the case)")
    def test_no_gpu_is_3_with_the_real_pytorch(self):
        result = self.run_script("--module", f"{YOUR_MODEL}:build", CUDA_VISIBLE_DEVICES="")
        self.assert_exit(result, 3, "export_model.py: no CUDA device: PyTorch sees no GPU here")

    def test_a_model_function_that_is_missing_or_returns_too_little_is_2(self):
        plain = self.root / "plain.py"
        plain.write_text("def build():\n    return {'module': None}\n")
        for spec, says in ((f"{plain}:nothing", "has no function nothing"),
                           (f"{plain}:build", "build() must return a dict with ['example_inputs']")):
            with self.subTest(spec=spec):
                result = self.run_script("--module", spec, "--device", "cpu", site=self.packages(STAND_IN))
                self.assert_exit(result, 2, says)

    def test_a_model_function_that_fails_is_1(self):
        failing = self.root / "failing.py"
        failing.write_text("def build():\n    raise RuntimeError('the weights are not there')\n")
        result = self.run_script("--module", f"{failing}:build", "--device", "cpu", site=self.packages(STAND_IN))
        self.assert_exit(result, 1, "RuntimeError: the weights are not there")


if __name__ == "__main__":
    unittest.main()
