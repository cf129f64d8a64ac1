#!/usr/bin/python3
"""torchvision.ops.roi_align exported by torch.onnx, for
tests/lowering/roi_align_torchvision_test.cc.

torchvision's detection heads (MultiScaleRoIAlign) call roi_align with
aligned=False. ONNX's RoiAlign-10 means exactly that; RoiAlign-16 added
coordinate_transformation_mode, whose default "half_pixel" is aligned=True.
torchvision 0.14 exports RoiAlign without the attribute at every opset, so its
opset-17 export states aligned=True (why fasterrcnn at opset 17 differed from
PyTorch); benchmarks/torchvision_roi_align_onnx.py registers an opset-16
symbolic that states the mode. The models here:

  roi_align.aligned0.opset11.onnx        torchvision's export, aligned=False (RoiAlign-10)
  roi_align.aligned0.opset17.stock.onnx  torchvision's export at 17: no attribute, so half_pixel
  roi_align.aligned0.opset17.onnx        with the opset-16 symbolic: output_half_pixel
  roi_align.aligned1.opset17.onnx        with the opset-16 symbolic, aligned=True: half_pixel

Inputs x [2, 3, 12, 17] and rois [7, 5] (batch index, x1, y1, x2, y2 in image
pixels, spatial_scale 0.25): regions inside, partly outside the feature map,
smaller than one feature pixel (where aligned=False clamps the region to 1),
empty and inverted.
Two outputs per model: sampling_ratio 2 (as MultiScaleRoIAlign) and adaptive
(torchvision -1, ONNX 0). References: PyTorch's roi_align with aligned=False
and aligned=True.

Run with Debian's python (torch 1.13, torchvision 0.14):
  /usr/bin/python3 tests/references/make_roi_align_references.py
Writes tests/references/roi_align/: the four models, x.npy, rois.npy and
aligned{0,1}.{sr2,adaptive}.npy.
"""
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "references", "roi_align")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import torchvision_roi_align_onnx  # noqa: E402

OUTPUT_SIZE, SCALE = (3, 2), 0.25


class RoiAlign(torch.nn.Module):
    def __init__(self, aligned):
        super().__init__()
        self.aligned = aligned

    def forward(self, x, rois):
        f = torchvision.ops.roi_align
        return (f(x, rois, OUTPUT_SIZE, SCALE, 2, self.aligned),
                f(x, rois, OUTPUT_SIZE, SCALE, -1, self.aligned))


def export(aligned, opset, path):
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(RoiAlign(aligned), (X, ROIS), os.path.join(HERE, path), opset_version=opset,
                          input_names=["x", "rois"], output_names=["sr2", "adaptive"],
                          dynamic_axes={"x": {2: "h", 3: "w"}, "rois": {0: "k"}, "sr2": {0: "k"}, "adaptive": {0: "k"}})


torch.manual_seed(0)
X = torch.rand(2, 3, 12, 17)
ROIS = torch.tensor([
    [0, 4.0, 6.0, 40.0, 30.0],    # inside
    [1, 10.0, 3.0, 66.0, 47.0],   # most of the map, image 1
    [0, -8.0, -6.0, 20.0, 14.0],  # partly outside, top left
    [1, 50.0, 30.0, 90.0, 60.0],  # partly outside, bottom right
    [0, 21.0, 13.0, 23.0, 14.5],  # under one feature pixel: clamped to 1 when aligned=False
    [1, 8.0, 8.0, 8.0, 8.0],      # empty: no samples when aligned=True (adaptive count 0)
    [0, 30.0, 20.0, 10.0, 5.0],   # inverted: negative bins when aligned=True, clamped to 1 when False
])


def main():
    os.makedirs(HERE, exist_ok=True)
    np.save(os.path.join(HERE, "x.npy"), X.numpy())
    np.save(os.path.join(HERE, "rois.npy"), ROIS.numpy())
    for aligned in (0, 1):
        with torch.no_grad():
            sr2, adaptive = RoiAlign(bool(aligned))(X, ROIS)
        np.save(os.path.join(HERE, f"aligned{aligned}.sr2.npy"), sr2.numpy())
        np.save(os.path.join(HERE, f"aligned{aligned}.adaptive.npy"), adaptive.numpy())
    export(False, 11, "roi_align.aligned0.opset11.onnx")
    export(False, 17, "roi_align.aligned0.opset17.stock.onnx")
    torchvision_roi_align_onnx.register()
    export(False, 17, "roi_align.aligned0.opset17.onnx")
    export(True, 17, "roi_align.aligned1.opset17.onnx")
    a, b = (np.load(os.path.join(HERE, f"aligned{k}.sr2.npy")) for k in (0, 1))
    print(f"|aligned0 - aligned1| max {np.abs(a - b).max():.3g}")


if __name__ == "__main__":
    main()
