#!/usr/bin/env python3
"""One client's request rate through `ferry serve` with inputs and outputs in shared memory, over
raw HTTP (a kept-alive http.client connection, no client library in the timed loop), and what the
server says each request cost it (compute_input, compute_infer and compute_output from the model's
statistics, per request over the timed requests).

  serve_shm_rate.py --url 127.0.0.1:PORT --model touch --bytes 4800000 --shm system|cuda
                    [--seconds 5] [--warmup 50] [--json FILE]

The model takes one FP32 input "input" and returns one FP32 output "output" of the same size
(touch). System regions are POSIX shared-memory objects made here; CUDA regions need
tritonclient.utils.cuda_shared_memory (cuda-python), and are skipped, saying why, without it.
Registration uses tritonclient.http; only the inference requests are timed."""
import argparse
import http.client
import json
import mmap
import os
import sys
import struct
import time

import tritonclient.http as httpclient


ONE = struct.pack("<f", 1.0)


def stats(conn, model):
    conn.request("GET", f"/v2/models/{model}/stats")
    response = conn.getresponse()
    body = json.loads(response.read())
    s = body["model_stats"][0]["inference_stats"]
    return {k: (s[k]["count"], s[k]["ns"]) for k in ("success", "compute_input", "compute_infer", "compute_output")}


def system_regions(client, nbytes):
    made = []
    for name in ("in", "out"):
        key = f"/ferry_rate_{os.getpid()}_{name}"
        fd = os.open(f"/dev/shm{key}", os.O_CREAT | os.O_RDWR, 0o600)
        os.ftruncate(fd, nbytes)
        view = mmap.mmap(fd, nbytes)
        os.close(fd)
        client.register_system_shared_memory(name, key, nbytes)
        made.append((key, view))
    made[0][1][:] = bytes(nbytes)  # an input of zeros: touch answers 1.0 everywhere

    def cleanup():
        # The output landed where it was asked: its first and last element are touch's answer.
        out = made[1][1]
        if out[:4] != ONE or out[nbytes - 4:nbytes] != ONE:
            print(f"system shared memory: the output region does not hold touch's answer: {out[:4]!r}")
        client.unregister_system_shared_memory()
        for key, view in made:
            view.close()
            os.unlink(f"/dev/shm{key}")
    return cleanup


def cuda_regions(client, nbytes):
    import tritonclient.utils.cuda_shared_memory as cudashm  # needs cuda-python
    handles = []
    for name in ("in", "out"):
        handle = cudashm.create_shared_memory_region(name, nbytes, 0)
        client.register_cuda_shared_memory(name, cudashm.get_raw_handle(handle), 0, nbytes)
        handles.append(handle)

    def cleanup():
        client.unregister_cuda_shared_memory()
        for handle in handles:
            cudashm.destroy_shared_memory_region(handle)
    return cleanup


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--model", default="touch")
    p.add_argument("--bytes", type=int, default=4800000)
    p.add_argument("--shm", choices=("system", "cuda"), required=True)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--json")
    a = p.parse_args()

    client = httpclient.InferenceServerClient(a.url)
    try:
        cleanup = system_regions(client, a.bytes) if a.shm == "system" else cuda_regions(client, a.bytes)
    except (ImportError, RuntimeError) as e:  # tritonclient raises RuntimeError without cuda-python
        print(f"{a.shm} shared memory: skipped, {e}")
        return 0
    elements = a.bytes // 4
    body = json.dumps({
        "inputs": [{"name": "input", "shape": [elements], "datatype": "FP32",
                    "parameters": {"shared_memory_region": "in", "shared_memory_byte_size": a.bytes}}],
        "outputs": [{"name": "output",
                     "parameters": {"shared_memory_region": "out", "shared_memory_byte_size": a.bytes}}],
    }).encode()
    host, port = a.url.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port))
    headers = {"Content-Type": "application/json"}

    def infer():
        conn.request("POST", f"/v2/models/{a.model}/infer", body, headers)
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise SystemExit(f"infer: HTTP {response.status}: {data[:300]!r}")

    try:
        for _ in range(a.warmup):
            infer()
        before = stats(conn, a.model)
        n = 0
        start = time.perf_counter()
        while time.perf_counter() - start < a.seconds:
            infer()
            n += 1
        elapsed = time.perf_counter() - start
        after = stats(conn, a.model)
    finally:
        cleanup()
    served = after["success"][0] - before["success"][0]
    result = {"shm": a.shm, "bytes": a.bytes, "requests": n, "seconds": round(elapsed, 3),
              "req_per_s": round(n / elapsed, 1)}
    for k in ("compute_input", "compute_infer", "compute_output"):
        count = after[k][0] - before[k][0]
        result[f"{k}_us"] = round((after[k][1] - before[k][1]) / max(count, 1) / 1000, 1)
    result["served"] = served
    print(json.dumps(result))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
