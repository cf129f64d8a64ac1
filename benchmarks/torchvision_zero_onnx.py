"""An ONNX symbolic for `aten::zero`, which torch 1.13's torch.onnx lacks.

torchvision 0.14's swin_v2 models (shifted_window_attention with a logit
scale) do `qkv_bias[length:2 * length].zero_()` in forward. torch.onnx turns
that in-place write into `aten::zero` (the functional form of `zero_`) on the
slice, followed by an index_put, and then fails at every opset with
"Exporting the operator ::zero to ONNX opset version N is not supported".

`register()` adds the symbolic a user would write: zeros of the input's shape
and element type, ConstantOfShape(Shape(x)). (Not Mul(x, 0): that keeps NaN and
Inf where x has them, and zero_() does not.) It is registered from opset 9, so
it serves every opset torch 1.13 exports (9 to 17).
"""
import torch


def register():
    from torch.onnx import register_custom_op_symbolic
    from torch.onnx import _type_utils, symbolic_helper

    def zero(g, self):
        # torch 1.13 names the element type ("Float"); float where the trace does not know it.
        name = symbolic_helper._try_get_scalar_type(self) or "Float"
        dtype = _type_utils.JitScalarType.from_name(name).dtype()
        return g.op("ConstantOfShape", g.op("Shape", self), value_t=torch.tensor([0], dtype=dtype))

    register_custom_op_symbolic("aten::zero", zero, 9)
