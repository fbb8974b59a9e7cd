"""A saturated model stalls nothing else: its queue is bounded by default (the rest told 503 with
Retry-After, or UNAVAILABLE), health, metadata and metrics answer at once while it is full, other
models serve, and gRPC holds hundreds of calls on a bounded number of threads.

Once, 300 requests to a model taking 0.2 s a batch made /v2/health/live take 10 s (every HTTP
handler thread waited for the model) and a request to another model time out; 2,000 gRPC calls
made 2,122 threads; the queue was unbounded unless the config said otherwise.

The model `slow` has one slot (so a default queue of 64 requests) and every request fills its
batch, so each request is one engine run of a few tens of milliseconds: a flood of 120 requests
sent at once leaves it with a full queue for seconds."""
import json
import re
import socket
import statistics
import threading
import time
import unittest
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient

from ferry_server import SANITIZED, FerryServer, read_answer, thread_count, wait_for, write_repository, stop_and_remove

# Under a sanitizer everything is several times slower: the same saturation with less work.
WIDTH = 256 if SANITIZED else 1024
ROWS = 32
MODELS = {"slow": {"engine": f"mlp:8x{WIDTH}", "max_batch": ROWS, "inflight": 1},
          "quick": {"engine": "touch", "input_size": "4KiB"}}
DEFAULT_QUEUE = 64  # 32 requests per slot, at least 64
FLOOD = 120
PROBE_LIMIT_S = 0.5  # health answered well within this while the queue is full (the figure at full size: RESULTS.md)


