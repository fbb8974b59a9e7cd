#!/usr/bin/env python3
"""What large gRPC inference requests cost `ferry serve`: COUNT concurrent ModelInfer calls of MIB
MiB each (one FP32 input of a valid shape), each on its own connection, against a server of its
own; reports the server's peak resident memory over its life (VmHWM), its memory at rest before,
how the calls ended (from /metrics) and whether the server still answers afterwards.

  scripts/grpc_large_requests.py --ferry build/bin/ferry [--count 8] [--mib 1000] [--model touch|reduce]
                                 [--extra-args "--max-inflight-bytes 6GiB"] [--prlimit-as BYTES]

touch returns an output as large as its input, reduce a few bytes. The calls are sent from one
buffer (grpc_raw_call.py), so this client needs MIB MiB however many calls it makes. With
--prlimit-as the server runs under that address-space limit (prlimit --as). Run with
build-tools/venv/bin/python."""
import argparse
import json
import os
import re
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grpc_raw_call import RawGrpcCall  # noqa: E402
import serve_attacks  # noqa: E402


def proc_status_mb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024)
    return None


def varint(n):
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def infer_message(model, elements):
    """A ModelInferRequest naming `model`, with one FP32 input "input" of `elements` zeros in
    raw_input_contents; the bytes of the zeros are not materialised twice (one bytearray)."""
    shape = varint(elements)
    tensor = b"\x0a\x05input" + b"\x12\x04FP32" + b"\x1a" + varint(len(shape)) + shape
    head = b"\x0a" + varint(len(model)) + model.encode() + b"\x2a" + varint(len(tensor)) + tensor
    head += b"\x3a" + varint(elements * 4)
    message = bytearray(len(head) + elements * 4)
    message[:len(head)] = head
    return message


def outcomes(http_port, model):
    text = urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=30).read().decode()
    found = {}
    for line in text.splitlines():
        if m := re.match(r'nv_inference_request_success\{model="' + model + r'".*\} (\S+)', line):
            found["OK"] = int(float(m.group(1)))
        elif m := re.match(r'nv_inference_request_failure\{model="' + model + r'".*reason="(\w+)"\} (\S+)', line):
            if float(m.group(2)):
                found[m.group(1)] = int(float(m.group(2)))
        elif m := re.match(r'ferry_allocation_failures\{(.*)\} (\S+)', line):
            if float(m.group(2)):
                found["allocation failures " + m.group(1)] = int(float(m.group(2)))
    return found


def call_summary(results):
    """How the calls ended, as the client saw them: answered with data, ended without data (a
    refusal in the trailers), reset by the server (RST_STREAM code) or the connection lost."""
    summary = {}
    for r in results:
        if r is None:
            key = "no result"
        elif r["answer_bytes"] > 0:
            key = "answered with data"
        elif r["ended"]:
            key = "ended without data"
        elif r["reset"] is not None:
            key = f"reset (code {r['reset']})"
        else:
            key = f"connection lost ({r['goaway']})"
        summary[key] = summary.get(key, 0) + 1
    return summary


def still_serving(http_port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/v2/health/live", timeout=30) as r:
            return r.status == 200
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ferry", required=True)
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--mib", type=int, default=1000)
    parser.add_argument("--model", choices=["touch", "reduce"], default="touch")
    parser.add_argument("--extra-args", default="")
    parser.add_argument("--prlimit-as", type=int, default=0)
    args = parser.parse_args()
    elements = args.mib * 2**20 // 4
    binary = os.path.abspath(args.ferry)
    extra = args.extra_args.split()
    if args.prlimit_as:
        # prlimit runs the binary, which takes `serve` from serve_attacks.Server's command line.
        wrapper = f"/tmp/ferry_prlimit_{os.getpid()}.sh"
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec prlimit --as={args.prlimit_as} {binary} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        binary = wrapper
    models = {args.model: {"engine": args.model, "input_size": f"{args.mib}MiB"}}
    server = serve_attacks.Server(binary, models, extra)
    try:
        pid = server.pid
        if args.prlimit_as:  # the wrapper exec'd prlimit, which exec'd ferry: the same pid
            assert open(f"/proc/{pid}/comm").read().strip() == "ferry"
        rest = proc_status_mb(pid, "VmRSS")
        message = infer_message(args.model, elements)
        results = [None] * args.count

        def one(i):
            results[i] = RawGrpcCall(server.grpc_port, "/inference.GRPCInferenceService/ModelInfer", message).run()

        start = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(args.count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - start
        if server.process.poll() is None:
            try:  # read now: the server may still die of what the calls did
                found = outcomes(server.http_port, args.model)
            except OSError as e:
                found = {"metrics unreadable": str(e)}
        alive = server.process.poll() is None
        report = {"count": args.count, "mib": args.mib, "model": args.model, "extra_args": args.extra_args,
                  "prlimit_as": args.prlimit_as, "seconds": round(took, 1), "server_alive": alive,
                  "calls": call_summary(results),
                  "rest_mb": rest}
        if alive:
            report["vmhwm_mb"] = proc_status_mb(pid, "VmHWM")
            report["vmpeak_mb"] = proc_status_mb(pid, "VmPeak")
            report["outcomes"] = found
            report["health_after"] = still_serving(server.http_port)
        else:
            report["exit"] = server.process.returncode
            report["log_tail"] = server.log[-5:]
        print(json.dumps(report))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
