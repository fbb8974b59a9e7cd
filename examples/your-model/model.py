"""Your own model for ferry: what scripts/export_model.py --module needs is a function returning the
module, example inputs and which dims are dynamic. This one is a small classifier of 256 float32
features into 10 scores, any batch from 1 to 256.

  python3 scripts/export_model.py --module examples/your-model/model.py:build --name classifier --out models
"""
import torch


class Classifier(torch.nn.Module):
    def __init__(self, features=256, hidden=1024, classes=10):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(features, hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(hidden, classes))

    def forward(self, features):
        return self.body(features)


def build():
    torch.manual_seed(0)  # your trained weights would be loaded here instead
    batch = torch.export.Dim("batch", min=1, max=256)
    return {"module": Classifier().eval(),
            "example_inputs": (torch.randn(8, 256),),
            "dynamic_shapes": {"features": {0: batch}},
            "output_names": ["scores"]}
