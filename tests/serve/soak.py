"""Soak: `ferry serve` under steady mixed load for two minutes, 32 clients at once (16 over HTTP,
16 over gRPC).

Every answer is checked against its reference, every request must be answered, and the server's
resident memory (VmRSS) is sampled twice a second. It fails on a wrong answer, a lost request (an
error, a timeout, or an answer count that the server's own statistics do not confirm), resident
memory growing by more than RSS_GROWTH_BOUND_MB after warm-up, or resident memory not back within
IDLE_BOUND_MB of its level before the load a few seconds after the load ends.

FERRY_SOAK_SECONDS sets the length (default 120). Run through ctest (label soak), which sets
FERRY_BIN; not under the sanitizers, whose allocators hold freed memory in quarantine on purpose.
"""
import os
import threading
import time
import unittest

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

import references as ref
from ferry_server import ServerTestCase, resident_mb, run_clients

SECONDS = float(os.environ.get("FERRY_SOAK_SECONDS", "120"))
# Memory is measured against its level at the end of warm-up: by then every model has run, every
# client has its connection and the server's threads their malloc arenas.
WARMUP_SECONDS = SECONDS / 4
# The bound on growth after warm-up. On the development machine resident memory stayed within
# 1 MiB after warm-up over a whole run (about 2,000 answers a second, 90,000 after warm-up), so
# 16 MiB leaves room for another machine's allocator and scheduling, while a leak of 200 bytes a
# request (less than any input this test sends) would cross it at that rate.
RSS_GROWTH_BOUND_MB = 16
# Once the load ends, the server gives the memory it used back (after a second of idleness): its
# resident memory must come back within this of its level before the load, within IDLE_WAIT_S.
IDLE_BOUND_MB = 64
IDLE_WAIT_S = 5
HTTP_CLIENTS = 16
GRPC_CLIENTS = 16
POOL = 16  # distinct inputs per model, so that a mixed-up answer cannot pass for the right one


