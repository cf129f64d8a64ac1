#!/usr/bin/python3
"""torchvision's GeneralizedRCNNTransform resize and batching in miniature, for
tests/lowering/run_time_dims_test.cc.

The math is torchvision 0.14's traced path (detection/transform.py:
_resize_image_and_masks and GeneralizedRCNNTransform._onnx_batch_images),
with min_size 16, max_size 40 and a stride of 16 instead of 800, 1333
and 32 (so the references stay small):

  scale = min(min_size / min(H, W), max_size / max(H, W))     (float32)
  y = interpolate(x, scale_factor=scale, recompute_scale_factor=True,
                  mode="bilinear", align_corners=False)
      # that is: size = floor([H, W] * scale), computed in float32
  y padded at the bottom and right to ceil(size / 32) * 32     (float32)

torch.onnx exports the shape math as Shape -> Gather -> Cast(float) -> Div /
ReduceMin / Mul -> Floor -> Cast(int64) -> Concat -> Resize(sizes) and
Ceil -> Mul -> Cast(int64) -> Sub -> Concat -> Pad: the sizes come from the
input's shape through float arithmetic, with H and W dynamic.

Run with Debian's python (torch 1.13):
  /usr/bin/python3 tests/references/make_run_time_dims_references.py
Writes tests/references/run_time_dims/resize_pad.opset{11,17}.onnx and, per
input shape NxCxHxW, resize_pad.NxCxHxW.input.npy and .output.npy (PyTorch's
output; the same for both opsets).
"""
import os

import numpy as np
import torch

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_time_dims")
MIN_SIZE, MAX_SIZE, STRIDE = 16.0, 40.0, 16
# Shapes whose scale comes from the short side (20x30), from the long side
# (10x37), and that shrink (24x50, a height rounded down by floor).
SHAPES = [(1, 3, 20, 30), (1, 3, 10, 37), (1, 3, 24, 50)]


class ResizePad(torch.nn.Module):
    def forward(self, x):
        # torchvision's _get_shape_onnx: the shape as a tensor, traced.
        im_shape = torch._shape_as_tensor(x)[-2:]
        min_size = torch.min(im_shape).to(dtype=torch.float32)
        max_size = torch.max(im_shape).to(dtype=torch.float32)
        scale = torch.min(MIN_SIZE / min_size, MAX_SIZE / max_size)
        y = torch.nn.functional.interpolate(x, scale_factor=scale, mode="bilinear",
                                            recompute_scale_factor=True, align_corners=False)
        # _onnx_batch_images: pad H and W up to multiples of STRIDE, computed in float.
        padded = []
        for i in (2, 3):
            s = torch._shape_as_tensor(y)[i].to(torch.float32)
            padded.append((torch.ceil(s / STRIDE) * STRIDE).to(torch.int64))
        shape = torch._shape_as_tensor(y)
        return torch.nn.functional.pad(y, (0, padded[1] - shape[3], 0, padded[0] - shape[2]))


def main():
    os.makedirs(HERE, exist_ok=True)
    m = ResizePad().eval()
    rng = np.random.default_rng(39)
    for shape in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            y = m(torch.from_numpy(x)).numpy()
        name = "resize_pad.%s" % "x".join(str(d) for d in shape)
        np.save(os.path.join(HERE, name + ".input.npy"), x)
        np.save(os.path.join(HERE, name + ".output.npy"), y)
        print(name, "->", y.shape)
    x = torch.zeros(SHAPES[0])
    for opset in (11, 17):
        path = os.path.join(HERE, "resize_pad.opset%d.onnx" % opset)
        torch.onnx.export(m, (x,), path, opset_version=opset, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {2: "H", 3: "W"}, "y": {2: "PH", 3: "PW"}})
        print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
