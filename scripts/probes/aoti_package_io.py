"""What an AOTInductor package made the plain way (torch.export + aoti_compile_and_package) says
about its inputs and outputs as data, with no generated code read: its files and metadata, the
loader's call spec and metadata, and the names its compiled container gives through the C ABI.
Two tiny models on the CPU: an MLP with a dynamic batch and an embedding model with int64 and bool
inputs and outputs of two dtypes. Needs PyTorch and a C++ compiler (AOTInductor compiles on the
CPU); no GPU.
    python3 scripts/probes/aoti_package_io.py OUT_DIR
Prints what each source exposes; the packages stay in OUT_DIR, their generated wrapper code
unpacked beside them for the readers that must fall back on it (src/engines/torch/compiled_io.hpp)."""
import ctypes
import glob
import json
import os
import sys
import zipfile

import torch
from torch import nn
from torch.export import Dim


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class Embedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(100, 4)

    def forward(self, ids, mask):
        rows = self.table(ids) * mask.unsqueeze(-1).to(torch.float32)
        return rows.sum(1), (ids * mask.to(torch.int64)).sum(1)


def container_names(unpacked):
    """Input and output names through the package's C ABI (a second container, weights included)."""
    ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib/libtorch_cpu.so"), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(os.path.abspath(glob.glob(f"{unpacked}/**/*.wrapper.so", recursive=True)[0]))
    handle, count, text = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_char_p()
    assert lib.AOTInductorModelContainerCreateWithDevice(ctypes.byref(handle), ctypes.c_size_t(1), b"cpu", None) == 0
    names = {}
    for role, number, name in (("inputs", lib.AOTInductorModelContainerGetNumInputs,
                                lib.AOTInductorModelContainerGetInputName),
                               ("outputs", lib.AOTInductorModelContainerGetNumOutputs,
                                lib.AOTInductorModelContainerGetOutputName)):
        number(handle, ctypes.byref(count))
        names[role] = []
        for i in range(count.value):
            name(handle, ctypes.c_size_t(i), ctypes.byref(text))
            names[role].append(text.value.decode())
    return names


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    models = {
        "mlp": torch.export.export(Mlp(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("batch", min=1, max=64)}}),
        "embedding": torch.export.export(Embedding(), (torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.bool))),
    }
    print(f"PyTorch {torch.__version__}")
    for name, program in models.items():
        package = torch._inductor.aoti_compile_and_package(program, package_path=f"{out}/{name}.pt2")
        unpacked = f"{out}/{name}"
        with zipfile.ZipFile(package) as archive:
            archive.extractall(unpacked)
            print(f"\n{name}: {len(archive.namelist())} files: {', '.join(sorted(archive.namelist()))}")
            for member in archive.namelist():
                if member.endswith(".json"):
                    print(f"  {member}: {json.loads(archive.read(member))}")
        loader = torch._C._aoti.AOTIModelPackageLoader(package, "model", False, 1, -1)
        print(f"  loader.get_call_spec(): {loader.get_call_spec()}")
        print(f"  loader.get_metadata(): {loader.get_metadata()}")
        print(f"  C ABI names: {container_names(unpacked)}")
        print(f"  exported program's own names: inputs {[s.arg.name for s in program.graph_signature.input_specs]}, "
              f"outputs {[s.arg.name for s in program.graph_signature.output_specs]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "aoti-package-io")
