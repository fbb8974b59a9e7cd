#!/usr/bin/env python3
"""Exports models for ferry's AOTInductor backend (`ferry bench --engine torch:PATH.pt2`).

Runs on the GPU host (PyTorch with CUDA). Weights are random (nothing can be downloaded there;
random weights time the same), fp16, with a dynamic batch (and sequence length for the encoder).
For each model it writes:
  NAME.pt2           the AOTInductor package; its metadata key "ferry.io" holds the I/O description
  NAME.pt2.io.json   the same ferry.io/1 description as a sidecar, readable without libtorch
  NAME.pt2.check/    one input and PyTorch eager's output for it (raw little-endian files and
                     manifest.json), which tests/gpu/test_torch_backend.cpp compares with what
                     ferry's C++ backend computes (relative L2 error below 1e-2).
  NAME.pt2.eager.pt  with --save-eager: the eager module itself (torch.save), so a client can
                     check every answer a server gives (scripts/serve_model_check.py --eager).

  python3 scripts/export_model.py --out models [--save-eager] resnet50 encoder-s128 encoder-s384
"""
import argparse
import functools
import json
import math
import pathlib
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE_NAMES = {torch.float16: "float16", torch.float32: "float32", torch.int64: "int64", torch.bool: "bool"}


class Encoder(nn.Module):
    """A BERT-base-sized transformer encoder: 12 layers, width 768, 12 heads, MLP 3072.

    Written out (pre-norm blocks, scaled_dot_product_attention) rather than nn.TransformerEncoder,
    whose inference fast path does not export."""

    def __init__(self, vocab=30522, width=768, heads=12, layers=12, mlp=3072, max_seq=512):
        super().__init__()
        self.heads = heads
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(max_seq, width)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "norm1": nn.LayerNorm(width), "qkv": nn.Linear(width, 3 * width), "proj": nn.Linear(width, width),
                "norm2": nn.LayerNorm(width), "up": nn.Linear(width, mlp), "down": nn.Linear(mlp, width)}))
        self.norm = nn.LayerNorm(width)

    def forward(self, tokens):
        batch, seq = tokens.shape
        positions = torch.arange(seq, device=tokens.device)
        x = self.tokens(tokens) + self.positions(positions)[None]
        for b in self.blocks:
            q, k, v = b["qkv"](b["norm1"](x)).chunk(3, dim=-1)
            q, k, v = (t.unflatten(-1, (self.heads, -1)).transpose(1, 2) for t in (q, k, v))
            attended = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(-2)
            x = x + b["proj"](attended)
            x = x + b["down"](F.gelu(b["up"](b["norm2"](x))))
        return self.norm(x)


def resnet50(device):
    import torchvision
    model = torchvision.models.resnet50(weights=None).to(device)
    # Random weights with BatchNorm's running statistics left at 0/1 let activations grow block by
    # block; a few training-mode passes give the statistics a real network has.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 224, 224, device=device))
    # Random residual branches also compound fp16 rounding block after block (measured: 2.6%
    # relative L2 error against fp32, where trained ResNets stay near 0.1%); damping each branch's
    # last BatchNorm, as Fixup/SkipInit do, gives the stability of a trained network. Every
    # convolution still runs and still matters, so timing is unchanged.
    for block in model.modules():
        if isinstance(block, torchvision.models.resnet.Bottleneck):
            block.bn3.weight.data.mul_(0.2)
    model = model.eval().half()
    batch = torch.export.Dim("batch", min=1, max=64)
    example = torch.randn(4, 3, 224, 224, device=device, dtype=torch.float16)
    io = {"symbols": {"batch": {"min": 1, "max": 64}},
          "inputs": [{"name": "images", "dtype": "float16", "shape": ["batch", 3, 224, 224]}],
          "outputs": [{"name": "logits", "dtype": "float16", "shape": ["batch", 1000]}]}
    return model, (example,), {"x": {0: batch}}, io


def encoder(device, seq):
    # One package per sequence length, dynamic batch: with a symbolic sequence length as well,
    # AOTInductor took over 7 minutes on the GPU host; a fixed one compiles like ResNet-50.
    model = Encoder().to(device).eval().half()
    batch = torch.export.Dim("batch", min=1, max=32)
    example = torch.randint(0, 30522, (2, seq), device=device)
    io = {"symbols": {"batch": {"min": 1, "max": 32}},
          "inputs": [{"name": "tokens", "dtype": "int64", "shape": ["batch", seq], "index_bound": 30522}],
          "outputs": [{"name": "hidden", "dtype": "float16", "shape": ["batch", seq, 768]}]}
    return model, (example,), {"tokens": {0: batch}}, io


MODELS = {"resnet50": resnet50,
          "encoder-s128": functools.partial(encoder, seq=128),
          "encoder-s384": functools.partial(encoder, seq=384)}


def write_check(folder, io, inputs, outputs):
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"inputs": [], "outputs": []}
    for role, specs, tensors in (("inputs", io["inputs"], inputs), ("outputs", io["outputs"], outputs)):
        for spec, t in zip(specs, tensors):
            file = f"{spec['name']}.bin"
            t.detach().contiguous().cpu().numpy().tofile(folder / file)
            manifest[role].append({"name": spec["name"], "dtype": DTYPE_NAMES[t.dtype],
                                   "shape": list(t.shape), "file": file})
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def export(name, out, device, save_eager=False):
    torch.manual_seed(0)
    model, example, dynamic, io = MODELS[name](device)
    arch = "sm_{}{}".format(*torch.cuda.get_device_capability(device))
    description = {"format": "ferry.io/1", "name": name,
                   "exported_with": {"torch": torch.__version__, "cuda_arch": arch}, **io}
    text = json.dumps(description)
    start = time.time()
    with torch.no_grad():
        program = torch.export.export(model, example, dynamic_shapes=dynamic)
        package = out / f"{name}.pt2"
        torch._inductor.aoti_compile_and_package(
            program, package_path=str(package),
            inductor_configs={"aot_inductor.metadata": {"ferry.io": text}})
        reference = model(*example)  # eager PyTorch, fp16, the same weights and input
    (out / f"{name}.pt2.io.json").write_text(json.dumps(description, indent=2) + "\n")
    outputs = reference if isinstance(reference, (tuple, list)) else (reference,)
    if not all(torch.isfinite(o.float()).all() for o in outputs):
        raise SystemExit(f"{name}: eager output has inf/NaN; the check data would be useless")
    write_check(out / f"{name}.pt2.check", io, example, outputs)
    if save_eager:
        torch.save(model, out / f"{name}.pt2.eager.pt")
    size = package.stat().st_size / 1e6
    print(f"{name}: {package} ({size:.0f} MB, {arch}, torch {torch.__version__}) in {time.time() - start:.0f} s; "
          f"reference output norm {math.sqrt(sum(float(o.float().pow(2).sum()) for o in outputs)):.3g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", choices=sorted(MODELS))
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("models"))
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--save-eager", action="store_true", help="also save the eager module (NAME.pt2.eager.pt)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("export_model.py: no CUDA device; AOTInductor packages for ferry are built on the GPU host")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.models:
        export(name, args.out, torch.device("cuda", args.device), args.save_eager)


if __name__ == "__main__":
    main()
