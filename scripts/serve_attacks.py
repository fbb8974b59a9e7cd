#!/usr/bin/env python3
"""Hostile load against `ferry serve`, at full size, with the figures that show what it costs the
server: peak and idle resident memory, health latency while the models are saturated, threads
while gRPC holds 2,000 calls, what a trickling host does to the others, and the throughput of a
normal load for comparison. Each attack starts its own server on free ports with a repository of
its own, so runs are independent; the CI tests in tests/serve do the same at small sizes.

  scripts/serve_attacks.py --ferry build/bin/ferry ATTACK... [--json FILE] [--extra-args "..."]
                           [--server-env NAME=VALUE ...]

ATTACKs: unknown-model, json-bodies, grpc-large, many-requests, slow-model, grpc-threads, trickle,
grpc-flood, slow-bodies, slow-bodies-reconnect, json-answers, many-peers, many-networks, framing,
control-busy, throughput, all (every one but
throughput and grpc-flood, whose client needs 9 GB of its own). --extra-args are added to every server's command line
(e.g. "--max-inflight-bytes 2GiB"); arguments a server does not know make it exit at once, which
is reported. --server-env sets variables in the servers' environment only (an allocator's
LD_PRELOAD, MALLOC_ARENA_MAX), not in this client's. Run with build-tools/venv/bin/python
(tritonclient, numpy)."""
import argparse
import http.client
import json
import os
import queue
import re
import select
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

IDLE_WAIT_S = 5.0  # how long after an attack the idle memory is read
SERVER_ENV = {}  # --server-env


def resident_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def thread_count(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


class Server:
    """`ferry serve` on free ports over a repository of {name: config}."""

    def __init__(self, binary, models, extra_args=()):
        self.repository = tempfile.mkdtemp(prefix="ferry_attack_")
        for name, config in models.items():
            os.makedirs(os.path.join(self.repository, name))
            with open(os.path.join(self.repository, name, "config.json"), "w") as f:
                json.dump(config, f)
        args = [binary, "serve", "--model-repository", self.repository, "--host", "127.0.0.1",
                "--http-port", "0", "--grpc-port", "0", *extra_args]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env={**os.environ, **SERVER_ENV})
        self.log = []
        self.http_port = self.grpc_port = None
        seen = threading.Event()

        def read():
            for line in self.process.stdout:
                self.log.append(line.rstrip("\n"))
                if m := re.search(r"HTTP on [^ ]+:(\d+)", line):
                    self.http_port = int(m.group(1))
                if m := re.search(r"gRPC on [^ ]+:(\d+)", line):
                    self.grpc_port = int(m.group(1))
                if "ferry serve: serving" in line:
                    seen.set()
            seen.set()

        threading.Thread(target=read, daemon=True).start()
        if not seen.wait(60) or self.http_port is None:
            self.stop()
            raise RuntimeError("ferry serve did not start:\n" + "\n".join(self.log))
        self.pid = self.process.pid

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.repository, ignore_errors=True)
        return self.process.returncode


class Sampler:
    """Resident memory and thread count of a process, sampled every 50 ms."""

    def __init__(self, pid):
        self.pid = pid
        self.rss = []
        self.threads = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            try:
                self.rss.append(resident_mb(self.pid))
                self.threads.append(thread_count(self.pid))
            except OSError:
                return
            self.done.wait(0.05)

    def stop(self):
        self.done.set()
        self.thread.join()
        return max(self.rss), max(self.threads)


