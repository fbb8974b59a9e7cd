"""Back-pressure: a model's queue holds at most max_queue_size requests (more are refused at once,
503 / UNAVAILABLE), and a request still queued at its timeout (the server's --request-timeout-ms,
the request's own timeout parameter, or a gRPC deadline) is withdrawn and answered 504 /
DEADLINE_EXCEEDED; either way the server keeps serving, and the requests it does run get their own
answers.

The model `held` keeps a lone request queued for a long time (it waits 10 s for others to join its
batch), which makes a full queue and a queued request's timeout deterministic; a full batch of 8
rows runs at once."""
import json
import re
import shutil
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
from ferry_server import FerryServer, ServerTestCase, wait_for, write_repository

SERVER_TIMEOUT_S = 1.5
MODELS = {
    "held": {"engine": "mlp:2x64", "max_batch": 8, "batch_delay_us": 10_000_000, "max_queue_size": 1},
    "reference": {"engine": "mlp:2x64", "max_batch": 8},  # the same weights, answering at once
}


class BackPressure(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = write_repository(MODELS, "ferry_back_pressure_")
        cls.server = FerryServer("--request-timeout-ms", str(int(SERVER_TIMEOUT_S * 1000)), repository=cls.repository)

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.repository)

    def setUp(self):
        self.http = httpclient.InferenceServerClient(self.server.http_url)
        self.grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        self.assertTrue(wait_for(lambda: self.queued() == 0, timeout=SERVER_TIMEOUT_S + 5))

    def queued(self):
        text = urllib.request.urlopen(f"http://{self.server.http_url}/metrics").read().decode()
        return int(float(re.search(r'^nv_inference_pending_request_count\{model="held",version="1"\} (\S+)$',
                                   text, re.M).group(1)))

    @staticmethod
    def rows_input(module, rows):
        inp = module.InferInput("input", list(rows.shape), "FP16")
        inp.set_data_from_numpy(rows)
        return inp

    def assert_serves_a_full_batch(self, seed):
        """A request of 8 rows runs at once and gets its own answer: the server still serves."""
        rows = ref.random_rows(np.random.default_rng(seed), 8)
        got = self.http.infer("held", [self.rows_input(httpclient, rows)]).as_numpy("output")
        expected = self.http.infer("reference", [self.rows_input(httpclient, rows)]).as_numpy("output")
        np.testing.assert_array_equal(got, expected)
        self.assertEqual(self.queued(), 0)

    def expect_error(self, call, status, needle):
        with self.assertRaises(InferenceServerException) as e:
            call()
        self.assertEqual(e.exception.status(), status)
        self.assertIn(needle, e.exception.message())
        return e.exception

    def send_in_background(self, **infer_args):
        """Sends one row to `held` on a thread; returns the thread and where its outcome lands."""
        outcome = {}

        def send():
            client = httpclient.InferenceServerClient(self.server.http_url)  # a connection of its own
            rows = ref.random_rows(np.random.default_rng(1), 1)
            start = time.monotonic()
            try:
                outcome["result"] = client.infer("held", [self.rows_input(httpclient, rows)], **infer_args)
            except InferenceServerException as e:
                outcome["error"] = e
            outcome["seconds"] = time.monotonic() - start

        thread = threading.Thread(target=send)
        thread.start()
        self.assertTrue(wait_for(lambda: self.queued() == 1), "the first request was not queued")
        return thread, outcome

    def test_a_full_queue_refuses_more_and_the_server_default_timeout_answers_the_queued_one(self):
        thread, outcome = self.send_in_background()
        one_row = ref.random_rows(np.random.default_rng(2), 1)
        busy = "model 'held' is busy: 1 requests wait for a worker, its max_queue_size; try again later"
        self.expect_error(lambda: self.http.infer("held", [self.rows_input(httpclient, one_row)]), "503", busy)
        self.expect_error(lambda: self.grpc.infer("held", [self.rows_input(grpcclient, one_row)]),
                          "StatusCode.UNAVAILABLE", busy)
        thread.join(30)
        # Never run (its batch would have waited 10 s): withdrawn at the server's timeout.
        self.assertIn("error", outcome)
        self.assertEqual(outcome["error"].status(), "504")
        self.assertIn("model 'held': the request timed out: no worker started it within its timeout of 1500 ms",
                      outcome["error"].message())
        self.assertLess(outcome["seconds"], SERVER_TIMEOUT_S + 3)
        self.assert_serves_a_full_batch(3)

    def test_the_timeout_parameter_shortens_the_wait_but_cannot_lengthen_it(self):
        one_row = ref.random_rows(np.random.default_rng(4), 1)
        start = time.monotonic()
        self.expect_error(lambda: self.http.infer("held", [self.rows_input(httpclient, one_row)], timeout=100_000),
                          "504", "within its timeout of 100 ms")
        self.assertLess(time.monotonic() - start, SERVER_TIMEOUT_S)
        self.assertEqual(self.queued(), 0)  # its place is free again
        self.expect_error(lambda: self.grpc.infer("held", [self.rows_input(grpcclient, one_row)], timeout=100_000),
                          "StatusCode.DEADLINE_EXCEEDED", "within its timeout of 100 ms")
        self.expect_error(lambda: self.http.infer("held", [self.rows_input(httpclient, one_row)],
                                                  timeout=60_000_000),
                          "504", "within its timeout of 1500 ms")
        # Triton's client sends only numbers; a malformed timeout is refused, naming it.
        body = json.dumps({"inputs": [{"name": "input", "shape": [1, ref.MLP_WIDTH], "datatype": "FP16",
                                       "data": [0.0] * ref.MLP_WIDTH}],
                           "parameters": {"timeout": "soon"}}).encode()
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://{self.server.http_url}/v2/models/held/infer", data=body)
        self.assertEqual(e.exception.code, 400)
        self.assertIn('"timeout\\" must be a non-negative integer', e.exception.read().decode())
        self.assert_serves_a_full_batch(5)

    def test_a_grpc_deadline_takes_the_request_out_of_the_queue(self):
        one_row = ref.random_rows(np.random.default_rng(6), 1)
        self.expect_error(lambda: self.grpc.infer("held", [self.rows_input(grpcclient, one_row)], client_timeout=0.2),
                          "StatusCode.DEADLINE_EXCEEDED", "")
        # Withdrawn at the client's deadline, well before the server's own timeout would have.
        self.assertTrue(wait_for(lambda: self.queued() == 0, timeout=1.0), "the abandoned request stayed queued")
        self.assert_serves_a_full_batch(7)


if __name__ == "__main__":
    unittest.main()
