#!/usr/bin/env python3
"""Drives a model served by `ferry serve` from several clients at once, over HTTP and gRPC, with
tensors in the request body, in system shared memory and in CUDA shared memory, and checks every
answer against a reference computed here afterwards (so the reference never shares the timed
window with the server):
  --eager PATH        a PyTorch module saved by scripts/export_model.py --save-eager (run in eager
                      mode on the GPU, the same weights as the served package); answers must be
                      within a relative L2 error of --tolerance (default 1e-2, fp16)
  --affine S,B        y = S * x + B exactly (the example backend; lets this script be tried on
                      a machine without a GPU)
For each protocol, path and client count it reports requests, req/s, the client's p50/p99 latency
and the server's compute_input / compute_infer / compute_output per request (the model's
statistics before and after), as one JSON line each and in --json.

  serve_model_check.py --http 127.0.0.1:8000 --grpc 127.0.0.1:8001 --model resnet50 --batch 16 \
      --eager models/resnet50.pt2.eager.pt [--paths body,system,cuda] [--clients 1,4,16] \
      [--requests 8] [--json FILE]

Exits 1 when any answer is wrong or any request failed; a path that cannot run here (CUDA shared
memory without cuda-python) is skipped, saying why."""
import argparse
import json
import mmap
import os
import sys
import threading
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

NUMPY_TYPES = {"FP16": np.float16, "FP32": np.float32, "INT64": np.int64, "INT32": np.int32, "UINT8": np.uint8}


class SystemRegion:
    """A POSIX shared-memory object mapped here and registered with the server under `name`."""

    def __init__(self, client, name, nbytes):
        self.key = f"/{name}"
        fd = os.open(f"/dev/shm{self.key}", os.O_CREAT | os.O_RDWR, 0o600)
        os.ftruncate(fd, nbytes)
        self.view = mmap.mmap(fd, nbytes)
        os.close(fd)
        self.client, self.name, self.nbytes = client, name, nbytes
        client.register_system_shared_memory(name, self.key, nbytes)

    def write(self, array):
        self.view[:array.nbytes] = array.tobytes()

    def read(self, dtype, shape):
        return np.frombuffer(self.view, dtype=dtype, count=int(np.prod(shape))).reshape(shape).copy()

    def close(self):
        self.client.unregister_system_shared_memory(self.name)
        self.view.close()
        os.unlink(f"/dev/shm{self.key}")


class CudaRegion:
    """Device memory on GPU 0 shared with the server by a CUDA IPC handle (needs cuda-python)."""

    def __init__(self, client, name, nbytes):
        import tritonclient.utils.cuda_shared_memory as cudashm
        self.cudashm = cudashm
        self.handle = cudashm.create_shared_memory_region(name, nbytes, 0)
        self.client, self.name = client, name
        client.register_cuda_shared_memory(name, cudashm.get_raw_handle(self.handle), 0, nbytes)

    def write(self, array):
        self.cudashm.set_shared_memory_region(self.handle, [array])

    def read(self, dtype, shape):
        return self.cudashm.get_contents_as_numpy(self.handle, dtype, shape).copy()

    def close(self):
        self.client.unregister_cuda_shared_memory(self.name)
        self.cudashm.destroy_shared_memory_region(self.handle)


def statistics(http, model):
    s = http.get_inference_statistics(model)["model_stats"][0]["inference_stats"]
    return {k: (int(s[k]["count"]), int(s[k]["ns"])) for k in ("success", "compute_input", "compute_infer",
                                                             "compute_output")}


def run_client(protocol, path, url, model, meta, batch, requests, seed, answers, latencies, tag):
    """One client: `requests` requests, each with a fresh random input; keeps (input, output)."""
    lib = httpclient if protocol == "http" else grpcclient
    client = lib.InferenceServerClient(url)
    inp, out = meta["input"], meta["output"]
    in_shape, out_shape = [batch] + inp["shape"][1:], [batch] + out["shape"][1:]
    in_type, out_type = NUMPY_TYPES[inp["datatype"]], NUMPY_TYPES[out["datatype"]]
    in_bytes = int(np.prod(in_shape)) * np.dtype(in_type).itemsize
    out_bytes = int(np.prod(out_shape)) * np.dtype(out_type).itemsize
    regions = []
    if path != "body":
        region_type = SystemRegion if path == "system" else CudaRegion
        regions = [region_type(client, f"ferry_check_{os.getpid()}_{tag}_in", in_bytes),
                   region_type(client, f"ferry_check_{os.getpid()}_{tag}_out", out_bytes)]
    rng = np.random.default_rng(seed)
    try:
        for _ in range(requests):
            x = rng.standard_normal(in_shape).astype(in_type)
            request = lib.InferInput(inp["name"], in_shape, inp["datatype"])
            wanted = lib.InferRequestedOutput(out["name"], **({"binary_data": True} if protocol == "http" else {}))
            if regions:
                regions[0].write(x)
                request.set_shared_memory(regions[0].name, in_bytes)
                wanted.set_shared_memory(regions[1].name, out_bytes)
            elif protocol == "http":
                request.set_data_from_numpy(x, binary_data=True)
            else:
                request.set_data_from_numpy(x)
            start = time.perf_counter()
            result = client.infer(model, [request], outputs=[wanted])
            latencies.append(time.perf_counter() - start)
            y = regions[1].read(out_type, out_shape) if regions else result.as_numpy(out["name"])
            answers.append((x, y))
    finally:
        for r in regions:
            r.close()


