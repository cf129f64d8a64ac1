"""torchvision 0.14 models outside the zoo and its unseen list (make_zoo.py),
for a speed check on families those lack: AlexNet and VGG-11 (large fully
connected layers, 5x5 and 11x11 convolutions), MobileNetV3-Small, a video
ResNet (r3d_18: Conv3d over [1, 3, 16, 112, 112]) and Wide ResNet-50-2.
torchvision's own random initialization (seed 5), opset 17, dynamic batch
(and MobileNetV3-Small's height and width). Writes the models, inputs and
PyTorch outputs and a harness sweep file (sweep.txt) into the current folder:

  cd OUT && /usr/bin/python3 .../make_tv_probe.py
  build/benchmarks/harness --sweep OUT/sweep.txt --check --skip-static --threads 1,2 --runs 10 --out F
"""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_export import export_probe

torch.manual_seed(5)
tvm = torchvision.models
models = {
    "alexnet": (tvm.alexnet(), [(1, 3, 224, 224), (2, 3, 224, 224)], {0: "batch"}, {0: "batch"}),
    "vgg11": (tvm.vgg11(), [(1, 3, 224, 224)], {0: "batch"}, {0: "batch"}),
    "mobilenet_v3_small": (tvm.mobilenet_v3_small(), [(1, 3, 224, 224), (2, 3, 160, 160)],
                           {0: "batch", 2: "h", 3: "w"}, {0: "batch"}),
    "r3d_18": (tvm.video.r3d_18(), [(1, 3, 16, 112, 112)], {0: "batch"}, {0: "batch"}),
    "wide_resnet50_2": (tvm.wide_resnet50_2(), [(1, 3, 224, 224)], {0: "batch"}, {0: "batch"}),
}
export_probe(models, "torchvision models outside the zoo and its unseen list (benchmarks/make_tv_probe.py)")
