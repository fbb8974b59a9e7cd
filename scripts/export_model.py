#!/usr/bin/env python3
"""Exports PyTorch models for ferry's AOTInductor backend (`ferry bench --engine torch:PATH.pt2`,
`"engine": "torch:PATH.pt2"` in a served model's config.json).

Your own model: a Python file with a function that returns what to export,

  def build():
      model = MyModel().eval()
      batch = torch.export.Dim("batch", min=1, max=64)
      return {"module": model, "example_inputs": (torch.randn(4, 64),),
              "dynamic_shapes": {"features": {0: batch}},   # by forward()'s argument names
              "output_names": ["scores"],                      # optional; input names are forward()'s
              "index_bounds": {}}                               # optional: integer inputs that index

  python3 scripts/export_model.py --module my_model.py:build --name mine --out models

The I/O description ferry reads (ferry.io/1, docs/USAGE.md) is derived from the exported program:
input names, dtypes and shapes, each dynamic dim named after its torch.export.Dim with its range,
output shapes in terms of those dims. An output dim that is an expression of them (2 * batch) has
no ferry.io/1 form and is refused, saying which.

Built-in models (random weights: nothing can be downloaded on the GPU host, and random weights
time the same), fp16, with a dynamic batch:
  python3 scripts/export_model.py --out models resnet50 mobilenet-v3-small encoder-s128 encoder-s384

For each model it writes:
  NAME.pt2           the AOTInductor package; its metadata key "ferry.io" holds the I/O description
  NAME.pt2.io.json   the same ferry.io/1 description as a sidecar, readable without libtorch
  NAME.pt2.check/    one input and PyTorch eager's output for it (raw little-endian files and
                     manifest.json), which tests/engines/gpu/test_torch_backend.cpp compares with what
                     ferry's C++ backend computes (relative L2 error below 1e-2).
  NAME.pt2.eager.pt  with --save-eager: the eager module itself (torch.save), so a client can
                     check every answer a server gives (scripts/serve_model_check.py --eager).
  NAME.bare.pt2      with --bare: the same model packaged as plain PyTorch packages it, with no
                     description at all (no metadata, no sidecar), as a package made elsewhere
                     comes; ferry reads its I/O from the package itself (docs/USAGE.md).

Packages are compiled for the GPU they are exported on (--device, default cuda:0) and run where
its architecture and PyTorch version match. --device cpu exports without a GPU, for checking a
model's export and description; ferry runs CUDA packages only.
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

DTYPE_NAMES = {torch.float16: "float16", torch.float32: "float32", torch.bfloat16: "bfloat16", torch.int8: "int8",
               torch.uint8: "uint8", torch.int32: "int32", torch.int64: "int64", torch.bool: "bool"}


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


def mobilenet_v3_small(device):
    """torchvision's MobileNetV3-small, fp16: a network whose kernels are short, so the host's
    launches bound its rate (what CUDA graphs are for)."""
    import torchvision
    model = torchvision.models.mobilenet_v3_small(weights=None).to(device)
    # As for ResNet-50: running statistics a real network has, from a few training-mode passes.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 224, 224, device=device))
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
          "mobilenet-v3-small": mobilenet_v3_small,
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


def dim_names(dynamic_shapes, parameters):
    """{(input index, axis): torch.export.Dim} from dynamic_shapes given by argument name or by position."""
    if not dynamic_shapes:
        return {}
    by_position = dynamic_shapes if isinstance(dynamic_shapes, (tuple, list)) else \
        [dynamic_shapes.get(p) for p in parameters]
    named = {}
    for index, axes in enumerate(by_position):
        if not axes:
            continue
        items = axes.items() if isinstance(axes, dict) else enumerate(axes)
        for axis, dim in items:
            if dim is not None:
                named[(index, axis)] = dim
    return named


def describe_io(program, dynamic_shapes=None, input_names=None, output_names=None, index_bounds=None):
    """The ferry.io/1 symbols, inputs and outputs of an exported program."""
    from torch.export.graph_signature import InputKind
    user_inputs = [spec.arg.name for spec in program.graph_signature.input_specs if spec.kind == InputKind.USER_INPUT]
    names = list(input_names or user_inputs)
    if len(names) != len(user_inputs):
        raise SystemExit(f"input_names lists {len(names)} names and the model takes {len(user_inputs)} inputs")
    nodes = {n.name: n for n in program.graph.nodes}
    dims = dim_names(dynamic_shapes, user_inputs)
    symbols, symbol_names = {}, {}

    def dim_entry(value, where):
        if isinstance(value, int):
            return value
        expr = value.node.expr
        if expr.is_number:
            return int(expr)
        if str(expr) in symbol_names:
            return symbol_names[str(expr)]
        raise SystemExit(f"{where} is {expr}, an expression of the dynamic dims: ferry.io/1 describes a dim as "
                         "one named dynamic dim or a number (make it an input's dim, or give it its own Dim)")

    inputs = []
    for index, (placeholder, name) in enumerate(zip(user_inputs, names)):
        value = nodes[placeholder].meta["val"]
        for axis, extent in enumerate(value.shape):
            if isinstance(extent, int) or str(extent.node.expr) in symbol_names:
                continue
            expr = extent.node.expr
            dim = dims.get((index, axis))
            symbol = dim.__name__ if dim is not None else f"{name}_dim{axis}"
            bounds = program.range_constraints.get(expr)
            low = int(bounds.lower) if bounds is not None else 1
            try:
                high = int(bounds.upper)
            except (TypeError, ValueError, OverflowError):
                raise SystemExit(f"input '{name}' dim {axis} ({symbol}) has no upper bound: give its "
                                 "torch.export.Dim a max") from None
            symbol_names[str(expr)] = symbol
            symbols[symbol] = {"min": max(low, 1), "max": high}
        entry = {"name": name, "dtype": DTYPE_NAMES[value.dtype],
                 "shape": [dim_entry(d, f"input '{name}' dim {a}") for a, d in enumerate(value.shape)]}
        if index_bounds and name in index_bounds:
            entry["index_bound"] = int(index_bounds[name])
        inputs.append(entry)

    results = [n for n in program.graph.nodes if n.op == "output"][0].args[0]
    results = results if isinstance(results, (tuple, list)) else (results,)
    outputs = []
    for index, node in enumerate(results):
        value = node.meta["val"]
        name = output_names[index] if output_names and index < len(output_names) else f"output{index}"
        outputs.append({"name": name, "dtype": DTYPE_NAMES[value.dtype],
                        "shape": [dim_entry(d, f"output '{name}' dim {a}") for a, d in enumerate(value.shape)]})
    if output_names and len(output_names) != len(outputs):
        raise SystemExit(f"output_names lists {len(output_names)} names and the model returns {len(outputs)} outputs")
    return {"symbols": symbols, "inputs": inputs, "outputs": outputs}


def export(name, out, device, model, example, dynamic, io=None, save_eager=False, names=None, bare=False):
    """Exports `model` on `device` as out/NAME.pt2 with its description (derived when `io` is None),
    its sidecar and its check data; with `bare`, also as out/NAME.bare.pt2 without any description."""
    model = model.to(device)
    example = tuple(t.to(device) for t in example)
    arch = "sm_{}{}".format(*torch.cuda.get_device_capability(device)) if device.type == "cuda" else "cpu"
    start = time.time()
    with torch.no_grad():
        program = torch.export.export(model, example, dynamic_shapes=dynamic)
        if io is None:
            io = describe_io(program, dynamic, **(names or {}))
        description = {"format": "ferry.io/1", "name": name,
                       "exported_with": {"torch": torch.__version__, "cuda_arch": arch}, **io}
        text = json.dumps(description)
        package = out / f"{name}.pt2"
        torch._inductor.aoti_compile_and_package(
            program, package_path=str(package),
            inductor_configs={"aot_inductor.metadata": {"ferry.io": text}})
        if bare:
            torch._inductor.aoti_compile_and_package(program, package_path=str(out / f"{name}.bare.pt2"))
        reference = model(*example)  # eager PyTorch, the same weights and input
    (out / f"{name}.pt2.io.json").write_text(json.dumps(description, indent=2) + "\n")
    outputs = reference if isinstance(reference, (tuple, list)) else (reference,)
    if not all(torch.isfinite(o.float()).all() for o in outputs):
        raise SystemExit(f"{name}: eager output has inf/NaN; the check data would be useless")
    write_check(out / f"{name}.pt2.check", io, example, outputs)
    if save_eager:
        torch.save(model, out / f"{name}.pt2.eager.pt")
    size = package.stat().st_size / 1e6
    print(f"{name}: {package} ({size:.1f} MB, {arch}, torch {torch.__version__}) in {time.time() - start:.0f} s; "
          f"reference output norm {math.sqrt(sum(float(o.float().pow(2).sum()) for o in outputs)):.3g}")
    return description


def load_build(spec):
    """FILE.py:FUNCTION -> what FUNCTION returns: a dict with module and example_inputs, and
    optionally dynamic_shapes, input_names, output_names, index_bounds."""
    import importlib.util
    import inspect
    file, _, function = spec.rpartition(":")
    if not file or not function:
        raise SystemExit(f"--module '{spec}': expected FILE.py:FUNCTION")
    loader_spec = importlib.util.spec_from_file_location("ferry_user_model", file)
    if loader_spec is None:
        raise SystemExit(f"--module '{spec}': cannot import {file}")
    module = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(module)
    build = getattr(module, function, None)
    if build is None or not inspect.isfunction(build):
        raise SystemExit(f"--module '{spec}': {file} has no function {function}")
    made = build()
    missing = {"module", "example_inputs"} - set(made)
    if missing:
        raise SystemExit(f"--module '{spec}': {function}() must return a dict with {sorted(missing)}")
    unknown = set(made) - {"module", "example_inputs", "dynamic_shapes", "input_names", "output_names",
                           "index_bounds"}
    if unknown:
        raise SystemExit(f"--module '{spec}': {function}() returned unknown keys {sorted(unknown)}")
    return made


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help=f"built-in models: {', '.join(sorted(MODELS))}")
    parser.add_argument("--module", help="your own model: FILE.py:FUNCTION (see above)")
    parser.add_argument("--name", help="with --module: the package's name (default: the file's)")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("models"))
    parser.add_argument("--device", default="cuda:0", help="cuda:N (default cuda:0), or cpu to check an export")
    parser.add_argument("--save-eager", action="store_true", help="also save the eager module (NAME.pt2.eager.pt)")
    parser.add_argument("--bare", action="store_true",
                        help="also write NAME.bare.pt2, the package with no I/O description (as plain PyTorch makes it)")
    args = parser.parse_args()
    if not args.models and not args.module:
        parser.error("name built-in models or give --module FILE.py:FUNCTION")
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"no built-in model {', '.join(unknown)} (built-in: {', '.join(sorted(MODELS))}); "
                     "your own model comes with --module FILE.py:FUNCTION")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("export_model.py: no CUDA device; ferry's packages are built on a GPU "
                         "(--device cpu checks an export without one)")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.models:
        torch.manual_seed(0)
        model, example, dynamic, io = MODELS[name](device)
        export(name, args.out, device, model, example, dynamic, io, args.save_eager, bare=args.bare)
    if args.module:
        made = load_build(args.module)
        name = args.name or pathlib.Path(args.module.rpartition(":")[0]).stem
        names = {k: made[k] for k in ("input_names", "output_names", "index_bounds") if k in made}
        export(name, args.out, device, made["module"], tuple(made["example_inputs"]), made.get("dynamic_shapes"),
               save_eager=args.save_eager, names=names, bare=args.bare)


if __name__ == "__main__":
    main()
