"""Many concurrent clients, each sending its own data: every response must match its own request
(no mix-ups between requests, whether batched together or not)."""
import http.client
import json
import threading
import unittest

import numpy as np
import tritonclient.http as httpclient

import references as ref
from ferry_server import ServerTestCase, run_clients

CLIENTS = 16
REQUESTS_PER_CLIENT = 24
CONNECTIONS = 64  # perf_analyzer's largest concurrency


class HttpLoad(ServerTestCase):
    def test_concurrent_clients_get_their_own_answers(self):
        rng = np.random.default_rng(11)
        # mlp references from the unbatched model (same spec, same fixed weights), one row each.
        rows = ref.random_rows(rng, CLIENTS * 4)
        reference_client = httpclient.InferenceServerClient(self.server.http_url)
        expected_rows = []
        for i in range(rows.shape[0]):
            inp = httpclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
            inp.set_data_from_numpy(rows[i:i + 1])
            expected_rows.append(reference_client.infer("mlp_single", [inp]).as_numpy("output")[0])
        before = reference_client.get_inference_statistics("mlp_batched")["model_stats"][0]

        counts = {"mlp": 0, "touch": 0}
        lock = threading.Lock()

        def client_loop(index):
            client = httpclient.InferenceServerClient(self.server.http_url)
            local = np.random.default_rng(1000 + index)
            for r in range(REQUESTS_PER_CLIENT):
                if (index + r) % 2 == 0:
                    # 1-3 distinct rows of this client's own: batched with other clients' rows.
                    n = 1 + (r % 3)
                    pick = local.choice(rows.shape[0], n, replace=False)
                    inp = httpclient.InferInput("input", [n, ref.MLP_WIDTH], "FP16")
                    inp.set_data_from_numpy(rows[pick], binary_data=(r % 4 != 0))
                    out = httpclient.InferRequestedOutput("output", binary_data=(r % 3 != 0))
                    got = client.infer("mlp_batched", [inp], outputs=[out], request_id=f"{index}-{r}")
                    self.assertEqual(got.get_response()["id"], f"{index}-{r}")
                    np.testing.assert_array_equal(got.as_numpy("output"), np.stack([expected_rows[i] for i in pick]))
                    key = "mlp"
                else:
                    x = ref.random_f32(local, ref.TOUCH_ELEMENTS)
                    inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
                    inp.set_data_from_numpy(x, binary_data=(r % 4 != 1))
                    got = client.infer("touch", [inp])
                    np.testing.assert_allclose(got.as_numpy("output"), ref.touch(x), rtol=1e-6)
                    key = "touch"
                with lock:
                    counts[key] += 1

        self.assertEqual(run_clients(CLIENTS, client_loop), [])
        self.assertEqual(counts["mlp"] + counts["touch"], CLIENTS * REQUESTS_PER_CLIENT)

        stats = reference_client.get_inference_statistics("mlp_batched")["model_stats"][0]
        requests = stats["inference_stats"]["success"]["count"] - before["inference_stats"]["success"]["count"]
        executions = stats["execution_count"] - before["execution_count"]
        self.assertEqual(requests, counts["mlp"])
        # Dynamic batching merged concurrent requests into fewer engine runs.
        self.assertLess(executions, requests)
        self.assertTrue(all(b["batch_size"] <= 8 for b in stats["batch_stats"]))

    def test_a_burst_of_connections_each_keeps_its_own(self):
        """64 connections at once, several binary requests each over the same kept connection
        (HTTP/1.1 persistent), every answer its own request's."""
        start = threading.Barrier(CONNECTIONS)

        def connection_loop(index):
            local = np.random.default_rng(2000 + index)
            conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=60)
            try:
                start.wait(60)
                first_socket = None
                for r in range(4):
                    x = ref.random_f32(local, ref.TOUCH_ELEMENTS)
                    header = json.dumps({"inputs": [{"name": "input", "shape": [ref.TOUCH_ELEMENTS], "datatype": "FP32",
                                                     "parameters": {"binary_data_size": x.nbytes}}],
                                         "outputs": [{"name": "output", "parameters": {"binary_data": True}}]}).encode()
                    conn.request("POST", "/v2/models/touch/infer", body=header + x.tobytes(),
                                 headers={"Inference-Header-Content-Length": str(len(header))})
                    response = conn.getresponse()
                    body = response.read()
                    self.assertEqual(response.status, 200, body[:200])
                    first_socket = first_socket or conn.sock
                    self.assertIs(conn.sock, first_socket, f"request {r} needed a new connection")
                    json_length = int(response.getheader("Inference-Header-Content-Length"))
                    np.testing.assert_allclose(np.frombuffer(body[json_length:], dtype=np.float32), ref.touch(x),
                                               rtol=1e-6)
            finally:
                conn.close()

        self.assertEqual(run_clients(CONNECTIONS, connection_loop), [])


if __name__ == "__main__":
    unittest.main()
