#!/usr/bin/env python3
"""A text encoder nobody here wrote, as a user brings one: transformers' BERT (random weights, a
small config: 4 layers of 256), exported with torch.export and aoti_compile_and_package alone,
with no I/O description (a bare package: ferry reads its inputs `input_ids` and `attention_mask`,
INT64 [batch, 128], from the package and knows no bound for them).

  text_model.py export --out models
      models/bert.pt2 (bare, dynamic batch 1..16), models/bert.eager.pt (the eager module, for the
      checks), models/bert-ids.npz (4 samples of real-looking token ids and masks, [4, 16, 128]),
      models/bert-bad-ids.npz (one id past the vocabulary, for the device-fault check)
  text_model.py check --http H:P --grpc H:P --model bert --eager models/bert.eager.pt \\
      [--other resnet50 --other-eager models/resnet50.pt2.eager.pt --other-batch 16]
      Answers checked against eager PyTorch over HTTP and gRPC, the ids in the request body, in
      system and in CUDA shared memory; then one id out of range on each of those paths must get
      400 / INVALID_ARGUMENT naming the tensor, the value and the bound, and afterwards every
      model must still answer right and the server be live and ready. Writes --json; exits 1 on
      any failure.
"""
import argparse
import json
import os
import sys

import numpy as np

VOCAB, SEQ, MAX_BATCH = 30522, 128, 16


def export(out):
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                     intermediate_size=1024, return_dict=False)
    model = transformers.BertModel(config).eval().cuda()
    ids = torch.randint(0, VOCAB, (4, SEQ), device="cuda")
    mask = torch.ones_like(ids)
    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    with torch.no_grad():
        program = torch.export.export(model, args=(), kwargs={"input_ids": ids, "attention_mask": mask},
                                      dynamic_shapes={"input_ids": {0: batch}, "attention_mask": {0: batch}})
        torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(out, "bert.pt2"))
    torch.save(model, os.path.join(out, "bert.eager.pt"))
    rng = np.random.default_rng(1)
    samples = rng.integers(0, VOCAB, (4, MAX_BATCH, SEQ), dtype=np.int64)
    masks = np.ones_like(samples)
    masks[:, :, SEQ // 2:] = rng.integers(0, 2, (4, MAX_BATCH, SEQ - SEQ // 2))
    np.savez(os.path.join(out, "bert-ids.npz"), input_ids=samples, attention_mask=masks)
    bad = samples[:1].copy()
    bad[0, 3, 17] = VOCAB + 77
    np.savez(os.path.join(out, "bert-bad-ids.npz"), input_ids=bad, attention_mask=masks[:1])
    print("exported bert.pt2 (bare), bert.eager.pt, bert-ids.npz, bert-bad-ids.npz")


def relative_error(got, want):
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30))


