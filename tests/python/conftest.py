# Shared fixtures of the Python module's tests: the bundled convnet model with
# its PyTorch references (tests/references/convnet.K.{input,output}.npy), and
# a small torch MLP. ctest runs these with PYTHONPATH=<build>/python.
import os
import pathlib

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("DISCO_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CONVNET = SOURCE_DIR / "examples" / "models" / "convnet.onnx"
REFERENCES = SOURCE_DIR / "tests" / "references"


def convnet_reference(k):
    """Input k (1..3) of the convnet references and PyTorch's output for it."""
    return np.load(REFERENCES / f"convnet.{k}.input.npy"), np.load(REFERENCES / f"convnet.{k}.output.npy")


@pytest.fixture(scope="session")
def convnet():
    import disco

    return disco.compile(CONVNET, targets="host")


@pytest.fixture(scope="session")
def mlp():
    """A torch MLP (8 -> 16 -> 4) in eval mode, with fixed weights."""
    torch = pytest.importorskip("torch")

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = torch.nn.Linear(8, 16)
            self.out = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.out(torch.nn.functional.gelu(self.hidden(x)))

    torch.manual_seed(0)
    return Mlp().eval()
