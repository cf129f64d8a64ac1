// What the example accelerator takes. Each check sees the node's dtypes,
// attributes and the shape store's facts, and takes a unit (anchor first) with
// what it matched as the payload that compile() reads, or declines with the
// limit at fault; the partitioner reports declines in `disco inspect
// --targets` and gives the node to the next backend.
#include "targets/example/example_rules.h"

#include "frontend/attributes.h"

namespace disco {
namespace {

std::string dtype_of(const MatchContext &ctx, int vid) { return dtype_name(ctx.value(vid).dtype); }

// The anchor, plus the Relu that reads its output when nothing else does: the
// accelerator applies it on the way out, so the unrectified tensor never leaves it.
Match with_relu(const MatchContext &ctx, int node, ExampleUnit u) {
  u.nodes = {node};
  const int relu = ctx.sole_consumer(ctx.node(node).outputs[0]);
  if (ctx.is_op(relu, "Relu")) u.nodes.push_back(relu);
  u.relu = u.nodes.size() > 1;
  return take_record(std::move(u));
}

// Conv: X [N, C, H, W] float32, constant weights [M, C, kh, kw] (the
// accelerator keeps them in its own memory), an optional bias.
Match check_conv(const MatchContext &ctx, int node) {
  const Node &n = ctx.node(node);
  const AttrReader attrs(n.attrs, n.where());
  const int x = n.inputs[0], w = n.inputs[1], bias = n.inputs.size() > 2 ? n.inputs[2] : -1;
  if (!ctx.is_f32(x)) return decline("X is " + dtype_of(ctx, x) + ", not float32");
  if (ctx.rank_of(x) != 4) return decline("not a 2-D conv (X has rank " + std::to_string(ctx.rank_of(x)) + ")");
  if (!ctx.is_constant(w)) return decline("weights are not a constant");
  if (bias >= 0 && !ctx.is_f32(bias)) return decline("bias is " + dtype_of(ctx, bias));
  if (attrs.get_int("group", 1) != 1) return decline("group != 1");
  const std::vector<int64_t> &k = ctx.value(w).constant->shape;
  if (k[2] > 7 || k[3] > 7) return decline("kernel larger than 7x7");
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID")
    return decline("auto_pad " + auto_pad + " (pads that depend on the input size)");
  // The geometry with ONNX's defaults; VALID means no padding (explicit pads
  // are then ignored, as onnxruntime does).
  ExampleUnit u;
  u.conv = true;
  u.strides = attrs.get_ints_opt("strides").value_or(std::vector<int64_t>{1, 1});
  u.dilations = attrs.get_ints_opt("dilations").value_or(std::vector<int64_t>{1, 1});
  u.pads = std::vector<int64_t>(4, 0);
  if (auto_pad == "NOTSET") u.pads = attrs.get_ints_opt("pads").value_or(u.pads);
  return with_relu(ctx, node, std::move(u));
}

// Add: two float32 tensors that the shape store proves to have one shape. The
// accelerator does not broadcast, and a shape equal only at run time will not do.
Match check_add(const MatchContext &ctx, int node) {
  const Node &n = ctx.node(node);
  const int a = n.inputs[0], b = n.inputs[1];
  for (int v : {a, b})
    if (!ctx.is_f32(v)) return decline("input is " + dtype_of(ctx, v) + ", not float32");
  if (!ctx.store().same_shape(*ctx.shape_of(a), *ctx.shape_of(b)))
    return decline("shapes may differ (the accelerator does not broadcast)");
  return with_relu(ctx, node, ExampleUnit{});
}

}  // namespace

std::vector<SupportRule> example_rules() {
  return {{"conv2d[+relu]", "Conv", check_conv}, {"add[+relu]", "Add", check_add}};
}

}  // namespace disco