class Checker:
    def __init__(self, args):
        import tritonclient.grpc as grpcclient
        import tritonclient.http as httpclient
        from serve_model_check import CudaRegion, SystemRegion
        import torch
        self.torch, self.http_lib, self.grpc_lib = torch, httpclient, grpcclient
        self.regions = {"system": SystemRegion, "cuda": CudaRegion}
        self.http = httpclient.InferenceServerClient(args.http)
        self.grpc = grpcclient.InferenceServerClient(args.grpc)
        self.args = args
        self.eager = torch.load(args.eager, weights_only=False).cuda().eval()
        self.other = torch.load(args.other_eager, weights_only=False).cuda().eval() if args.other_eager else None
        self.failures, self.rows = [], []

    def client(self, protocol):
        return (self.http_lib, self.http) if protocol == "http" else (self.grpc_lib, self.grpc)

    def infer_text(self, protocol, path, ids, mask, tag):
        """One request to the text model; the ids and mask in the body or a shared-memory region."""
        lib, client = self.client(protocol)
        inputs, regions = [], []
        try:
            for name, array in (("input_ids", ids), ("attention_mask", mask)):
                inp = lib.InferInput(name, list(array.shape), "INT64")
                if path == "body":
                    inp.set_data_from_numpy(array)
                else:
                    region = self.regions[path](client, f"ferry_text_{os.getpid()}_{tag}_{name}", array.nbytes)
                    regions.append(region)
                    region.write(array)
                    inp.set_shared_memory(region.name, array.nbytes)
                inputs.append(inp)
            result = client.infer(self.args.model, inputs)
            return [result.as_numpy(o) for o in ("last_hidden_state", "pooler_output")]
        finally:
            for r in regions:
                r.close()

    def eager_text(self, ids, mask):
        t = self.torch
        with t.no_grad():
            out = self.eager(input_ids=t.from_numpy(ids).cuda(), attention_mask=t.from_numpy(mask).cuda())
        return [o.float().cpu().numpy() for o in out[:2]]

    def check_answers(self, label, seed):
        rng = np.random.default_rng(seed)
        for protocol in ("http", "grpc"):
            for path in ("body", "system", "cuda"):
                for batch in (1, 5, MAX_BATCH):
                    ids = rng.integers(0, VOCAB, (batch, SEQ), dtype=np.int64)
                    mask = np.ones_like(ids)
                    mask[:, SEQ - 10:] = 0
                    tag = f"{label}{protocol}{path}{batch}"
                    try:
                        got = self.infer_text(protocol, path, ids, mask, tag)
                    except Exception as e:
                        if path == "cuda" and "cuda" in f"{type(e).__name__} {e}".lower() and "import" in str(e).lower():
                            self.rows.append({"check": label, "path": path, "skipped": str(e)})
                            continue
                        self.failures.append(f"{label} {protocol} {path} b{batch}: {type(e).__name__}: {e}")
                        continue
                    errors = [relative_error(g, w) for g, w in zip(got, self.eager_text(ids, mask))]
                    row = {"check": label, "protocol": protocol, "path": path, "batch": batch,
                           "relative_l2": [round(e, 7) for e in errors]}
                    self.rows.append(row)
                    if max(errors) > 1e-3:
                        self.failures.append(f"{label} {protocol} {path} b{batch}: relative L2 error {max(errors):.3g}")

    def check_other(self, label):
        if not self.args.other:
            return
        lib, client = self.http_lib, self.http
        meta = client.get_model_metadata(self.args.other)
        inp, out = meta["inputs"][0], meta["outputs"][0]
        types = {"FP16": np.float16, "FP32": np.float32}
        x = np.random.default_rng(7).standard_normal([self.args.other_batch] + inp["shape"][1:]).astype(
            types[inp["datatype"]])
        request = lib.InferInput(inp["name"], list(x.shape), inp["datatype"])
        request.set_data_from_numpy(x, binary_data=True)
        got = client.infer(self.args.other, [request]).as_numpy(out["name"])
        with self.torch.no_grad():
            want = self.other(self.torch.from_numpy(x).cuda()).float().cpu().numpy()
        error = relative_error(got, want)
        self.rows.append({"check": label, "model": self.args.other, "relative_l2": round(error, 6)})
        if error > 1e-2:
            self.failures.append(f"{label}: {self.args.other} relative L2 error {error:.3g}")

    def check_refusals(self):
        from tritonclient.utils import InferenceServerException
        for protocol in ("http", "grpc"):
            for path in ("body", "system", "cuda"):
                ids = np.full((2, SEQ), 101, dtype=np.int64)
                ids[1, 9] = 99999
                mask = np.ones_like(ids)
                try:
                    self.infer_text(protocol, path, ids, mask, f"bad{protocol}{path}")
                    self.failures.append(f"refusal {protocol} {path}: an id of 99999 was answered")
                except InferenceServerException as e:
                    text = str(e)
                    status = str(e.status())
                    right = status in ("400", "StatusCode.INVALID_ARGUMENT") and \
                        f"input 'input_ids': value 99999 at [1, 9] is outside [0, {VOCAB})" in text
                    self.rows.append({"check": "refusal", "protocol": protocol, "path": path, "status": status,
                                      "message": text[:200]})
                    if not right:
                        self.failures.append(f"refusal {protocol} {path}: {status} {text[:200]}")
                except Exception as e:
                    if path == "cuda" and "import" in str(e).lower():
                        self.rows.append({"check": "refusal", "path": path, "skipped": str(e)})
                        continue
                    self.failures.append(f"refusal {protocol} {path}: {type(e).__name__}: {e}")

    def check_health(self, label):
        live, ready = self.http.is_server_live(), self.http.is_server_ready()
        self.rows.append({"check": label, "live": live, "ready": ready})
        if not (live and ready):
            self.failures.append(f"{label}: live {live}, ready {ready}")


def check(args):
    c = Checker(args)
    c.check_answers("answers", 1)
    c.check_other("other model before")
    c.check_refusals()
    c.check_answers("answers after the refusals", 2)
    c.check_other("other model after")
    c.check_health("health after the refusals")
    for row in c.rows:
        print(json.dumps(row))
    summary = {"rows": c.rows, "failures": c.failures}
    print(f"{len(c.rows)} checks, {len(c.failures)} failures")
    for f in c.failures:
        print("  " + f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if c.failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("--http", required=True)
    c.add_argument("--grpc", required=True)
    c.add_argument("--model", default="bert")
    c.add_argument("--eager", required=True)
    c.add_argument("--other")
    c.add_argument("--other-eager")
    c.add_argument("--other-batch", type=int, default=16)
    c.add_argument("--json")
    args = p.parse_args()
    if args.command == "export":
        os.makedirs(args.out, exist_ok=True)
        export(args.out)
        return 0
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