class Soak(ServerTestCase):
    def test_mixed_load_every_answer_right_nothing_lost_memory_flat(self):
        rng = np.random.default_rng(5)
        touch_in = [ref.random_f32(rng, ref.TOUCH_ELEMENTS) for _ in range(POOL)]
        touch_out = [ref.touch(x) for x in touch_in]
        reduce_in = [ref.random_f32(rng, ref.REDUCE_ELEMENTS) for _ in range(POOL)]
        reduce_out = [ref.reduce(x) for x in reduce_in]
        # mlp has no numpy reference: the unbatched model's answer for each row is its reference
        # for the batched model, which merges rows of several requests into one run.
        rows = ref.random_rows(rng, POOL)
        reference_client = httpclient.InferenceServerClient(self.server.http_url)
        mlp_rows = []
        for i in range(POOL):
            inp = httpclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
            inp.set_data_from_numpy(rows[i:i + 1])
            mlp_rows.append(reference_client.infer("mlp_single", [inp]).as_numpy("output")[0])
        models = ("touch", "reduce", "mlp_batched")
        before = {m: reference_client.get_inference_statistics(m)["model_stats"][0]["inference_stats"]
                  for m in models}

        time.sleep(1)  # the reference requests' memory is given back
        before_load = resident_mb(self.server.process.pid)
        answered = {m: 0 for m in models}
        sent = [0]
        lock = threading.Lock()
        deadline = time.monotonic() + SECONDS

        def one_request(protocol, client, local, r):
            """Sends request r of a client and checks its answer; returns the model's name."""
            lib = httpclient if protocol == "http" else grpcclient
            kwargs = {"binary_data": r % 4 != 0} if protocol == "http" else {}
            pick = local.integers(POOL)
            kind = r % 3
            if kind == 0:
                inp = lib.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
                inp.set_data_from_numpy(touch_in[pick], **kwargs)
                got = client.infer("touch", [inp], request_id=f"t{r}").as_numpy("output")
                np.testing.assert_allclose(got, touch_out[pick], rtol=1e-6)
                return "touch"
            if kind == 1:
                inp = lib.InferInput("input", [ref.REDUCE_ELEMENTS], "FP32")
                inp.set_data_from_numpy(reduce_in[pick], **kwargs)
                got = client.infer("reduce", [inp]).as_numpy("sums")
                np.testing.assert_allclose(got, reduce_out[pick], rtol=1e-5, atol=1e-5)
                return "reduce"
            n = 1 + r % 3
            picks = local.choice(POOL, n, replace=False)
            inp = lib.InferInput("input", [n, ref.MLP_WIDTH], "FP16")
            inp.set_data_from_numpy(rows[picks], **kwargs)
            got = client.infer("mlp_batched", [inp]).as_numpy("output")
            np.testing.assert_array_equal(got, np.stack([mlp_rows[i] for i in picks]))
            return "mlp_batched"

        def client_loop(index):
            protocol = "http" if index < HTTP_CLIENTS else "grpc"
            if protocol == "http":
                client = httpclient.InferenceServerClient(self.server.http_url, connection_timeout=30,
                                                          network_timeout=30)
            else:
                client = grpcclient.InferenceServerClient(self.server.grpc_url)
            local = np.random.default_rng(100 + index)
            r = index
            while time.monotonic() < deadline:
                with lock:
                    sent[0] += 1
                # Any exception (a wrong answer, an error status, a timeout) ends this client and
                # is reported with its index; its request stays counted as sent, so also as lost.
                model = one_request(protocol, client, local, r)
                with lock:
                    answered[model] += 1
                r += 1

        samples = []  # (seconds since start, MiB)
        done = threading.Event()
        start = time.monotonic()

        def sample_memory():
            while not done.is_set():
                samples.append((time.monotonic() - start, resident_mb(self.server.process.pid)))
                done.wait(0.5)

        sampler = threading.Thread(target=sample_memory)
        sampler.start()
        try:
            failures = run_clients(HTTP_CLIENTS + GRPC_CLIENTS, client_loop)
        finally:
            done.set()
            sampler.join()

        load_ended = time.monotonic()
        idle = resident_mb(self.server.process.pid)
        while idle > before_load + IDLE_BOUND_MB and time.monotonic() < load_ended + IDLE_WAIT_S:
            time.sleep(0.25)
            idle = resident_mb(self.server.process.pid)
        total = sum(answered.values())
        after_warmup = [mb for t, mb in samples if t >= WARMUP_SECONDS]
        self.assertGreater(len(after_warmup), 10, "too few memory samples after warm-up")
        print(f"soak: {total} answers in {SECONDS:.0f} s ({answered}); resident memory "
              f"{samples[0][1]:.1f} MiB at the start, {after_warmup[0]:.1f} after warm-up, "
              f"{max(after_warmup):.1f} at most after that, {samples[-1][1]:.1f} at the end of the load; "
              f"{before_load:.1f} before the load, {idle:.1f} idle after it")
        self.assertEqual(failures, [])
        self.assertEqual(total, sent[0], "requests sent but not answered")
        for m in models:
            stats = reference_client.get_inference_statistics(m)["model_stats"][0]["inference_stats"]
            self.assertEqual(int(stats["success"]["count"]) - int(before[m]["success"]["count"]), answered[m], m)
            self.assertEqual(int(stats["fail"]["count"]) - int(before[m]["fail"]["count"]), 0, m)
        self.assertGreater(min(answered.values()), 0)

        growth = max(after_warmup) - after_warmup[0]
        self.assertLessEqual(growth, RSS_GROWTH_BOUND_MB,
                             f"resident memory grew {growth:.1f} MiB after warm-up: "
                             + " ".join(f"{t:.0f}s:{mb:.0f}" for t, mb in samples[::4]))
        self.assertLessEqual(idle, before_load + IDLE_BOUND_MB,
                             f"resident memory stayed {idle - before_load:.1f} MiB above its level before the load "
                             f"{IDLE_WAIT_S} s after it ended")


if __name__ == "__main__":
    unittest.main()
