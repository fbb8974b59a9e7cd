"""A port that is already in use is an error (exit 1, naming the port), never silently shared;
SIGTERM stops the server cleanly (exit 0); both ports take a burst of connections at once."""
import shutil
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

    def test_both_ports_queue_a_burst_of_64_connections(self):
        """perf_analyzer at concurrency 64 connects 64 clients at once; cpp-httplib's own backlog
        of 5 made the kernel drop connections. `ss` shows a listening socket's backlog as Send-Q."""
        if shutil.which("ss") is None:
            self.skipTest("no `ss` (iproute2) to read the listening sockets' backlog with")
        server = FerryServer()
        try:
            listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, timeout=10).stdout
            for port in (server.http_port, server.grpc_port):
                with self.subTest(port=port):
                    rows = [line.split() for line in listening.splitlines() if line.split()[3].endswith(f":{port}")]
                    self.assertTrue(rows, f"port {port} is not listening:\n{listening}")
                    self.assertGreaterEqual(int(rows[0][2]), 64, rows[0])
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