def slow_request():
    x = np.zeros((ROWS, WIDTH), dtype=np.float16)
    header = json.dumps({"inputs": [{"name": "input", "shape": [ROWS, WIDTH], "datatype": "FP16",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "outputs": [{"name": "output", "parameters": {"binary_data": True}}]}).encode()
    body = header + x.tobytes()
    return (f"POST /v2/models/slow/infer HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}\r\n"
            f"Inference-Header-Content-Length: {len(header)}\r\n\r\n").encode() + body


class Saturation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = write_repository(MODELS, "ferry_saturation_")
        # Two threads decode bodies and encode answers (once: two threads handled requests, and
        # each waited for its model).
        cls.server = FerryServer("--http-threads", "2", "--grpc-threads", "2", repository=cls.repository)
        if any("model 'slow' ready" in line and " on ferry_gpu" in line for line in cls.server.log):
            stop_and_remove(cls.server, cls.repository)
            raise unittest.SkipTest("the flood needs a model of tens of milliseconds a run: on a GPU this mlp runs "
                                    "in microseconds, so the saturation is tested where serve computes on the CPU")

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.repository)

    def setUp(self):
        self.assertTrue(wait_for(lambda: self.pending() == 0, timeout=120), "the queue did not drain")

    def tearDown(self):
        self.assertTrue(self.server.alive(), "ferry serve died:\n" + "\n".join(self.server.log))

    def pending(self):
        text = urllib.request.urlopen(f"http://{self.server.http_url}/metrics", timeout=30).read().decode()
        return int(float(re.search(r'^nv_inference_pending_request_count\{model="slow",version="1"\} (\S+)$',
                                   text, re.M).group(1)))

    def flood(self, count=FLOOD):
        """Sends `count` requests to `slow` at once on connections of their own; returns the
        sockets, whose answers are read with collect()."""
        request = slow_request()
        sockets = [socket.create_connection(("127.0.0.1", self.server.http_port), timeout=30) for _ in range(count)]
        for s in sockets:
            s.sendall(request)
        return sockets

    def collect(self, sockets):
        answers = [read_answer(s, 300) for s in sockets]
        for s in sockets:
            s.close()
        return answers

    def reference(self):
        """The one right answer (every request sends the same zeros)."""
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=60)
        s.sendall(slow_request())
        status, headers, body = read_answer(s, 300)
        s.close()
        self.assertEqual(status, 200, body[:200])
        return body[int(headers["inference-header-content-length"]):]

    def test_the_default_queue_is_bounded_and_the_rest_told_to_retry(self):
        self.assertTrue(any(f"model 'slow' ready (mlp:8x{WIDTH} on " in line and f"queue {DEFAULT_QUEUE})" in line
                            for line in self.server.log), "\n".join(self.server.log))
        expected = self.reference()
        sockets = self.flood()
        self.assertTrue(wait_for(lambda: self.pending() >= DEFAULT_QUEUE - 8, timeout=30), "the queue did not fill")
        # gRPC meets the same full queue: 16 calls at once, more than the places a few runs free.
        client = grpcclient.InferenceServerClient(self.server.grpc_url)
        inp = grpcclient.InferInput("input", [ROWS, WIDTH], "FP16")
        inp.set_data_from_numpy(np.zeros((ROWS, WIDTH), dtype=np.float16))
        grpc_outcomes = []
        grpc_done = threading.Semaphore(0)

        def finished(result, error):
            grpc_outcomes.append(error)
            grpc_done.release()

        for _ in range(16):
            client.async_infer("slow", [inp], finished, client_timeout=300)
        for _ in range(16):
            self.assertTrue(grpc_done.acquire(timeout=300))
        client.close()
        refused_grpc = [e for e in grpc_outcomes if e is not None]
        answers = self.collect(sockets)
        ok = [a for a in answers if a[0] == 200]
        busy = [a for a in answers if a[0] == 503]
        self.assertEqual(len(ok) + len(busy), FLOOD, [a[0] for a in answers])
        self.assertGreater(len(busy), 0, "no request was refused: the queue is not bounded")
        for _, headers, body in busy:
            self.assertEqual(headers.get("retry-after"), "1")
            self.assertEqual(json.loads(body)["error"],
                             f"model 'slow' is busy: {DEFAULT_QUEUE} requests wait for a worker, its max_queue_size; "
                             f"try again later")
        for _, headers, body in ok:
            self.assertEqual(body[int(headers["inference-header-content-length"]):], expected)
        self.assertTrue(refused_grpc, "gRPC was never refused")
        for e in refused_grpc:
            self.assertEqual(e.status(), "StatusCode.UNAVAILABLE")
            self.assertIn("model 'slow' is busy", e.message())

    def test_health_metadata_and_other_models_answer_at_once_while_a_model_is_saturated(self):
        sockets = self.flood()
        self.assertTrue(wait_for(lambda: self.pending() >= DEFAULT_QUEUE - 8, timeout=30), "the queue did not fill")
        took = {}
        for path in ("/v2/health/live", "/v2/health/ready", "/metrics", "/v2/models/slow", "/v2"):
            times = []
            for _ in range(8):
                start = time.monotonic()
                status = urllib.request.urlopen(f"http://{self.server.http_url}{path}", timeout=30).status
                times.append(time.monotonic() - start)
                self.assertEqual(status, 200, path)
            took[path] = times
        x = np.ones(1024, dtype=np.float32)
        body = json.dumps({"inputs": [{"name": "input", "shape": [1024], "datatype": "FP32",
                                       "data": x.tolist()}]}).encode()
        start = time.monotonic()
        answer = json.loads(urllib.request.urlopen(f"http://{self.server.http_url}/v2/models/quick/infer",
                                                   data=body, timeout=30).read())
        took["quick model"] = [time.monotonic() - start]
        self.assertEqual(answer["outputs"][0]["data"][:3], [3.0, 3.0, 3.0])
        still_full = self.pending()
        self.collect(sockets)
        print("while saturated: " + ", ".join(f"{p} median {statistics.median(t) * 1000:.1f} ms, "
                                              f"most {max(t) * 1000:.1f} ms" for p, t in took.items()))
        self.assertGreaterEqual(still_full, DEFAULT_QUEUE // 2, "the model was no longer saturated while probed")
        for path, times in took.items():
            self.assertLess(max(times), PROBE_LIMIT_S, f"{path} waited behind the model: {times}")

    def test_grpc_holds_many_calls_on_bounded_threads(self):
        client = grpcclient.InferenceServerClient(self.server.grpc_url)
        inp = grpcclient.InferInput("input", [ROWS, WIDTH], "FP16")
        inp.set_data_from_numpy(np.zeros((ROWS, WIDTH), dtype=np.float16))
        calls = 300
        outcomes = []
        lock = threading.Lock()
        done = threading.Semaphore(0)

        def finished(result, error):
            with lock:
                outcomes.append("ok" if error is None else error.status())
            done.release()

        before = thread_count(self.server.process.pid)
        most = before
        for _ in range(calls):
            client.async_infer("slow", [inp], finished, client_timeout=300)
        deadline = time.monotonic() + 300
        answered = 0
        while answered < calls and time.monotonic() < deadline:
            most = max(most, thread_count(self.server.process.pid))
            if done.acquire(timeout=0.05):
                answered += 1
        client.close()
        counts = {k: outcomes.count(k) for k in set(outcomes)}
        print(f"{calls} gRPC calls: {counts}; server threads {before} before, {most} at most")
        self.assertEqual(answered, calls)
        self.assertLessEqual(set(counts), {"ok", "StatusCode.UNAVAILABLE"})
        self.assertGreater(counts.get("ok", 0), 0)
        # gRPC's own few threads and the server's fixed pools: nowhere near a thread per call.
        self.assertLess(most, before + 32, f"{most} threads for {calls} calls")


if __name__ == "__main__":
    unittest.main()
