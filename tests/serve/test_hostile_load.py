"""`ferry serve` under hostile load, each attack with the figure it is held to: resident memory
within the in-flight budget and a stated margin, a legitimate client served within a second, no
INTERNAL for anyone, threads bounded. At CI sizes (budgets of tens of MiB); scripts/serve_attacks.py
runs the same attacks at full size.

Once: 8 gRPC messages of 1000 MiB took the server to 1.9 times its budget; 3 connections each
announcing a 1 GiB body, a byte every 10 s, held the whole budget for a minute; JSON answers
nobody read took 4.5 GB; 1,024 slow clients over 4 addresses locked out a fifth; an unload of a
busy model held the threads another model's requests needed for 26 s; a folder or a region named
with byte 0xFF made every gRPC index, statistics and shared-memory status INTERNAL and went raw
into /metrics; a config asked for 4,119 threads or 32 GiB of weights and got them; a client could
register any /dev/shm object of the server's machine; 8 requests refused with 400 left
nv_inference_request_failure at 0."""
import json
import os
import re
import select
import shutil
import socket
import threading
import time
import unittest
import urllib.error
import urllib.request

import grpc
import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from ferry_server import (SANITIZED, FerryServer, read_answer, resident_mb, run_clients, stop_and_remove,
                          thread_count, wait_for, write_repository)

MiB = 1 << 20
SERVICE_S = 1.0  # a legitimate client is served within this, whatever the attack does
# Under a sanitizer everything runs several times slower, and memory is padded and quarantined.
SLOWER = 5 if SANITIZED else 1


class Sampler:
    """The server's resident memory, sampled every 20 ms while an attack runs."""

    def __init__(self, pid):
        self.pid, self.peak, self.done = pid, resident_mb(pid), threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, resident_mb(self.pid))
            self.done.wait(0.02)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