def reference_function(args):
    if args.affine:
        scale, bias = (np.float32(v) for v in args.affine.split(","))
        return lambda xs: [(x.astype(np.float32) * scale + bias).astype(np.float32) for x in xs], "exact"
    import torch
    module = torch.load(args.eager, weights_only=False).cuda().eval()

    def run(xs):
        with torch.no_grad():
            return [module(torch.from_numpy(x).cuda()).cpu().numpy() for x in xs]
    return run, f"relative L2 error below {args.tolerance:g}"


def wrong(got, want, rule, tolerance=1e-2):
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if rule == "exact":
        return None if np.array_equal(got, want) else "values differ"
    g, w = got.astype(np.float64), want.astype(np.float64)
    error = np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30)
    return None if error < tolerance else f"relative L2 error {error:.3g}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--http", required=True)
    p.add_argument("--grpc", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--eager")
    p.add_argument("--affine")
    p.add_argument("--tolerance", type=float, default=1e-2,
                   help="with --eager: the largest relative L2 error an answer may have (fp16 kernels that "
                        "AOTInductor compiled differ from eager ones by about 1e-3 for ResNet-50, 1e-2 for RegNetY)")
    p.add_argument("--protocols", default="http,grpc")
    p.add_argument("--paths", default="body,system,cuda")
    p.add_argument("--clients", default="1,4,16")
    p.add_argument("--requests", type=int, default=8, help="per client")
    p.add_argument("--json")
    args = p.parse_args()
    if bool(args.eager) == bool(args.affine):
        p.error("give one reference: --eager PATH or --affine S,B")

    http = httpclient.InferenceServerClient(args.http)
    metadata = http.get_model_metadata(args.model)
    meta = {"input": metadata["inputs"][0], "output": metadata["outputs"][0]}
    reference, rule = reference_function(args)
    rows, failures, checked = [], [], 0
    for protocol in args.protocols.split(","):
        url = args.http if protocol == "http" else args.grpc
        for path in args.paths.split(","):
            for clients in (int(c) for c in args.clients.split(",")):
                answers, latencies, errors = [], [], []

                def client(i):
                    try:
                        run_client(protocol, path, url, args.model, meta, args.batch, args.requests,
                                   seed=1000 * clients + i, answers=answers, latencies=latencies,
                                   tag=f"{protocol}{path}{clients}_{i}")
                    except Exception as e:  # reported below with the path that failed
                        errors.append(f"{type(e).__name__}: {e}")

                before = statistics(http, args.model)
                start = time.perf_counter()
                threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                elapsed = time.perf_counter() - start
                after = statistics(http, args.model)
                label = f"{protocol} {path} c={clients}"
                if errors and path == "cuda" and all("cuda-python" in e or "ImportError" in e for e in errors):
                    print(json.dumps({"path": label, "skipped": errors[0]}))
                    continue
                failures += [f"{label}: {e}" for e in errors]
                wants = reference([x for x, _ in answers])
                bad = [w for w in (wrong(y, want, rule, args.tolerance) for (_, y), want in zip(answers, wants)) if w]
                checked += len(answers)
                failures += [f"{label}: {w}" for w in bad]
                served = after["success"][0] - before["success"][0]
                row = {"protocol": protocol, "path": path, "clients": clients, "requests": len(answers),
                       "wrong": len(bad), "req_per_s": round(len(answers) / elapsed, 1),
                       "p50_ms": round(1e3 * float(np.percentile(latencies, 50)), 2) if latencies else None,
                       "p99_ms": round(1e3 * float(np.percentile(latencies, 99)), 2) if latencies else None}
                for k in ("compute_input", "compute_infer", "compute_output"):
                    count = after[k][0] - before[k][0]
                    row[f"{k}_us"] = round((after[k][1] - before[k][1]) / max(count, 1) / 1e3, 1)
                row["served"] = served
                rows.append(row)
                print(json.dumps(row), flush=True)
    summary = {"model": args.model, "batch": args.batch, "checked": checked, "rule": rule, "failures": failures[:20],
               "failed": len(failures), "rows": rows}
    print(f"{checked} answers checked ({rule}), {len(failures)} failures")
    for f in failures[:20]:
        print("  " + f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
