"""A small MLP with a dynamic batch, exported by scripts/export_model.py --module for the GPU test
of a torch: model run through a ferry session (test_gpu_session.py; scripts/gpu/python.sh)."""
import torch


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    return {"module": model, "example_inputs": (torch.randn(8, 256),), "dynamic_shapes": {"input": {0: batch}},
            "input_names": ["features"], "output_names": ["scores"]}
