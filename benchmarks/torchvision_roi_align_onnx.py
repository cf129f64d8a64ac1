"""torchvision 0.14's RoiAlign export, corrected for opsets 16 and later.

torchvision 0.14 registers its `torchvision::roi_align` symbolic for opset 11
only, so torch.onnx uses it at every later opset too. It writes no
`coordinate_transformation_mode`, and ONNX's RoiAlign-16 made that attribute
default to "half_pixel" (torchvision's aligned=True: a -0.5 pixel shift, no
clamp of small regions to 1 pixel). RoiAlign-10 had no attribute and meant
"output_half_pixel" (aligned=False). So an export at opset 16 or 17 of a model
with aligned=False, as every torchvision detection model is, states aligned=True:
faithful ONNX runtimes (disco, onnxruntime) then compute something PyTorch does
not. The ONNX spec keeps that default by design (onnx/onnx#4487); onnx's own
version converter sets "output_half_pixel" when it upgrades a RoiAlign-10 node,
and torchvision 0.15 added this opset-16 symbolic (pytorch/vision#6685).

`register()` adds that opset-16 symbolic: the same node as torchvision 0.14's,
with the mode stated. torch.onnx picks the highest registered opset not above
the export's, so opset 11 exports are unchanged.
"""
import torch


def register():
    from torch.onnx import register_custom_op_symbolic
    from torch.onnx.symbolic_helper import parse_args
    from torch.onnx.symbolic_opset11 import select, squeeze
    from torch.onnx.symbolic_opset9 import _cast_Long

    import torchvision.ops  # noqa: F401  (registers torchvision's own symbolics first)

    @parse_args("v", "v", "f", "i", "i", "i", "i")
    def roi_align_opset16(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
        # rois is [K, 5]: batch index, x1, y1, x2, y2 (as torchvision 0.14's symbolic splits it).
        batch_indices = _cast_Long(
            g, squeeze(g, select(g, rois, 1, g.op("Constant", value_t=torch.tensor([0], dtype=torch.long))), 1), False
        )
        rois = select(g, rois, 1, g.op("Constant", value_t=torch.tensor([1, 2, 3, 4], dtype=torch.long)))
        return g.op(
            "RoiAlign",
            input,
            rois,
            batch_indices,
            coordinate_transformation_mode_s="half_pixel" if aligned else "output_half_pixel",
            spatial_scale_f=spatial_scale,
            output_height_i=pooled_height,
            output_width_i=pooled_width,
            sampling_ratio_i=max(sampling_ratio, 0),  # ONNX's adaptive count is 0, torchvision's -1
        )

    register_custom_op_symbolic("torchvision::roi_align", roi_align_opset16, 16)