def http_status(port, method, path, body=b"", headers=None, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def announce_and_send(port, path, total, headers, chunk=1 << 20):
    """Announces a body of `total` bytes and sends it as fast as the server reads it; returns the
    status the server answered (None when it closed without one) and how many bytes went out."""
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    head = f"POST {path} HTTP/1.1\r\nHost: attack\r\nContent-Length: {total}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    s.sendall(head.encode())
    block = b"7" * chunk
    sent = 0
    try:
        while sent < total:
            n = s.send(block[:min(chunk, total - sent)])
            sent += n
    except OSError:
        pass  # the server answered and closed: what it should do for a body it will not read
    status = None
    try:
        s.settimeout(120)
        got = b""
        while b"\r\n" not in got:
            part = s.recv(4096)
            if not part:
                break
            got += part
        if got.startswith(b"HTTP/1.1 "):
            status = int(got[9:12])
    except OSError:
        pass
    s.close()
    return status, sent


def settle(server, seconds=IDLE_WAIT_S):
    time.sleep(seconds)
    return resident_mb(server.pid)


def bodies_attack(binary, extra, path, count, size, headers, models):
    server = Server(binary, models, extra)
    try:
        before = resident_mb(server.pid)
        sampler = Sampler(server.pid)
        start = time.monotonic()
        results = [None] * count

        def one(i):
            results[i] = announce_and_send(server.http_port, path, size, headers)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - start
        peak, _ = sampler.stop()
        idle = settle(server)
        return {"before_mb": before, "peak_mb": peak, "idle_mb": idle, "seconds": took,
                "statuses": [r[0] for r in results], "mb_sent": [round(r[1] / 2**20) for r in results]}
    finally:
        server.stop()


def attack_unknown_model(binary, extra):
    """8 connections each announce a 1000 MiB body to a model that does not exist."""
    return bodies_attack(binary, extra, "/v2/models/nonexistent/infer", 8, 1000 * 2**20,
                         {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": "100"},
                         {"touch": {"engine": "touch", "input_size": "4KiB"}})


def attack_json_bodies(binary, extra):
    """4 connections each send a 512 MB JSON body (no binary part) to a model that exists."""
    return bodies_attack(binary, extra, "/v2/models/touch/infer", 4, 512 * 10**6,
                         {"Content-Type": "application/json"},
                         {"touch": {"engine": "touch", "input_size": "4KiB"}})


def attack_grpc_large(binary, extra):
    """Ten rounds of 4 concurrent gRPC requests of 128 MiB each to a touch model of that size."""
    import tritonclient.grpc as grpcclient
    size = 128 * 2**20
    server = Server(binary, {"big": {"engine": "touch", "input_size": size}}, extra)
    try:
        before = resident_mb(server.pid)
        sampler = Sampler(server.pid)
        x = np.ones(size // 4, dtype=np.float32)
        outcomes = []
        lock = threading.Lock()

        def one(_):
            client = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
            inp = grpcclient.InferInput("input", [x.size], "FP32")
            inp.set_data_from_numpy(x)
            try:
                out = client.infer("big", [inp], client_timeout=300).as_numpy("output")
                ok = "ok" if out[0] == 3.0 and out[-1] == 3.0 else "wrong"
            except Exception as e:  # reported as its status
                ok = e.status() if hasattr(e, "status") else type(e).__name__
            with lock:
                outcomes.append(ok)
            client.close()

        for _ in range(10):
            threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        peak, _ = sampler.stop()
        idle = settle(server)
        counts = {k: outcomes.count(k) for k in sorted(set(outcomes))}
        return {"before_mb": before, "peak_mb": peak, "idle_mb": idle, "outcomes": counts}
    finally:
        server.stop()


def binary_request(x):
    """An HTTP inference body with one binary FP32 input, and its header length."""
    header = json.dumps({"inputs": [{"name": "input", "shape": [x.size], "datatype": "FP32",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "outputs": [{"name": "output", "parameters": {"binary_data": True}}]}).encode()
    return header + x.tobytes(), len(header)


def attack_many_requests(binary, extra, count=400, clients=16, size=4_800_000):
    """400 binary requests of 4.8 MB to touch at 16 clients, kept-alive, every answer checked."""
    server = Server(binary, {"touch": {"engine": "touch", "input_size": size, "inflight": 2}}, extra)
    try:
        before = resident_mb(server.pid)
        sampler = Sampler(server.pid)
        x = np.arange(size // 4, dtype=np.float32)
        body, header_length = binary_request(x)
        expected = (x * 2 + 1).tobytes()
        work = queue.Queue()
        for i in range(count):
            work.put(i)
        results = {"ok": 0, "wrong": 0, "refused": 0}
        lock = threading.Lock()

        def client():
            conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=120)
            while True:
                try:
                    work.get_nowait()
                except queue.Empty:
                    break
                conn.request("POST", "/v2/models/touch/infer", body=body,
                             headers={"Inference-Header-Content-Length": str(header_length),
                                      "Content-Type": "application/octet-stream"})
                r = conn.getresponse()
                data = r.read()
                length = int(r.getheader("Inference-Header-Content-Length", "0"))
                key = "refused" if r.status != 200 else ("ok" if data[length:] == expected else "wrong")
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=120)
                with lock:
                    results[key] += 1
            conn.close()

        start = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - start
        peak, _ = sampler.stop()
        idle = settle(server)
        return {"before_mb": before, "peak_mb": peak, "idle_mb": idle, "seconds": took,
                "infer_per_s": count / took, **results}
    finally:
        server.stop()


# A model taking about 0.2 s a batch on the CPU reference (32 rows of mlp:8x2048, zero-padded to
# max_batch), next to a quick one.
SLOW_MODELS = {"slow": {"engine": "mlp:8x2048", "max_batch": 32, "batch_delay_us": 1000, "inflight": 1},
               "quick": {"engine": "touch", "input_size": "4KiB"}}


def mlp_body(rows, width=2048):
    x = np.zeros((rows, width), dtype=np.float16)
    header = json.dumps({"inputs": [{"name": "input", "shape": [rows, width], "datatype": "FP16",
                                     "parameters": {"binary_data_size": x.nbytes}}]}).encode()
    return header + x.tobytes(), len(header)


def latencies(port, path, count, gap=0.05):
    """Seconds of `count` requests of `path`, each on a new connection (as a probe makes them)."""
    times = []
    for _ in range(count):
        start = time.monotonic()
        try:
            status, _ = http_status(port, "GET", path, timeout=30)
        except OSError:
            status = None
        times.append((time.monotonic() - start) if status == 200 else float("inf"))
        time.sleep(gap)
    return times


def summary(times):
    finite = sorted(times)
    p = lambda q: finite[min(len(finite) - 1, int(q * len(finite)))]
    return {"p50_ms": round(p(0.5) * 1000, 1), "p99_ms": round(p(0.99) * 1000, 1),
            "max_ms": round(finite[-1] * 1000, 1), "failed": sum(1 for t in times if t == float("inf"))}


# The model the well-behaved client asks: a small one beside each attack's own.
PROBE_MODEL = {"probe": {"engine": "touch", "input_size": "4KiB"}}
PROBE_JSON = json.dumps({"inputs": [{"name": "input", "shape": [1024], "datatype": "FP32",
                                     "data": [0.5] * 1024}]}).encode()


def well_behaved_client(http_port, grpc_port, stop, out):
    """In a process of its own: a health check, a small JSON inference over HTTP (each on a new
    connection, as a probe makes them) and a gRPC inference, every 0.1-0.5 s until `stop`; puts
    {kind: [(ok, seconds), ...]} on `out`."""
    import random
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException
    outcomes = {"health": [], "http_infer": [], "grpc_infer": []}
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{grpc_port}")
    inp = grpcclient.InferInput("input", [1024], "FP32")
    inp.set_data_from_numpy(np.full(1024, 0.5, dtype=np.float32))

    def timed(kind, call):
        start = time.monotonic()
        try:
            ok = call()
        except (OSError, http.client.HTTPException, InferenceServerException):
            ok = False
        outcomes[kind].append((ok, time.monotonic() - start))

    def http_infer():
        status, data = http_status(http_port, "POST", "/v2/models/probe/infer", PROBE_JSON,
                                   {"Content-Type": "application/json"}, timeout=30)
        return status == 200 and json.loads(data)["outputs"][0]["data"][0] == 2.0

    while not stop.is_set():
        timed("health", lambda: http_status(http_port, "GET", "/v2/health/ready", timeout=30)[0] == 200)
        timed("http_infer", http_infer)
        timed("grpc_infer", lambda: client.infer("probe", [inp], client_timeout=30).as_numpy("output")[0] == 2.0)
        stop.wait(random.uniform(0.1, 0.5))
    out.put(outcomes)


class WellBehaved:
    """The well-behaved client beside an attack, in a process of its own so that the attack's
    threads do not slow it; stop() gives, per kind, how many were refused (any answer but the
    right one) and the latency of all of them."""

    def __init__(self, server):
        import multiprocessing
        context = multiprocessing.get_context("spawn")
        self.stop_event, self.out = context.Event(), context.Queue()
        self.process = context.Process(target=well_behaved_client,
                                       args=(server.http_port, server.grpc_port, self.stop_event, self.out))
        self.process.start()

    def stop(self):
        self.stop_event.set()
        outcomes = self.out.get(timeout=120)
        self.process.join(30)
        report = {}
        for kind, results in outcomes.items():
            times = [t for _, t in results]
            report[kind] = {"count": len(results), "refused": sum(1 for ok, _ in results if not ok),
                            **(summary(times) if times else {})}
            report[kind].pop("failed", None)
        return report


def attack_slow_model(binary, extra, clients=300):
    """300 clients keep requests to `slow` in flight; meanwhile health, metrics and the quick
    model are probed."""
    server = Server(binary, SLOW_MODELS, extra)
    try:
        body, header_length = mlp_body(1)
        stop = threading.Event()
        statuses = {}
        lock = threading.Lock()

        def client():
            while not stop.is_set():
                try:
                    status, _ = http_status(server.http_port, "POST", "/v2/models/slow/infer", body,
                                            {"Inference-Header-Content-Length": str(header_length)}, timeout=600)
                except OSError as e:
                    status = type(e).__name__
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                if status != 200:
                    time.sleep(0.2)  # a refused client retries, as Retry-After asks

        threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
        for t in threads:
            t.start()
        time.sleep(5)  # every client has a request in flight or queued
        live = latencies(server.http_port, "/v2/health/live", 50)
        ready = latencies(server.http_port, "/v2/health/ready", 20)
        metrics = latencies(server.http_port, "/metrics", 20)
        x = np.ones(1024, dtype=np.float32)
        quick_body, quick_length = binary_request(x)
        start = time.monotonic()
        try:
            quick_status, _ = http_status(server.http_port, "POST", "/v2/models/quick/infer", quick_body,
                                          {"Inference-Header-Content-Length": str(quick_length)}, timeout=30)
        except OSError as e:
            quick_status = type(e).__name__
        quick_s = time.monotonic() - start
        stop.set()
        for t in threads:
            t.join(120)
        return {"live": summary(live), "ready": summary(ready), "metrics": summary(metrics),
                "quick_model": {"status": quick_status, "seconds": round(quick_s, 3)},
                "slow_statuses": {str(k): v for k, v in statuses.items()}}
    finally:
        server.stop()


def attack_grpc_threads(binary, extra, calls=2000):
    """2,000 concurrent gRPC calls to `slow`; the server's threads at most, and how calls ended."""
    import tritonclient.grpc as grpcclient
    server = Server(binary, SLOW_MODELS, extra)
    try:
        baseline = thread_count(server.pid)
        sampler = Sampler(server.pid)
        client = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
        x = np.zeros((1, 2048), dtype=np.float16)
        inp = grpcclient.InferInput("input", [1, 2048], "FP16")
        inp.set_data_from_numpy(x)
        outcomes = {}
        lock = threading.Lock()
        done = threading.Semaphore(0)

        def finished(result, error):
            key = "ok" if error is None else error.status()
            with lock:
                outcomes[key] = outcomes.get(key, 0) + 1
            done.release()

        start = time.monotonic()
        for _ in range(calls):
            client.async_infer("slow", [inp], finished, client_timeout=600)
        for _ in range(calls):
            done.acquire()
        took = time.monotonic() - start
        _, most = sampler.stop()
        client.close()
        return {"threads_at_start": baseline, "threads_at_most": most, "seconds": round(took, 1),
                "outcomes": outcomes}
    finally:
        server.stop()


def attack_trickle(binary, extra, connections=1024, rounds=3):
    """1,024 connections from 127.0.0.1 send a request a byte every 4 s (and reconnect when
    closed); probes from 127.0.0.1 and from another host address (127.0.0.2) each open a new
    connection."""
    server = Server(binary, SLOW_MODELS, extra)
    try:
        request = b"POST /v2/models/quick/infer HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 100000
        stop = threading.Event()
        reconnects = [0]

        def trickler():
            k = 0
            s = None
            while not stop.is_set():
                try:
                    if s is None:
                        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5)
                        k = 0
                    s.send(request[k:k + 1])
                    k += 1
                except OSError:
                    if s is not None:
                        s.close()
                    s = None
                    reconnects[0] += 1
                    continue
                stop.wait(4)
            if s is not None:
                s.close()

        threads = [threading.Thread(target=trickler, daemon=True) for _ in range(connections)]
        for t in threads:
            t.start()
        time.sleep(6)

        def probe(source):
            start = time.monotonic()
            try:
                s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                             source_address=(source, 0))
                s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
                got = s.recv(64)
                s.close()
                return got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed", time.monotonic() - start
            except OSError as e:
                return type(e).__name__, time.monotonic() - start

        results = {"127.0.0.1": [], "127.0.0.2": []}
        for _ in range(rounds):
            for source in results:
                for _ in range(5):
                    results[source].append(probe(source))
            time.sleep(4)
        stop.set()
        for t in threads:
            t.join(10)
        return {source: {"statuses": {s: [r[0] for r in rs].count(s) for s in {r[0] for r in rs}},
                         "max_ms": round(max(r[1] for r in rs) * 1000, 1)}
                for source, rs in results.items()} | {"reconnects": reconnects[0]}
    finally:
        server.stop()


def attack_grpc_flood(binary, extra, count=8, mib=1000):
    """8 concurrent gRPC messages of 1000 MiB (touch: the model refuses the shape, so any answer
    past the budget says so), sent as prebuilt bytes."""
    import grpc
    size = mib * 2**20
    server = Server(binary, {"touch": {"engine": "touch", "input_size": "4KiB"}}, extra)
    try:
        before = resident_mb(server.pid)
        sampler = Sampler(server.pid)
        # ModelInferRequest: model_name "touch", one FP32 input of size/4 elements, raw contents.
        name = b"\x0a\x05touch"

        def varint(n):
            out = b""
            while True:
                byte, n = n & 0x7f, n >> 7
                out += bytes([byte | (0x80 if n else 0)])
                if not n:
                    return out

        tensor = b"\x0a\x05input" + b"\x12\x04FP32" + b"\x1a" + varint(len(varint(size // 4))) + varint(size // 4)
        head = name + b"\x2a" + varint(len(tensor)) + tensor + b"\x3a" + varint(size)
        message = head + bytes(size)
        channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}",
                                        options=[("grpc.max_send_message_length", -1)])
        call = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                   request_serializer=lambda b: b, response_deserializer=lambda b: b)
        outcomes = {}
        lock = threading.Lock()

        def one():
            try:
                call(message, timeout=300)
                key = "OK"
            except grpc.RpcError as e:
                key = e.code().name
            with lock:
                outcomes[key] = outcomes.get(key, 0) + 1

        start = time.monotonic()
        threads = [threading.Thread(target=one) for _ in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - start
        peak, _ = sampler.stop()
        budget = next((int(m.group(1)) for line in server.log
                       if (m := re.search(r"in-flight memory budget (\d+) bytes", line))), 0)
        idle = settle(server)
        return {"before_mb": before, "peak_mb": peak, "idle_mb": idle, "budget_mb": round(budget / 2**20),
                "seconds": round(took, 1), "outcomes": outcomes}
    finally:
        server.stop()


def budget_of(server):
    """The in-flight budget the server printed at start, and the part set aside for gRPC."""
    m = next(m for line in server.log if (m := re.search(r"in-flight memory budget (\d+) bytes \((\d+)", line)))
    return int(m.group(1)), int(m.group(2))


def announce(port, announced):
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    s.sendall(f"POST /v2/models/touch/infer HTTP/1.1\r\nHost: a\r\nContent-Length: {announced}\r\n"
              f"Inference-Header-Content-Length: 100\r\n\r\n".encode())
    return s


def attack_slow_bodies(binary, extra, connections=3, seconds=60.0, rate=140 << 10):
    """3 connections announcing bodies that fill what requests are admitted into together (790 MB
    each at a 3.16 GB budget), each sending at 140 KiB/s (just above the 128 KiB/s minimum rate),
    reconnecting when answered; a well-behaved client meanwhile. Its refusals and latency, and
    what the slow connections were answered."""
    server = Server(binary, {"touch": {"engine": "touch", "input_size": "64KiB"}, **PROBE_MODEL}, extra)
    try:
        budget, aside = budget_of(server)
        announced = (budget - aside) // connections
        stop = threading.Event()
        answers = {}
        lock = threading.Lock()

        def attacker():
            piece = b"x" * (rate // 10)
            while not stop.is_set():
                s = announce(server.http_port, announced)
                status = "closed"
                while not stop.wait(0.1):
                    try:
                        s.send(piece)
                    except OSError:
                        break
                    if select.select([s], [], [], 0)[0]:
                        got = s.recv(64)
                        status = got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed"
                        break
                s.close()
                with lock:
                    answers[status] = answers.get(status, 0) + 1

        threads = [threading.Thread(target=attacker) for _ in range(connections)]
        for t in threads:
            t.start()
        client = WellBehaved(server)
        time.sleep(seconds)
        well_behaved = client.stop()
        stop.set()
        for t in threads:
            t.join()
        return {"announced_mb": round(announced / 2**20), "attackers_answered": answers, "well_behaved": well_behaved}
    finally:
        server.stop()


def attack_slow_bodies_reconnect(binary, extra, connections=3, seconds=30.0):
    """3 connections announcing bodies that fill the budget together, a byte every 10 s, each
    reconnecting at once when answered (408 after the 2 s grace); a well-behaved client meanwhile."""
    server = Server(binary, {"touch": {"engine": "touch", "input_size": "64KiB"}, **PROBE_MODEL}, extra)
    try:
        budget, aside = budget_of(server)
        announced = (budget - aside) // connections
        stop = threading.Event()
        answers = {}
        lock = threading.Lock()

        def attacker():
            while not stop.is_set():
                s = announce(server.http_port, announced)
                status = "closed"
                next_byte = time.monotonic() + 10
                while not stop.is_set():
                    if select.select([s], [], [], 0.1)[0]:
                        got = s.recv(64)
                        status = got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed"
                        break
                    if time.monotonic() >= next_byte:
                        try:
                            s.send(b"x")
                        except OSError:
                            break
                        next_byte += 10
                s.close()
                with lock:
                    answers[status] = answers.get(status, 0) + 1

        threads = [threading.Thread(target=attacker) for _ in range(connections)]
        for t in threads:
            t.start()
        client = WellBehaved(server)
        time.sleep(seconds)
        well_behaved = client.stop()
        stop.set()
        for t in threads:
            t.join()
        return {"announced_mb": round(announced / 2**20), "attackers_answered": answers, "well_behaved": well_behaved}
    finally:
        server.stop()


def attack_json_answers(binary, extra, count=700, clients=70, size=4_800_000):
    """700 requests of 4.8 MB binary input asking for JSON outputs (17 MB each), whose answers are
    never read (70 connections at a time, 10 requests each, pipelined); a well-behaved client
    meanwhile, from the attack's start to 5 s after its last request was sent."""
    server = Server(binary, {"touch": {"engine": "touch", "input_size": size}, **PROBE_MODEL}, extra)
    try:
        before = resident_mb(server.pid)
        sampler = Sampler(server.pid)
        x = np.arange(size // 4, dtype=np.float32)
        header = json.dumps({"inputs": [{"name": "input", "shape": [x.size], "datatype": "FP32",
                                         "parameters": {"binary_data_size": x.nbytes}}],
                             "outputs": [{"name": "output"}]}).encode()
        request = (f"POST /v2/models/touch/infer HTTP/1.1\r\nHost: a\r\nContent-Length: {len(header) + x.nbytes}"
                   f"\r\nInference-Header-Content-Length: {len(header)}\r\n\r\n").encode() + header + x.tobytes()
        sockets = []

        def client(_):
            s = socket.create_connection(("127.0.0.1", server.http_port), timeout=120)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sockets.append(s)
            for _ in range(count // clients):
                try:
                    s.sendall(request)
                except OSError:
                    return

        well_behaved = WellBehaved(server)
        time.sleep(2)  # its first requests before the attack
        start = time.monotonic()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(5)
        peak, _ = sampler.stop()
        beside = well_behaved.stop()
        heads = {}
        for s in sockets:
            try:
                s.settimeout(2)
                got = s.recv(4096)
                key = got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed"
            except OSError:
                key = "none"
            heads[key] = heads.get(key, 0) + 1
            s.close()
        idle = settle(server)
        return {"before_mb": before, "peak_mb": peak, "idle_mb": idle, "seconds": round(time.monotonic() - start, 1),
                "first_answer_per_connection": heads, "well_behaved": beside}
    finally:
        server.stop()


def attack_many_peers(binary, extra, connections=1024, networks=4):
    """1,024 connections from 4 networks (127.0.1.1 ... 127.0.4.1) trickling a request's headers a
    byte every 4 s (reconnecting when closed); probes from a fifth network (127.0.99.1)."""
    server = Server(binary, SLOW_MODELS, extra)
    try:
        request = b"POST /v2/models/quick/infer HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 100000
        stop = threading.Event()

        def trickler(source):
            k, s = 0, None
            while not stop.is_set():
                try:
                    if s is None:
                        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                                     source_address=(source, 0))
                        k = 0
                    s.send(request[k:k + 1])
                    k += 1
                except OSError:
                    if s is not None:
                        s.close()
                    s = None
                stop.wait(4)
            if s is not None:
                s.close()

        threads = [threading.Thread(target=trickler, args=(f"127.0.{1 + i % networks}.1",), daemon=True)
                   for i in range(connections)]
        for t in threads:
            t.start()
        time.sleep(6)
        results = []
        for _ in range(15):
            start = time.monotonic()
            try:
                s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                             source_address=("127.0.99.1", 0))
                s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
                got = s.recv(64)
                s.close()
                results.append((got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed",
                                time.monotonic() - start))
            except OSError as e:
                results.append((type(e).__name__, time.monotonic() - start))
            time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(10)
        return {"fifth_network": {"statuses": {k: [r[0] for r in results].count(k) for k in {r[0] for r in results}},
                                  "max_ms": round(max(r[1] for r in results) * 1000, 1)}}
    finally:
        server.stop()


def attack_many_networks(binary, extra, networks=367, per_network=3, probes=50, seconds=15.0):
    """1,100 connections from 367 /24 networks (127.1.N.1 ..., 3 each), trickling a request's
    headers a byte every 4 s and reconnecting when closed: fewer than 4 each, so every one may use
    the reserve. A client from a new network (127.0.99.1) asks /v2/health/live 50 times over the
    first 15 s, each on a new connection."""
    server = Server(binary, SLOW_MODELS, extra)
    try:
        request = b"POST /v2/models/quick/infer HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 100000
        stop = threading.Event()
        reconnects = [0]

        def trickler(source):
            k, s = 0, None
            while not stop.is_set():
                try:
                    if s is None:
                        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                                     source_address=(source, 0))
                        k = 0
                    s.send(request[k:k + 1])
                    k += 1
                except OSError:
                    if s is not None:
                        s.close()
                        reconnects[0] += 1
                    s = None
                    continue
                stop.wait(4)
            if s is not None:
                s.close()

        sources = [f"127.{1 + n // 256}.{n % 256}.1" for n in range(networks)]
        threads = [threading.Thread(target=trickler, args=(source,), daemon=True)
                   for source in sources for _ in range(per_network)]
        for t in threads:
            t.start()
        results = []
        start = time.monotonic()
        for i in range(probes):
            stop.wait(max(0.0, start + i * seconds / probes - time.monotonic()))
            asked = time.monotonic()
            try:
                s = socket.create_connection(("127.0.0.1", server.http_port), timeout=5,
                                             source_address=("127.0.99.1", 0))
                s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
                got = s.recv(64)
                s.close()
                results.append((got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed",
                                time.monotonic() - asked))
            except OSError as e:
                results.append((type(e).__name__, time.monotonic() - asked))
        stop.set()
        for t in threads:
            t.join(10)
        return {"connections": len(threads), "networks": networks, "reconnects": reconnects[0],
                "new_network": {"statuses": {k: [r[0] for r in results].count(k) for k in {r[0] for r in results}},
                                **summary([r[1] for r in results])}}
    finally:
        server.stop()


def attack_framing(binary, extra):
    """Request smuggling: a message whose framing two readers could tell apart, with a second
    request hidden in its body (Transfer-Encoding xchunked, "chunked, identity", CL.TE, TE.CL,
    obs-fold, two Content-Lengths, 1 MiB of chunk extensions, 10,000 trailers): the answers on each
    connection, and whether the hidden inference ran (the model's success count)."""
    server = Server(binary, PROBE_MODEL, extra)
    try:
        hidden = (b"POST /v2/models/probe/infer HTTP/1.1\r\nHost: h\r\nContent-Length: " +
                  str(len(PROBE_JSON)).encode() + b"\r\n\r\n" + PROBE_JSON)
        last = b"0\r\n\r\n"
        cases = {
            "TE xchunked": (b"Transfer-Encoding: xchunked\r\n", hidden),
            "TE chunked, identity": (b"Transfer-Encoding: chunked, identity\r\n", last + hidden),
            "TE identity, chunked": (b"Transfer-Encoding: identity, chunked\r\n", last + hidden),
            "TE twice": (b"Transfer-Encoding: x\r\nTransfer-Encoding: chunked\r\n", last + hidden),
            "TE obs-fold": (b"Transfer-Encoding:\r\n chunked\r\n", last + hidden),
            "CL.TE": (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", last + hidden),
            "TE.CL": (b"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
                      f"{len(hidden):x}\r\n".encode() + hidden + b"\r\n" + last),
            "two Content-Lengths": (b"Content-Length: 0\r\nContent-Length: 0\r\n", hidden),
            "Content-Length +0": (b"Content-Length: +0\r\n", hidden),
            "1 MiB chunk extensions": (b"Transfer-Encoding: chunked\r\n",
                                       b"1;" + b"e" * (1 << 20) + b"\r\nx\r\n" + last + hidden),
            "10,000 trailers": (b"Transfer-Encoding: chunked\r\n", b"1\r\nx\r\n0\r\n" +
                                b"".join(b"T%d: t\r\n" % i for i in range(10000)) + b"\r\n" + hidden),
        }

        def successes():
            _, data = http_status(server.http_port, "GET", "/v2/models/probe/stats")
            return json.loads(data)["model_stats"][0]["inference_stats"]["success"]["count"]

        before = successes()
        answers = {}
        for name, (fields, body) in cases.items():
            s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
            try:
                s.sendall(b"POST /v2/models/probe/infer HTTP/1.1\r\nHost: s\r\n" + fields + b"\r\n" + body)
            except OSError:
                pass
            data = b""
            try:
                while got := s.recv(65536):
                    data += got
            except OSError:
                pass
            s.close()
            answers[name] = [line.decode()[9:12] for line in data.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
        return {"answers": answers, "hidden_requests_run": successes() - before}
    finally:
        server.stop()


def attack_control_busy(binary, extra, clients=64):
    """64 clients keep the slow model busy; an unload of it, then a load of another model; the
    quick model's latency over HTTP and gRPC meanwhile (a 64 KiB body: decoded on the pool)."""
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient
    models = dict(SLOW_MODELS)
    models["quick"] = {"engine": "touch", "input_size": "64KiB"}
    models["other"] = {"engine": "touch"}
    server = Server(binary, models, ["--model-control-mode", "explicit", "--load-model", "slow", "--load-model",
                                     "quick", *extra])
    try:
        body, header_length = mlp_body(1)
        stop = threading.Event()

        def client():
            while not stop.is_set():
                try:
                    http_status(server.http_port, "POST", "/v2/models/slow/infer", body,
                                {"Inference-Header-Content-Length": str(header_length)}, timeout=600)
                except OSError:
                    time.sleep(0.2)

        threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
        for t in threads:
            t.start()
        time.sleep(3)
        outcomes = {}

        def control(name, call):
            c = httpclient.InferenceServerClient(f"127.0.0.1:{server.http_port}", network_timeout=600)
            start = time.monotonic()
            try:
                getattr(c, call)(name)
                outcomes[f"{call} {name}"] = ("done", round(time.monotonic() - start, 2))
            except Exception as e:
                outcomes[f"{call} {name}"] = (getattr(e, "status", lambda: type(e).__name__)(),
                                              round(time.monotonic() - start, 2))

        calls = [threading.Thread(target=control, args=("slow", "unload_model")),
                 threading.Thread(target=control, args=("other", "load_model"))]
        calls[0].start()
        time.sleep(0.2)
        calls[1].start()
        x = np.ones(16384, dtype=np.float32)
        quick_body, quick_length = binary_request(x)
        grpc_client = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
        inp = grpcclient.InferInput("input", [x.size], "FP32")
        inp.set_data_from_numpy(x)
        http_s, grpc_s, states = [], [], set()
        for _ in range(20):
            start = time.monotonic()
            http_status(server.http_port, "POST", "/v2/models/quick/infer", quick_body,
                        {"Inference-Header-Content-Length": str(quick_length)}, timeout=120)
            http_s.append(time.monotonic() - start)
            start = time.monotonic()
            grpc_client.infer("quick", [inp], client_timeout=120)
            grpc_s.append(time.monotonic() - start)
            _, index = http_status(server.http_port, "POST", "/v2/repository/index")
            states.update(m["state"] for m in json.loads(index) if m["name"] == "slow")
            time.sleep(0.1)
        stop.set()
        for t in calls:
            t.join(600)
        return {"control": outcomes, "slow_states_seen": sorted(states),
                "quick_http_max_ms": round(max(http_s) * 1000, 1), "quick_grpc_max_ms": round(max(grpc_s) * 1000, 1)}
    finally:
        server.stop()


THROUGHPUT_REPEATS = [5]


def attack_throughput(binary, extra, seconds=10.0):
    """The normal load: 8 HTTP clients of touch 4.8 MB (binary) and 8 gRPC clients of mlp rows,
    `seconds` each, repeated; infer/s per repeat."""
    import tritonclient.grpc as grpcclient
    size = 4_800_000
    models = {"touch": {"engine": "touch", "input_size": size, "inflight": 2},
              "mlp": {"engine": "mlp:2x64", "max_batch": 8, "batch_delay_us": 500, "inflight": 2}}
    server = Server(binary, models, extra)
    try:
        x = np.arange(size // 4, dtype=np.float32)
        body, header_length = binary_request(x)
        expected = (x * 2 + 1).tobytes()
        rows = np.ones((2, 64), dtype=np.float16)
        figures = {"http_touch_4.8MB_8_clients": [], "grpc_mlp_8_clients": []}

        def http_client(deadline, counts, i):
            conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=60)
            while time.monotonic() < deadline:
                conn.request("POST", "/v2/models/touch/infer", body=body,
                             headers={"Inference-Header-Content-Length": str(header_length)})
                r = conn.getresponse()
                data = r.read()
                length = int(r.getheader("Inference-Header-Content-Length", "0"))
                assert r.status == 200 and data[length:] == expected, r.status
                counts[i] += 1
            conn.close()

        def grpc_client(deadline, counts, i):
            client = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
            inp = grpcclient.InferInput("input", [2, 64], "FP16")
            inp.set_data_from_numpy(rows)
            while time.monotonic() < deadline:
                client.infer("mlp", [inp])
                counts[i] += 1
            client.close()

        for _ in range(THROUGHPUT_REPEATS[0]):
            for name, body_fn in (("http_touch_4.8MB_8_clients", http_client), ("grpc_mlp_8_clients", grpc_client)):
                counts = [0] * 8
                deadline = time.monotonic() + seconds
                threads = [threading.Thread(target=body_fn, args=(deadline, counts, i)) for i in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                figures[name].append(sum(counts) / seconds)
        return {name: {"median": round(statistics.median(v), 1), "min": round(min(v), 1), "max": round(max(v), 1),
                       "runs": [round(r, 1) for r in v]} for name, v in figures.items()}
    finally:
        server.stop()


ATTACKS = {"unknown-model": attack_unknown_model, "json-bodies": attack_json_bodies,
           "grpc-large": attack_grpc_large, "many-requests": attack_many_requests,
           "slow-model": attack_slow_model, "grpc-threads": attack_grpc_threads, "trickle": attack_trickle,
           "grpc-flood": attack_grpc_flood, "slow-bodies": attack_slow_bodies,
           "slow-bodies-reconnect": attack_slow_bodies_reconnect, "json-answers": attack_json_answers,
           "many-peers": attack_many_peers, "many-networks": attack_many_networks, "framing": attack_framing,
           "control-busy": attack_control_busy, "throughput": attack_throughput}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ferry", required=True, help="the ferry binary")
    parser.add_argument("--extra-args", default="", help="added to every server's command line")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                        help="set in the servers' environment only")
    parser.add_argument("--repeats", type=int, default=5, help="throughput: runs of each load")
    parser.add_argument("attacks", nargs="+", choices=[*ATTACKS, "all"])
    args = parser.parse_args()
    names = [n for n in ATTACKS if n not in ("throughput", "grpc-flood")] if "all" in args.attacks else args.attacks
    extra = shlex.split(args.extra_args)
    SERVER_ENV.update(item.split("=", 1) for item in args.server_env)
    THROUGHPUT_REPEATS[0] = args.repeats
    results = {}
    for name in names:
        start = time.monotonic()
        try:
            results[name] = ATTACKS[name](args.ferry, extra)
        except Exception as e:  # one attack failing (the server died, say) is its result
            results[name] = {"error": f"{type(e).__name__}: {e}"}
        print(f"{name} ({time.monotonic() - start:.0f} s): {json.dumps(results[name])}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