def http_infer_touch(port, elements, timeout=10, binary_output=True):
    """One touch inference over HTTP on a new connection: (status, seconds)."""
    x = np.arange(elements, dtype=np.float32)
    header = json.dumps({"inputs": [{"name": "input", "shape": [elements], "datatype": "FP32",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "outputs": [{"name": "output", "parameters": {"binary_data": binary_output}}]}).encode()
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(f"POST /v2/models/touch/infer HTTP/1.1\r\nHost: t\r\nContent-Length: {len(header) + x.nbytes}\r\n"
              f"Inference-Header-Content-Length: {len(header)}\r\nConnection: close\r\n\r\n".encode() + header +
              x.tobytes())
    status, _, _ = read_answer(s, timeout)
    s.close()
    return status, time.monotonic() - start


def http_post(port, path, body, timeout=30):
    """A JSON POST on a new connection: (status, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
              f"\r\nConnection: close\r\n\r\n".encode() + body)
    status, _, answer = read_answer(s, timeout)
    s.close()
    return status, answer


def metrics(server):
    with urllib.request.urlopen(f"http://{server.http_url}/metrics") as answer:
        return answer.read()


def failures(server, model):
    """nv_inference_request_failure of `model`, by reason."""
    text = metrics(server).decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(
        r'^nv_inference_request_failure\{model="' + re.escape(model) + r'",version="1",reason="(\w+)"\} (\S+)$',
        text, re.M)}


@unittest.skipIf(SANITIZED, "a sanitizer's allocator pads and quarantines memory on purpose: no memory bound holds")
class GrpcMessagesShareTheBudget(unittest.TestCase):
    """8 gRPC messages at once, each up to the largest gRPC takes and past it: gRPC holds what
    arrives in its part of the budget, the rest is admitted into the remainder by its size before
    it is parsed, and parsed letting go of its bytes. Peak resident memory stays within the budget
    and a margin of half of it (what gRPC's quota lets arrive past its size before its reclaimer
    refuses streams, and freed pages the allocator has not given back yet)."""

    BUDGET = 128 * MiB

    def test_large_messages_at_once_stay_within_the_budget(self):
        repository = write_repository({"touch": {"engine": "touch", "input_size": "4KiB"}}, "ferry_hostile_grpc_")
        server = FerryServer("--max-inflight-bytes", str(self.BUDGET), repository=repository)
        try:
            client = grpcclient.InferenceServerClient(server.grpc_url)
            small = np.ones(1024, dtype=np.float32)
            inp = grpcclient.InferInput("input", [1024], "FP32")
            inp.set_data_from_numpy(small)
            client.infer("touch", [inp])  # threads and buffers made
            time.sleep(0.5)
            before = resident_mb(server.process.pid)
            statuses = []
            lock = threading.Lock()
            for size in (self.BUDGET // 4 - MiB, 2 * self.BUDGET // 4):  # fits gRPC's part; past it
                sampler = Sampler(server.process.pid)
                x = np.ones(size // 4, dtype=np.float32)

                def attack(_):
                    c = grpcclient.InferenceServerClient(server.grpc_url)
                    big = grpcclient.InferInput("input", [x.size], "FP32")
                    big.set_data_from_numpy(x)
                    try:
                        c.infer("touch", [big], client_timeout=120)
                        status = "OK"
                    except InferenceServerException as e:
                        status = e.status()
                    with lock:
                        statuses.append(status)

                self.assertEqual(run_clients(8, attack), [])
                peak = sampler.stop()
                print(f"\n8 gRPC messages of {size // MiB} MiB: resident {before:.0f} MiB before, {peak:.0f} at "
                      f"the peak (budget {self.BUDGET // MiB} MiB)", flush=True)
                self.assertLessEqual(peak - before, self.BUDGET // MiB * 1.5)
            # Refused (too large, no room: RESOURCE_EXHAUSTED; gRPC's buffer quota full, so its
            # reclaimer resets the stream: UNAVAILABLE) or wrong for the model: never INTERNAL, never OK.
            self.assertNotIn("StatusCode.INTERNAL", statuses)
            self.assertTrue(all(s in ("StatusCode.RESOURCE_EXHAUSTED", "StatusCode.INVALID_ARGUMENT",
                                      "StatusCode.UNAVAILABLE") for s in statuses), statuses)
            start = time.monotonic()
            out = grpcclient.InferenceServerClient(server.grpc_url).infer("touch", [inp]).as_numpy("output")
            self.assertLess(time.monotonic() - start, SERVICE_S)
            np.testing.assert_array_equal(out, small * 2 + 1)
        finally:
            stop_and_remove(server, repository)


class WellBehavedClient:
    """Beside an attack: an HTTP and a gRPC inference in turn until stopped, each counted as served
    (200 / OK with the right answer) or refused, with its latency."""

    ELEMENTS = 16384

    def __init__(self, server):
        self.server, self.done = server, threading.Event()
        self.outcomes = {"http": [], "grpc": []}  # (served, seconds)
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        grpc_client = grpcclient.InferenceServerClient(self.server.grpc_url)
        x = np.ones(self.ELEMENTS, dtype=np.float32)
        inp = grpcclient.InferInput("input", [self.ELEMENTS], "FP32")
        inp.set_data_from_numpy(x)
        while not self.done.is_set():
            status, took = http_infer_touch(self.server.http_port, self.ELEMENTS)
            self.outcomes["http"].append((status == 200, took))
            start = time.monotonic()
            try:
                served = bool((grpc_client.infer("touch", [inp]).as_numpy("output") == x * 2 + 1).all())
            except InferenceServerException:
                served = False
            self.outcomes["grpc"].append((served, time.monotonic() - start))
            self.done.wait(0.05)
        grpc_client.close()

    def stop(self):
        self.done.set()
        self.thread.join()
        return {protocol: (sum(1 for ok, _ in o if not ok), len(o)) for protocol, o in self.outcomes.items()}


class SlowBodiesHoldWhatTheySent(unittest.TestCase):
    """Connections announcing bodies that fill the budget together and sending them slowly: a body
    holds what has arrived (and a step ahead), not what it announced, so a well-behaved client
    beside them is served on both protocols (at most 5% refused), whether they send just above the
    minimum rate or a byte now and then, reconnecting after each 408. Once, three such connections
    held the whole budget until the request deadline: 593 of 697 HTTP and 580 of 683 gRPC
    inferences were refused for a minute."""

    BUDGET = 64 * MiB
    GRACE_S = 1.0
    RATE = 64 << 10  # --http-min-transfer-rate
    ATTACK_S = 4.0
    MOST_REFUSED = 0.05

    def serve(self):
        repository = write_repository({"touch": {"engine": "touch", "input_size": "64KiB"}}, "ferry_hostile_slow_")
        server = FerryServer("--max-inflight-bytes", str(self.BUDGET), "--http-transfer-grace-ms",
                             str(int(self.GRACE_S * 1000)), "--http-min-transfer-rate", str(self.RATE),
                             repository=repository)
        self.addCleanup(stop_and_remove, server, repository)
        return server

    def announce(self, server, announced):
        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
        s.sendall(f"POST /v2/models/touch/infer HTTP/1.1\r\nHost: t\r\nContent-Length: {announced}\r\n"
                  f"Inference-Header-Content-Length: 100\r\n\r\n".encode())
        return s

    def check(self, what, refused):
        print(f"\n{what}: well-behaved client refused {refused['http'][0]} of {refused['http'][1]} (HTTP), "
              f"{refused['grpc'][0]} of {refused['grpc'][1]} (gRPC)", flush=True)
        for protocol, (count, total) in refused.items():
            self.assertGreater(total, 0, protocol)
            self.assertLessEqual(count, self.MOST_REFUSED * total, f"{protocol}: {count} of {total} refused")

    def test_bodies_sent_just_above_the_minimum_rate(self):
        server = self.serve()
        announced = (self.BUDGET - self.BUDGET // 4) // 3  # the three fill what requests are admitted into
        attackers = [self.announce(server, announced) for _ in range(3)]
        stop = threading.Event()

        def send_at_rate():
            # 10% above the minimum rate, in pieces every 0.1 s.
            piece = b"x" * int(self.RATE * 1.1 / 10)
            while not stop.wait(0.1):
                for s in attackers:
                    try:
                        s.send(piece)
                    except OSError:
                        pass

        sender = threading.Thread(target=send_at_rate)
        sender.start()
        client = WellBehavedClient(server)
        time.sleep(self.ATTACK_S)
        refused = client.stop()
        stop.set()
        sender.join()
        for s in attackers:
            s.close()
        self.check(f"3 bodies of {announced // MiB} MiB at 1.1 x the minimum rate", refused)

    def test_a_byte_now_and_then_reconnecting_after_each_408(self):
        server = self.serve()
        announced = (self.BUDGET - self.BUDGET // 4) // 3
        stop = threading.Event()
        cut = [0]

        def attacker():
            while not stop.is_set():
                s = self.announce(server, announced)
                while not stop.wait(0.4):
                    try:
                        s.send(b"x")
                    except OSError:
                        break
                    if select.select([s], [], [], 0)[0]:  # answered (408): reconnect at once
                        cut[0] += 1
                        break
                s.close()

        attackers = [threading.Thread(target=attacker) for _ in range(3)]
        for t in attackers:
            t.start()
        client = WellBehavedClient(server)
        time.sleep(self.ATTACK_S)
        refused = client.stop()
        stop.set()
        for t in attackers:
            t.join()
        self.assertGreater(cut[0], 0, "no attacker was cut for sending too slowly")
        self.check(f"3 bodies of {announced // MiB} MiB, a byte every 0.4 s, {cut[0]} reconnections", refused)


class AnswersAreChargedBeforeTheyAreMade(unittest.TestCase):
    """Binary inputs asking for JSON outputs (several times larger), their answers never read: a
    request whose answer would not fit is refused before it runs (503, saying so), resident memory
    stays within the budget and a margin of half of it (freed bodies of the refused requests the
    allocator has not given back yet), and the answers nobody reads let the budget go once they
    stall for the grace."""

    BUDGET = 64 * MiB
    ELEMENTS = 300_000  # 1.2 MB in; about 12 MB of JSON out at the bound

    def test_json_answers_nobody_reads(self):
        repository = write_repository({"touch": {"engine": "touch", "input_size": self.ELEMENTS * 4}},
                                      "ferry_hostile_json_")
        # One network may take the whole budget here: what is tried is the answers' charge against it.
        server = FerryServer("--max-inflight-bytes", str(self.BUDGET), "--max-inflight-bytes-per-peer",
                             str(self.BUDGET), "--http-transfer-grace-ms", "1000", repository=repository)
        try:
            self.assertEqual(http_infer_touch(server.http_port, self.ELEMENTS)[0], 200)
            time.sleep(0.5)
            before = resident_mb(server.process.pid)
            sampler = Sampler(server.process.pid)
            x = np.arange(self.ELEMENTS, dtype=np.float32)
            header = json.dumps({"inputs": [{"name": "input", "shape": [self.ELEMENTS], "datatype": "FP32",
                                             "parameters": {"binary_data_size": x.nbytes}}],
                                 "outputs": [{"name": "output"}]}).encode()  # JSON output
            request = (f"POST /v2/models/touch/infer HTTP/1.1\r\nHost: t\r\nContent-Length: "
                       f"{len(header) + x.nbytes}\r\nInference-Header-Content-Length: {len(header)}\r\n\r\n"
                       ).encode() + header + x.tobytes()
            sockets = []
            for _ in range(40):
                s = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the answers wait in the server
                try:
                    s.sendall(request)
                except OSError:
                    pass
                sockets.append(s)
            time.sleep(1.5 * SLOWER)
            # Read the start of every answer: 200s (answers made) and 503s (no room for theirs).
            statuses = []
            answers_refused = 0  # the rest of the 503s were refused from their headers (the bodies' budget)
            for s in sockets:
                s.settimeout(10)
                try:
                    head = s.recv(4096)
                except OSError:
                    head = b""
                statuses.append(int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else None)
                answers_refused += b"this request's answer may take up to" in head
            peak = sampler.stop()
            for s in sockets:
                s.close()
            print(f"\n40 JSON answers of {self.ELEMENTS} floats never read: {statuses.count(200)} made, "
                  f"{statuses.count(503)} refused; resident {before:.0f} MiB before, {peak:.0f} at the peak "
                  f"(budget {self.BUDGET // MiB} MiB)", flush=True)
            self.assertGreater(answers_refused, 0, statuses)
            self.assertGreater(statuses.count(200), 0, statuses)
            if not SANITIZED:
                self.assertLessEqual(peak - before, self.BUDGET // MiB * 1.5)
            # The stalled answers let go: a legitimate request is served again.
            self.assertTrue(wait_for(lambda: http_infer_touch(server.http_port, self.ELEMENTS)[0] == 200,
                                     5 * SLOWER))
        finally:
            stop_and_remove(server, repository)


class SmallRequestsDoNotWaitForLargeAnswers(unittest.TestCase):
    """Pipelined requests whose JSON answers nobody reads, several times the input, beside a client
    of small JSON inferences (a body of a few KiB, decoded off the I/O threads): the small ones are
    never queued behind the large answers' encoding. Once one pool did both, in turn: a small
    inference beside 70 connections of unread 17 MB answers took up to 9 s; here, on one thread a
    lane, 470-530 ms (against 19-90 ms with a lane for small work)."""

    ELEMENTS = 300_000
    CONNECTIONS = 48
    MOST_S = 0.4  # the slowest small inference

    def test_a_small_inference_beside_large_unread_answers(self):
        repository = write_repository({"touch": {"engine": "touch", "input_size": self.ELEMENTS * 4},
                                       "small": {"engine": "touch", "input_size": "4KiB"}}, "ferry_hostile_lanes_")
        budget = 512 * MiB
        server = FerryServer("--max-inflight-bytes", str(budget), "--max-inflight-bytes-per-peer", str(budget),
                             "--http-threads", "1", repository=repository)
        try:
            x = np.arange(self.ELEMENTS, dtype=np.float32)
            header = json.dumps({"inputs": [{"name": "input", "shape": [self.ELEMENTS], "datatype": "FP32",
                                             "parameters": {"binary_data_size": x.nbytes}}],
                                 "outputs": [{"name": "output"}]}).encode()
            request = (f"POST /v2/models/touch/infer HTTP/1.1\r\nHost: t\r\nContent-Length: "
                       f"{len(header) + x.nbytes}\r\nInference-Header-Content-Length: {len(header)}\r\n\r\n"
                       ).encode() + header + x.tobytes()
            small = json.dumps({"inputs": [{"name": "input", "shape": [1024], "datatype": "FP32",
                                            "data": [0.5] * 1024}]}).encode()
            self.assertGreater(len(small), 4096)  # decoded on a pool, not on the I/O thread
            stop = threading.Event()
            took = []

            def small_client():
                while not stop.is_set():
                    start = time.monotonic()
                    status, _ = http_post(server.http_port, "/v2/models/small/infer", small)
                    took.append(time.monotonic() - start if status == 200 else float("inf"))
                    stop.wait(0.05)

            prober = threading.Thread(target=small_client)
            prober.start()
            sockets = []
            try:
                for _ in range(self.CONNECTIONS):
                    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    sockets.append(s)
                    try:
                        s.sendall(request * 4)
                    except OSError:
                        pass
                time.sleep(2 * SLOWER)
            finally:
                stop.set()
                prober.join()
                for s in sockets:
                    s.close()
            print(f"\n{len(took)} small inferences beside {self.CONNECTIONS} x 4 unread JSON answers of "
                  f"{self.ELEMENTS} floats: slowest {max(took) * 1000:.0f} ms", flush=True)
            self.assertGreater(len(took), 5)
            self.assertLess(max(took), self.MOST_S * SLOWER)
        finally:
            stop_and_remove(server, repository)


class ManyPeersCannotFillTheServer(unittest.TestCase):
    """Trickling connections from 4 networks, as many as each may hold and the server takes: the
    last tenth of the connections is kept for networks holding fewer than 4, so a fifth is served
    at once."""

    MAX_CONNECTIONS = 80

    def test_a_fifth_network_is_served(self):
        server = FerryServer("--http-max-connections", str(self.MAX_CONNECTIONS))
        held = []
        try:
            for network in range(4):
                for _ in range(self.MAX_CONNECTIONS // 4):
                    try:
                        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                                     source_address=(f"127.0.{10 + network}.1", 0))
                        s.send(b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: slow\r\n")
                        held.append(s)
                    except OSError:
                        pass
            time.sleep(0.3)
            start = time.monotonic()
            s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                         source_address=("127.0.99.1", 0))
            s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
            status, _, body = read_answer(s, 5)
            took = time.monotonic() - start
            s.close()
            print(f"\n{len(held)} trickling connections from 4 networks: a fifth served in {took * 1000:.0f} ms",
                  flush=True)
            self.assertEqual(status, 200, body)
            self.assertLess(took, SERVICE_S * SLOWER)
        finally:
            for s in held:
                s.close()
            self.assertEqual(server.stop(), 0, "\n".join(server.log))


class ManyNetworksCannotFillTheServer(unittest.TestCase):
    """More trickling connections than the server takes, from many networks holding 3 each (fewer
    than the reserve's 4, so each may use it), reconnecting whenever closed: a client from a new
    network is let in at once, an idle or half-sent connection of a network holding more closed
    for it, at most 5% refused. Once, 1,100 connections from 367 networks got a new one 503 for
    20 of 50 requests."""

    MAX_CONNECTIONS = 120
    NETWORKS = 45  # 135 connections
    PROBES = 20

    def test_a_new_network_is_served(self):
        server = FerryServer("--http-max-connections", str(self.MAX_CONNECTIONS), "--http-header-timeout-ms", "500")
        stop = threading.Event()

        def trickler(source):
            s = None
            while not stop.is_set():
                try:
                    if s is None:
                        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                                     source_address=(source, 0))
                        s.send(b"POST /v2/models/touch/infer HTTP/1.1\r\n")
                    s.send(b"X")
                except OSError:
                    if s is not None:
                        s.close()
                    s = None
                    continue
                stop.wait(0.1)
            if s is not None:
                s.close()

        threads = [threading.Thread(target=trickler, args=(f"127.0.{20 + n}.1",))
                   for n in range(self.NETWORKS) for _ in range(3)]
        for t in threads:
            t.start()
        statuses = []
        try:
            time.sleep(0.5)
            for _ in range(self.PROBES):
                s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                             source_address=("127.0.99.1", 0))
                s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
                statuses.append(read_answer(s, 5)[0])
                s.close()
                time.sleep(0.1)
        finally:
            stop.set()
            for t in threads:
                t.join()
        print(f"\n{len(threads)} trickling connections from {self.NETWORKS} networks: a new network got "
              f"{statuses.count(200)} of {len(statuses)} answered 200", flush=True)
        self.assertLessEqual(len(statuses) - statuses.count(200), 0.05 * len(statuses), statuses)
        self.assertEqual(server.stop(), 0, "\n".join(server.log))


class ModelControlNeverBlocksInference(unittest.TestCase):
    """An unload of a busy model, then one more control call: both callers are answered at the
    control timeout (504, saying what goes on), the index shows the model UNLOADING, and another
    model's requests are served within a second over HTTP and gRPC all along."""

    def test_an_unload_of_a_busy_model_holds_no_request_thread(self):
        repository = write_repository(
            {"slow": {"engine": "mlp:8x2048", "max_batch": 32, "batch_delay_us": 1000, "inflight": 1},
             "quick": {"engine": "touch", "input_size": "64KiB"}, "other": {"engine": "touch"}},
            "ferry_hostile_control_")
        server = FerryServer("--model-control-mode", "explicit", "--load-model", "slow", "--load-model", "quick",
                             "--model-control-timeout-secs", "1", "--http-threads", "2", "--grpc-threads", "2",
                             repository=repository)
        try:
            if not any("running on the CPU" in line for line in server.log):
                self.skipTest("the slow model takes a second's work to unload on the CPU reference only")
            rows = np.zeros((32, 2048), dtype=np.float16)
            stop = threading.Event()

            def keep_slow_busy(_):
                c = grpcclient.InferenceServerClient(server.grpc_url)
                inp = grpcclient.InferInput("input", [32, 2048], "FP16")
                inp.set_data_from_numpy(rows)
                while not stop.is_set():
                    try:
                        c.infer("slow", [inp], client_timeout=60)
                    except InferenceServerException:
                        time.sleep(0.05)  # unloading: refused

            load = [threading.Thread(target=keep_slow_busy, args=(i,)) for i in range(3 if SANITIZED else 12)]
            for t in load:
                t.start()
            time.sleep(1)
            outcomes = {}

            def control(name, call):
                client = httpclient.InferenceServerClient(server.http_url, network_timeout=30)
                start = time.monotonic()
                try:
                    getattr(client, call)(name)
                    outcomes[name] = ("done", time.monotonic() - start)
                except InferenceServerException as e:
                    outcomes[name] = (e.status(), time.monotonic() - start, e.message())

            calls = [threading.Thread(target=control, args=("slow", "unload_model"))]
            calls[0].start()
            time.sleep(0.2)
            calls.append(threading.Thread(target=control, args=("other", "load_model")))
            calls[1].start()
            # Meanwhile: the quick model over both protocols, bodies large enough for the pools.
            worst = 0.0
            x = np.ones(16384, dtype=np.float32)
            http = httpclient.InferenceServerClient(server.http_url)
            grpc_client = grpcclient.InferenceServerClient(server.grpc_url)
            index_states = set()
            for _ in range(10):
                for lib, client in ((httpclient, http), (grpcclient, grpc_client)):
                    inp = lib.InferInput("input", [16384], "FP32")
                    inp.set_data_from_numpy(x)
                    start = time.monotonic()
                    np.testing.assert_array_equal(client.infer("quick", [inp]).as_numpy("output"), x * 2 + 1)
                    worst = max(worst, time.monotonic() - start)
                index_states.add({m["name"]: m for m in http.get_model_repository_index()}["slow"]["state"])
                time.sleep(0.1)
            for t in calls:
                t.join(30)
            stop.set()
            for t in load:
                t.join(60 * SLOWER)
            print(f"\nunload of a busy model and a load behind it: {outcomes}; another model's inference "
                  f"took {worst * 1000:.0f} ms at worst", flush=True)
            self.assertLess(worst, SERVICE_S * SLOWER)
            self.assertIn("UNLOADING", index_states)
            unload = outcomes["slow"]
            if unload[0] != "done":  # the unload outlived its caller's timeout
                self.assertEqual(unload[0], "504", unload)
                self.assertIn("goes on, and the repository index shows the model LOADING or UNLOADING", unload[2])
            self.assertEqual(outcomes["other"][0], "504", outcomes["other"])
            self.assertIn("was not started within 1000 ms: unload of model 'slow' still runs", outcomes["other"][2])
            self.assertLess(outcomes["other"][1], 1 + SERVICE_S * SLOWER)
            # The unload ends once its requests are answered.
            self.assertTrue(wait_for(lambda: {m["name"]: m for m in http.get_model_repository_index()}
                                     ["slow"]["state"] == "UNAVAILABLE", 30 * SLOWER))
        finally:
            stop_and_remove(server, repository)


class NamesAreUntrustedBytes(unittest.TestCase):
    """A model folder and a shared-memory region named with byte 0xFF: the model is unavailable,
    saying why, under its printable name; the region is refused (400); /metrics and every gRPC
    answer carry only valid UTF-8, and no client gets INTERNAL."""

    def test_byte_ff_reaches_no_client_raw(self):
        repository = write_repository({"good": {"engine": "touch", "input_size": "4KiB"}}, "ferry_hostile_names_")
        bad = os.path.join(os.fsencode(repository), b"bad\xffname")
        os.makedirs(bad)
        with open(os.path.join(bad, b"config.json"), "w") as f:
            json.dump({"engine": "touch"}, f)
        server = FerryServer("--allow-client-shm", repository=repository)
        try:
            http = httpclient.InferenceServerClient(server.http_url)
            index = {m["name"]: m for m in http.get_model_repository_index()}
            self.assertEqual(index["bad\\xffname"]["state"], "UNAVAILABLE")
            self.assertIn("its folder's name is not valid UTF-8 (byte 0xff at offset 3)", index["bad\\xffname"]["reason"])
            text = metrics(server)
            text.decode("utf-8")  # valid UTF-8 throughout
            self.assertNotIn(b"\xff", text)
            self.assertIn(b'model="bad\\\\xffname"', text)  # the printable name, its backslash escaped
            # A region named with 0xFF: refused, the name shown escaped.
            with self.assertRaises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(urllib.request.Request(
                    f"http://{server.http_url}/v2/systemsharedmemory/region/r%FF/register",
                    data=json.dumps({"key": "/ferry-x", "byte_size": 64}).encode(), method="POST"))
            self.assertEqual(e.exception.code, 400)
            self.assertIn("shared-memory region name 'r\\xff' is not valid UTF-8", json.loads(e.exception.read())["error"])
            # The same over gRPC, bytes built by hand (a proto3 string field with byte 0xFF).
            channel = grpc.insecure_channel(server.grpc_url)
            register = channel.unary_unary("/inference.GRPCInferenceService/SystemSharedMemoryRegister",
                                           request_serializer=lambda b: b, response_deserializer=lambda b: b)
            raw = b"\x0a\x02r\xff" + b"\x12\x08/ferry-x" + b"\x20\x40"
            with self.assertRaises(grpc.RpcError) as rpc:
                register(raw, timeout=10)
            self.assertIn(rpc.exception.code(), (grpc.StatusCode.INVALID_ARGUMENT,), rpc.exception.details())
            # Every gRPC answer that lists names parses in the client: no INTERNAL.
            client = grpcclient.InferenceServerClient(server.grpc_url)
            names = [m.name for m in client.get_model_repository_index().models]
            self.assertIn("bad\\xffname", names)
            self.assertEqual(len(client.get_inference_statistics().model_stats), 2)
            client.get_system_shared_memory_status()
            self.assertEqual(client.get_model_repository_index().models[0].name, "bad\\xffname")
        finally:
            stop_and_remove(server, repository)


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


class ConfigsAreResourceRequests(unittest.TestCase):
    """A config asking for 64 x 64 workers and one asking for 32 GiB of weights: both models are
    unavailable with the figures in their reasons, nothing of them was made (threads and resident
    memory as with the good model alone)."""

    def serve(self, models):
        repository = write_repository({"good": {"engine": "touch", "input_size": "4KiB"}, **models},
                                      "ferry_hostile_configs_")
        server = FerryServer("--strict-readiness=false", repository=repository)
        index = {m["name"]: m for m in httpclient.InferenceServerClient(server.http_url).get_model_repository_index()}
        self.assertEqual(index["good"]["state"], "READY")
        return server, repository, index

    def test_threads_are_bounded(self):
        server, repository, index = self.serve({"threads": {"engine": "touch", "instances_per_gpu": 64,
                                                            "inflight": 64}})
        try:
            self.assertEqual(index["threads"]["state"], "UNAVAILABLE")
            self.assertIn("threads (instances_per_gpu 64 x inflight 64 workers per device, and one more), more than "
                          "the 256 a model may have (--max-model-threads)", index["threads"]["reason"])
            threads = thread_count(server.process.pid)
            print(f"\n64 x 64 workers asked for: the server runs {threads} threads", flush=True)
            self.assertLess(threads, 200)  # against 4,097 for that model alone
        finally:
            stop_and_remove(server, repository)

    def test_session_buffers_past_a_gpus_memory_are_refused_before_they_are_made(self):
        # 4 slots of a 64 GiB input and its 64 GiB output on each GPU: more than any GPU has. On the
        # CPU nothing is allocated at load (a request brings its own bytes), so this is a GPU check.
        server, repository, index = self.serve({"huge": {"engine": "touch", "input_size": "64GiB", "inflight": 4}})
        try:
            if any("running on the CPU" in line for line in server.log):
                self.skipTest("session buffers are made on a GPU only")
            self.assertEqual(index["huge"]["state"], "UNAVAILABLE")
            self.assertIn("its sessions' buffers would take 549.8 GB on GPU ", index["huge"]["reason"])
        finally:
            stop_and_remove(server, repository)

    def test_weights_past_the_hosts_memory_are_refused_before_they_are_made(self):
        if mem_available() >= 34 << 30:
            self.skipTest("this machine has the memory for mlp:64x16384's 32 GiB of weights, and would load them")
        server, repository, index = self.serve({"weights": {"engine": "mlp:64x16384"}})
        try:
            self.assertEqual(index["weights"]["state"], "UNAVAILABLE")
            self.assertIn("its weights would take 34.4 GB of host memory", index["weights"]["reason"])
            rss = resident_mb(server.process.pid)
            print(f"\n32 GiB of weights asked for: {rss:.0f} MiB resident", flush=True)
            self.assertLess(rss, 1024)
        finally:
            stop_and_remove(server, repository)


class ClientSharedMemoryIsConfined(unittest.TestCase):
    """--allow-client-shm=ferry-: keys without the prefix are refused, and objects another user
    owns are refused even with it; the client's own objects under the prefix serve as before."""

    def setUp(self):
        self.objects = []

    def tearDown(self):
        for name in self.objects:
            try:
                os.unlink("/dev/shm/" + name)
            except OSError:
                pass

    def make_object(self, name, size=4096):
        path = "/dev/shm/" + name
        with open(path, "wb") as f:
            f.write(b"\0" * size)
        self.objects.append(name)
        return "/" + name

    def test_prefix_and_owner(self):
        repository = write_repository({"touch": {"engine": "touch", "input_size": "4KiB"}}, "ferry_hostile_shm_")
        server = FerryServer("--allow-client-shm=ferry-", repository=repository)
        tag = f"{os.getpid()}_{time.monotonic_ns()}"
        try:
            http = httpclient.InferenceServerClient(server.http_url)
            grpc_client = grpcclient.InferenceServerClient(server.grpc_url)
            other = self.make_object(f"secret_{tag}")
            for client in (http, grpc_client):
                with self.assertRaises(InferenceServerException) as e:
                    client.register_system_shared_memory("r", other, 4096)
                self.assertIn("this server registers only objects whose name starts with 'ferry-'",
                              e.exception.message())
            own = self.make_object(f"ferry-own_{tag}")
            http.register_system_shared_memory("own", own, 4096)
            grpc_client.register_system_shared_memory("own2", own, 4096)
            self.assertEqual(len(http.get_system_shared_memory_status()), 2)
            if os.getuid() == 0:  # as root, an object of another user can be made here
                victim = self.make_object(f"ferry-victim_{tag}")
                os.chown("/dev/shm" + victim, 65534, 65534)
                for client in (http, grpc_client):
                    with self.assertRaises(InferenceServerException) as e:
                        client.register_system_shared_memory("v", victim, 4096)
                    self.assertIn("belongs to uid 65534, not to the client's user (uid 0)", e.exception.message())
        finally:
            stop_and_remove(server, repository)


class FailuresAreCountedByReason(unittest.TestCase):
    """Requests refused with 400, or for want of room in the budget, count as REJECTED failures of
    their model, as Triton's nv_inference_request_failure{reason=...} counts them."""

    def test_refused_requests_count(self):
        repository = write_repository({"touch": {"engine": "touch", "input_size": "4KiB"}}, "ferry_hostile_fail_")
        server = FerryServer("--max-inflight-bytes", str(8 * MiB), repository=repository)
        try:
            self.assertEqual(failures(server, "touch"), {"REJECTED": 0, "CANCELED": 0, "BACKEND": 0, "OTHER": 0})
            http = httpclient.InferenceServerClient(server.http_url)
            grpc_client = grpcclient.InferenceServerClient(server.grpc_url)
            wrong = np.ones(7, dtype=np.float32)  # the model takes 1024 floats
            for i in range(8):
                lib, client = (httpclient, http) if i % 2 else (grpcclient, grpc_client)
                inp = lib.InferInput("input", [7], "FP32")
                inp.set_data_from_numpy(wrong)
                with self.assertRaises(InferenceServerException):
                    client.infer("touch", [inp])
            self.assertEqual(failures(server, "touch")["REJECTED"], 8)
            # Refused from its headers: larger than the budget.
            s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
            s.sendall(b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n"
                      b"Inference-Header-Content-Length: 100\r\n\r\n")
            self.assertEqual(read_answer(s, 10)[0], 413)
            s.close()
            counts = failures(server, "touch")
            self.assertEqual(counts, {"REJECTED": 9, "CANCELED": 0, "BACKEND": 0, "OTHER": 0})
            stats = http.get_inference_statistics("touch")["model_stats"][0]["inference_stats"]
            self.assertEqual(int(stats["fail"]["count"]), 9)
        finally:
            stop_and_remove(server, repository)


if __name__ == "__main__":
    unittest.main()
