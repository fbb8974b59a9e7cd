"""torchvision's RegNetY-400MF, fp16, dynamic batch 1..64: a model nobody in this project wrote,
exported as a user would (scripts/export_model.py --module scripts/gpu/user_models/regnet_y_400mf.py:build).
Random weights (the GPU host cannot download any), with running statistics from a few training-mode
passes so that fp16 activations stay finite, as a trained network's do."""
import torch
import torchvision


def build():
    torch.manual_seed(0)
    model = torchvision.models.regnet_y_400mf(weights=None).cuda()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 224, 224, device="cuda"))
    model = model.eval().half()
    batch = torch.export.Dim("batch", min=1, max=64)
    example = torch.randn(4, 3, 224, 224, device="cuda", dtype=torch.float16)
    return {"module": model, "example_inputs": (example,), "dynamic_shapes": {"x": {0: batch}},
            "input_names": ["images"], "output_names": ["logits"]}
