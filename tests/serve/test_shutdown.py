"""Shutdown: the first SIGTERM (or SIGINT) stops both protocols taking new work at once (readiness
false, new inference 503 over HTTP, new gRPC calls UNAVAILABLE), every request already admitted
is answered, and the process exits 0; a second signal exits at once, non-zero; past
--drain-timeout-secs the server stops waiting and exits 1.

Once, HTTP went on accepting and serving new work while gRPC drained (a request sent 0.2 s after
SIGTERM got 200), and a second SIGTERM was ignored."""
import shutil
import signal
import threading
import time
import unittest
import urllib.error
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import FerryServer, wait_for, write_repository

# `held` keeps a lone request queued for its batch delay: requests in flight for a known time.
HOLD_S = 3.0
MODELS = {"held": {"engine": "mlp:2x64", "max_batch": 8, "batch_delay_us": int(HOLD_S * 1e6)}}


class Shutdown(unittest.TestCase):
    def setUp(self):
        self.repository = write_repository(MODELS, "ferry_shutdown_")
        self.server = FerryServer(repository=self.repository)

    def tearDown(self):
        if self.server.alive():
            self.server.process.kill()
        self.server.stop()
        shutil.rmtree(self.repository)

    def send_held(self, count):
        """`count` one-row requests to `held` over HTTP, each on a thread; returns the threads and
        where their outcomes land."""
        outcomes = []
        lock = threading.Lock()
        rows = ref.random_rows(np.random.default_rng(3), count)

        def send(i):
            client = httpclient.InferenceServerClient(self.server.http_url, network_timeout=60)
            inp = httpclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
            inp.set_data_from_numpy(rows[i:i + 1])
            try:
                got = client.infer("held", [inp]).as_numpy("output")
                outcome = ("ok", got.shape)
            except Exception as e:  # the outcome is checked by the test
                outcome = ("error", str(e))
            with lock:
                outcomes.append(outcome)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        return threads, outcomes

    def queued(self):
        text = urllib.request.urlopen(f"http://{self.server.http_url}/metrics").read().decode()
        return sum(float(line.split()[-1]) for line in text.splitlines()
                   if line.startswith("nv_inference_pending_request_count"))

    def test_the_first_signal_stops_new_work_and_finishes_the_rest(self):
        threads, outcomes = self.send_held(4)
        # And one over gRPC (once, HTTP served new work while gRPC drained its calls).
        grpc_outcome = []
        grpc_client = grpcclient.InferenceServerClient(self.server.grpc_url)
        grpc_input = grpcclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
        grpc_input.set_data_from_numpy(ref.random_rows(np.random.default_rng(5), 1))
        grpc_client.async_infer("held", [grpc_input],
                                lambda result, error: grpc_outcome.append(error or result.as_numpy("output").shape))
        self.assertTrue(wait_for(lambda: self.queued() == 5), "the requests were not queued")
        signalled = time.monotonic()
        self.server.process.send_signal(signal.SIGTERM)
        self.assertTrue(wait_for(lambda: any("stopping (SIGTERM)" in line for line in self.server.log), 5))
        # HTTP: not ready, and new inference is refused; the connection stays for the answer.
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://{self.server.http_url}/v2/health/ready")
        self.assertEqual(e.exception.code, 503)
        client = httpclient.InferenceServerClient(self.server.http_url)
        inp = httpclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
        inp.set_data_from_numpy(ref.random_rows(np.random.default_rng(4), 1))
        with self.assertRaises(InferenceServerException) as refused:
            client.infer("held", [inp])
        self.assertEqual(refused.exception.status(), "503")
        self.assertIn("shutting down", refused.exception.message())
        # gRPC: every new call is refused.
        with self.assertRaises(InferenceServerException) as refused:
            grpcclient.InferenceServerClient(self.server.grpc_url).is_server_ready()
        self.assertIn("UNAVAILABLE", str(refused.exception.status()))
        self.assertLess(time.monotonic() - signalled, HOLD_S, "the checks ran after the drain")
        # Everything admitted before the signal is answered, then the server exits 0.
        for t in threads:
            t.join(60)
        self.assertEqual(outcomes, [("ok", (1, ref.MLP_WIDTH))] * 4)
        self.assertTrue(wait_for(lambda: grpc_outcome, 30))
        self.assertEqual(grpc_outcome, [(1, ref.MLP_WIDTH)])
        self.server.process.wait(30)
        self.assertEqual(self.server.process.returncode, 0, "\n".join(self.server.log))
        self.server.reader.join(5)  # its last lines may still be in the pipe
        self.assertTrue(any("ferry serve: stopped" in line for line in self.server.log), "\n".join(self.server.log))

    def test_a_second_signal_exits_at_once(self):
        threads, _ = self.send_held(2)
        self.assertTrue(wait_for(lambda: self.queued() == 2), "the requests were not queued")
        self.server.process.send_signal(signal.SIGTERM)
        self.assertTrue(wait_for(lambda: any("stopping (SIGTERM)" in line for line in self.server.log), 5))
        start = time.monotonic()
        self.server.process.send_signal(signal.SIGINT)
        self.server.process.wait(HOLD_S)
        self.assertLess(time.monotonic() - start, HOLD_S / 2)
        self.assertEqual(self.server.process.returncode, 128 + signal.SIGINT)
        for t in threads:
            t.join(60)

    def test_the_drain_timeout_bounds_the_wait(self):
        # --drain-timeout-secs 1 against requests held for 3 s: the server gives up on them after
        # a second, says so, and exits 1, before the pod's grace period would end in a SIGKILL.
        self.server.stop()
        self.server = FerryServer("--drain-timeout-secs", "1", repository=self.repository)
        threads, _ = self.send_held(2)
        self.assertTrue(wait_for(lambda: self.queued() == 2), "the requests were not queued")
        start = time.monotonic()
        self.server.process.send_signal(signal.SIGTERM)
        self.server.process.wait(HOLD_S)
        self.assertGreater(time.monotonic() - start, 0.9)
        self.assertEqual(self.server.process.returncode, 1, "\n".join(self.server.log))
        self.server.reader.join(5)
        self.assertTrue(any("the drain timeout of 1 s passed: exiting without finishing the 2 requests in flight"
                            in line for line in self.server.log), "\n".join(self.server.log))
        for t in threads:
            t.join(60)


if __name__ == "__main__":
    unittest.main()
