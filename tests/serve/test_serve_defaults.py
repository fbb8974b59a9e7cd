"""`ferry serve`'s defaults, as Triton's users expect them: strict readiness (ready only when every
model loaded; `--strict-readiness=false` reports readiness per model), the address it listens on
shown in --help and at start, and a Triton-layout model folder told what ferry reads instead."""
import os
import shutil
import subprocess
import unittest

import tritonclient.http as httpclient

from ferry_server import FerryServer, write_repository


class ServeDefaults(unittest.TestCase):
    def setUp(self):
        self.repository = write_repository({"good": {"engine": "touch", "input_size": "4KB"},
                                            "typo": {"engine": "touch", "inflght": 2}}, "ferry_defaults_")
        # A folder laid out for Triton: config.pbtxt and a version folder, no config.json.
        os.makedirs(os.path.join(self.repository, "triton", "1"))
        with open(os.path.join(self.repository, "triton", "config.pbtxt"), "w") as f:
            f.write('name: "triton"\nplatform: "pytorch_libtorch"\n')

    def tearDown(self):
        shutil.rmtree(self.repository)

    def check_server(self, *args, ready):
        server = FerryServer(*args, repository=self.repository)
        try:
            client = httpclient.InferenceServerClient(server.http_url)
            self.assertEqual(client.is_server_ready(), ready, "\n".join(server.log))
            self.assertTrue(client.is_model_ready("good"))
            self.assertFalse(client.is_model_ready("typo"))
            index = {m["name"]: m for m in client.get_model_repository_index()}
            self.assertIn("config.json is missing: this folder has a Triton config.pbtxt, and ferry reads "
                          "config.json instead", index["triton"]["reason"])
            return server.log
        finally:
            self.assertEqual(server.stop(), 0)

    def test_strict_readiness_by_default(self):
        log = self.check_server(ready=False)
        self.assertTrue(any("not ready: strict readiness: 2 of 3 models are not ready (triton, typo)" in line
                            for line in log), "\n".join(log))

    def test_readiness_per_model_when_asked(self):
        self.check_server("--strict-readiness=false", ready=True)

    def test_the_address_is_shown(self):
        help_text = subprocess.run([os.environ["FERRY_BIN"], "serve", "--help"], capture_output=True, text=True).stdout
        self.assertIn("0.0.0.0: every interface", help_text)
        self.assertRegex(help_text, r"--host TEXT .*\[default 127\.0\.0\.1\]")  # the default, shown: this machine only
        server = FerryServer(repository=self.repository)  # the tests bind 127.0.0.1
        try:
            self.assertTrue(any(line.startswith("ferry serve: HTTP on 127.0.0.1:") and "(this machine only)" in line
                                for line in server.log), "\n".join(server.log))
        finally:
            server.stop()

    def test_listens_on_this_machine_only_unless_told_and_names_the_interfaces(self):
        # Without --host (FerryServer passes one, so the server is started here): 127.0.0.1.
        args = [os.environ["FERRY_BIN"], "serve", "--model-repository", self.repository, "--http-port", "0",
                "--grpc-port", "0"]
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            lines = []
            for line in process.stdout:
                lines.append(line)
                if "ferry serve: serving" in line:
                    break
            text = "".join(lines)
            self.assertRegex(text, r"ferry serve: HTTP on 127\.0\.0\.1:\d+ \(this machine only\)")
            self.assertRegex(text, r"ferry serve: gRPC on 127\.0\.0\.1:\d+ \(this machine only\)")
        finally:
            process.terminate()
            process.wait(30)
        # Every interface when asked, each named by its address.
        server = FerryServer("--host", "0.0.0.0", repository=self.repository)
        try:
            line = next(line for line in server.log if line.startswith("ferry serve: HTTP on 0.0.0.0:"))
            self.assertIn("(every interface of this machine: ", line)
            self.assertIn("127.0.0.1", line)
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main()
