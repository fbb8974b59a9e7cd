"""`ferry serve --devices`: the GPUs models run on, read as `ferry bench --devices` reads them.

Without a GPU only the default, `all`, starts (on the CPU, saying so), and naming a GPU exits 3
with ferry's one no-device line, as bench does. With GPUs, `--devices 0` puts every model on GPU 0
alone, and a GPU the machine lacks or a repeated one exits 1 naming it."""
import os
import subprocess
import unittest

from ferry_server import MODELS, FerryServer

CPU_NOTICE = "running on the CPU"


def serve(*args):
    """Runs `ferry serve` expecting it to fail at start; returns the finished process."""
    return subprocess.run([os.environ["FERRY_BIN"], "serve", "--model-repository", MODELS, "--host", "127.0.0.1",
                           "--http-port", "0", "--grpc-port", "0", *args],
                          capture_output=True, text=True, timeout=60)


class Devices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        server = FerryServer("--devices", "all")
        cls.all_log = list(server.log)
        code = server.stop()
        if code != 0:
            raise AssertionError(f"ferry serve --devices all exited with {code}:\n" + "\n".join(cls.all_log))
        cls.on_cpu = any(CPU_NOTICE in line for line in cls.all_log)

    def test_all_serves_the_models(self):
        ready = [line for line in self.all_log if "' ready (" in line]  # "model 'x' ready (...)"
        self.assertTrue(ready, "\n".join(self.all_log))
        where = "ferry_cpu_reference" if self.on_cpu else "GPU 0"
        for line in ready:
            self.assertIn(where, line)

    def test_naming_gpus_without_one_exits_three(self):
        if not self.on_cpu:
            self.skipTest("this machine has a GPU")
        for devices in ("0", "0,1", "0,0", "x"):
            with self.subTest(devices=devices):
                result = serve("--devices", devices)
                self.assertEqual(result.returncode, 3, result.stdout + result.stderr)
                self.assertEqual(result.stderr,
                                 f"ferry: no CUDA device: --devices '{devices}' names GPUs, but the driver reports none\n")

    def test_a_gpu_the_machine_lacks_or_a_repeated_one_is_refused(self):
        if self.on_cpu:
            self.skipTest("no GPU: every --devices but all exits 3 (see test_naming_gpus_without_one_exits_three)")
        for devices, says in (("64", "GPU 64 does not exist"), ("0,0", "GPU 0 is listed twice"),
                              ("gpu0", "'gpu0' is not a GPU ordinal")):
            with self.subTest(devices=devices):
                result = serve("--devices", devices)
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                self.assertIn(says, result.stderr)

    def test_one_gpu_holds_every_model(self):
        if self.on_cpu:
            self.skipTest("no GPU")
        server = FerryServer("--devices", "0")
        try:
            ready = [line for line in server.log if "' ready (" in line]
            self.assertTrue(ready, "\n".join(server.log))
            for line in ready:
                self.assertIn("GPU 0 (", line)
                self.assertNotIn("GPU 1 (", line)
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
