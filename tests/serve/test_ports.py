"""A port that is already in use is an error (exit 1, naming the port), never silently shared;
SIGTERM stops the server cleanly (exit 0)."""
import subprocess
import unittest

from ferry_server import MODELS, FerryServer


class Ports(unittest.TestCase):
    def test_ports_in_use_are_refused(self):
        first = FerryServer()
        try:
            for flag, taken in (("--http-port", first.http_port), ("--grpc-port", first.grpc_port)):
                with self.subTest(flag=flag):
                    other = "--grpc-port" if flag == "--http-port" else "--http-port"
                    second = subprocess.run([first.process.args[0], "serve", "--model-repository", MODELS,
                                             "--host", "127.0.0.1", flag, str(taken), other, "0"],
                                            capture_output=True, text=True, timeout=60)
                    self.assertEqual(second.returncode, 1, second.stdout + second.stderr)
                    self.assertIn(f"127.0.0.1:{taken}", second.stderr)
        finally:
            self.assertEqual(first.stop(), 0)


if __name__ == "__main__":
    unittest.main()
