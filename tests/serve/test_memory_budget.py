"""Memory follows the server's limits, not the attacker's: what a request announces is judged from
its headers before any byte of its body is read, requests in flight share one budget across HTTP
and gRPC (--max-inflight-bytes), and memory used under load is given back when the load ends.

Once, eight connections announcing 1000 MiB each to a model that does not exist took the server
to 7.7 GB before their 404s; JSON over the limit got 413 only once it was all in memory; 400
requests of 4.8 MB left 400 MB resident for good."""
import json
import shutil
import socket
import threading
import time
import unittest

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import SANITIZED, FerryServer, read_answer, resident_mb, run_clients, write_repository, stop_and_remove

BUDGET = 16 << 20
ADMISSIBLE = BUDGET - BUDGET // 4  # a quarter is kept for gRPC messages still arriving
HELD = 9 << 20  # a reduce request of this fits the budget, two do not (its answer is 4 KB)
SIZE = 3_670_016  # a touch request of this (with its answer) fits alone or beside nothing held
MODELS = {"touch": {"engine": "touch", "input_size": SIZE}, "reduce": {"engine": "reduce", "input_size": HELD}}
ANSWER_TIMEOUT_S = 10  # an answer from the headers comes at once; the body is never sent


def binary_body(x, output="output"):
    header = json.dumps({"inputs": [{"name": "input", "shape": [x.size], "datatype": "FP32",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "outputs": [{"name": output, "parameters": {"binary_data": True}}]}).encode()
    return header + x.tobytes(), len(header)


class MemoryBudget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = write_repository(MODELS, "ferry_memory_budget_")
        # One client network may hold the whole budget here (the share of one is test_hostile_load's).
        cls.server = FerryServer("--max-inflight-bytes", str(BUDGET), "--max-inflight-bytes-per-peer", str(BUDGET),
                                 repository=cls.repository)

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.repository)

    def tearDown(self):
        self.assertTrue(self.server.alive(), "ferry serve died:\n" + "\n".join(self.server.log))

    def headers_only(self, path, headers):
        """Sends a request's headers and nothing of its body; returns the answer that comes."""
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=ANSWER_TIMEOUT_S)
        head = f"POST {path} HTTP/1.1\r\nHost: t\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        s.sendall((head + "\r\n").encode())
        answer = read_answer(s, ANSWER_TIMEOUT_S)
        s.close()
        return answer

    def expect_from_headers(self, path, headers, status, needle):
        got, answer_headers, body = self.headers_only(path, headers)
        self.assertEqual(got, status, f"no answer from the headers alone (got {got}, {body[:200]!r})")
        self.assertEqual(answer_headers.get("connection"), "close")
        self.assertIn(needle, json.loads(body)["error"])
        return answer_headers

    def test_an_unknown_model_is_answered_from_the_headers(self):
        self.expect_from_headers("/v2/models/nonexistent/infer",
                                 {"Content-Length": 1000 << 20, "Inference-Header-Content-Length": 100},
                                 404, "unknown model 'nonexistent'")

    def test_a_wrong_content_type_is_answered_from_the_headers(self):
        self.expect_from_headers("/v2/models/touch/infer",
                                 {"Content-Length": 1000, "Content-Type": "multipart/form-data; boundary=x"},
                                 415, "Content-Type 'multipart/form-data; boundary=x' is not an inference body")
        self.expect_from_headers("/v2/models/touch/infer",
                                 {"Content-Length": 1000, "Content-Encoding": "gzip"},
                                 415, "Content-Encoding 'gzip' is not supported")

    def test_a_body_over_the_limits_is_answered_from_the_headers(self):
        # All JSON (no binary part): held to the JSON limit, here the budget's 8 MiB.
        self.expect_from_headers("/v2/models/touch/infer", {"Content-Length": 512 * 10**6}, 413,
                                 f"{ADMISSIBLE} bytes for inference ({ADMISSIBLE} when it is all JSON)")
        self.expect_from_headers("/v2/models/touch/infer",
                                 {"Content-Length": ADMISSIBLE + 1, "Inference-Header-Content-Length": 100}, 413,
                                 "request body exceeds the server's limit")

    def test_requests_in_flight_share_one_budget_across_http_and_grpc(self):
        held_x = np.ones(HELD // 4, dtype=np.float32)
        body, header_length = binary_body(held_x, output="sums")
        # A request whose body has arrived but for its last bytes holds what it has received.
        held = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=30)
        held.sendall((f"POST /v2/models/reduce/infer HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}\r\n"
                      f"Inference-Header-Content-Length: {header_length}\r\n\r\n").encode() + body[:-100])
        time.sleep(0.2)
        # Over HTTP, another is told from its headers to come back later: what it announces does
        # not fit what is free.
        answer_headers = self.expect_from_headers(
            "/v2/models/reduce/infer",
            {"Content-Length": len(body), "Inference-Header-Content-Length": header_length}, 503,
            f"in-flight memory budget of {ADMISSIBLE} bytes holds {len(body)} bytes of 1 requests")
        self.assertEqual(answer_headers.get("retry-after"), "1")
        # Over gRPC too.
        x = np.arange(SIZE // 4, dtype=np.float32)
        grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        inp = grpcclient.InferInput("input", [x.size], "FP32")
        inp.set_data_from_numpy(x)
        with self.assertRaises(InferenceServerException) as e:
            grpc.infer("touch", [inp])
        self.assertEqual(e.exception.status(), "StatusCode.RESOURCE_EXHAUSTED")
        self.assertIn(f"in-flight memory budget of {ADMISSIBLE} bytes", e.exception.message())
        # The held request completes and is answered right; then there is room again.
        held.sendall(body[-100:])
        status, headers, answer = read_answer(held, 30)
        held.close()
        self.assertEqual(status, 200, answer[:200])
        length = int(headers["inference-header-content-length"])
        sums = np.frombuffer(answer[length:], dtype=np.float32)
        np.testing.assert_allclose(sums, ref.reduce(held_x), rtol=1e-5)
        deadline = time.monotonic() + 5
        while True:
            try:
                got = grpc.infer("touch", [inp]).as_numpy("output")
                break
            except InferenceServerException:  # the held request's answer still being written
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        np.testing.assert_array_equal(got, x * 2 + 1)


@unittest.skipIf(SANITIZED, "a sanitizer's allocator holds freed memory in quarantine on purpose")
class MemoryGivenBack(unittest.TestCase):
    """Load of 4.8 MB requests over HTTP and gRPC at 8 clients, then idle: resident memory comes
    back to within 64 MiB of its level before the load within a few seconds."""

    def test_idle_memory_returns_after_load(self):
        self.load_then_idle()  # on jemalloc where it is installed (apps/ferry/serve_allocator.hpp)

    def test_idle_memory_returns_after_load_on_glibc(self):
        self.load_then_idle({"FERRY_SERVE_MALLOC": "glibc"})

    def load_then_idle(self, env=None):
        size = 4_800_000
        repository = write_repository({"touch": {"engine": "touch", "input_size": size}}, "ferry_memory_back_")
        server = FerryServer(repository=repository, env=env)
        try:
            x = np.arange(size // 4, dtype=np.float32)
            expected = x * 2 + 1
            # Settled: one request of each kind made the server's threads and buffers.
            for lib, url in ((httpclient, server.http_url), (grpcclient, server.grpc_url)):
                inp = lib.InferInput("input", [x.size], "FP32")
                inp.set_data_from_numpy(x)
                lib.InferenceServerClient(url).infer("touch", [inp])
            time.sleep(2)
            before = resident_mb(server.process.pid)
            peak = [before]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], resident_mb(server.process.pid))
                    done.wait(0.05)

            def client(index):
                lib, url = (httpclient, server.http_url) if index % 2 else (grpcclient, server.grpc_url)
                c = lib.InferenceServerClient(url)
                inp = lib.InferInput("input", [x.size], "FP32")
                inp.set_data_from_numpy(x)
                for _ in range(12):
                    np.testing.assert_array_equal(c.infer("touch", [inp]).as_numpy("output"), expected)

            sampler = threading.Thread(target=sample)
            sampler.start()
            failures = run_clients(8, client)
            done.set()
            sampler.join()
            self.assertEqual(failures, [])
            deadline = time.monotonic() + 5
            idle = resident_mb(server.process.pid)
            while idle > before + 64 and time.monotonic() < deadline:
                time.sleep(0.25)
                idle = resident_mb(server.process.pid)
            allocator = next((line for line in server.log if "memory from" in line), "no allocator line")
            print(f"{allocator}: resident memory {before:.0f} MiB before the load, {peak[0]:.0f} at its peak, "
                  f"{idle:.0f} idle")
            self.assertLessEqual(idle, before + 64,
                                 f"idle memory stayed {idle - before:.0f} MiB above its level before the load")
        finally:
            self.assertEqual(server.stop(), 0, "\n".join(server.log))
            shutil.rmtree(repository)


if __name__ == "__main__":
    unittest.main()
