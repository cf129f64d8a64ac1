// What the example accelerator takes. Each check sees the node's dtypes,
// attributes and the shape store's facts, and returns the nodes it takes as one
// unit (anchor first), or declines with `*why` naming the limit at fault; the
// partitioner reports declines in `disco inspect --targets` and gives the node
// to the next backend.
#include "targets/example/example_rules.h"

#include "frontend/attributes.h"

namespace disco {
namespace {

std::vector<int> decline(std::string *why, const std::string &reason) {
  *why = reason;
  return {};
}

std::string dtype_of(const MatchContext &ctx, int vid) { return dtype_name(ctx.value(vid).dtype); }

// The anchor, plus the Relu that reads its output when nothing else does: the
// accelerator applies it on the way out, so the unrectified tensor never leaves it.
std::vector<int> with_relu(const MatchContext &ctx, int node) {
  const int relu = ctx.sole_consumer(ctx.node(node).outputs[0]);
  if (relu >= 0 && ctx.node(relu).op_type == "Relu" && ctx.node(relu).domain.empty()) return {node, relu};
  return {node};
}

// Conv: X [N, C, H, W] float32, constant weights [M, C, kh, kw] (the
// accelerator keeps them in its own memory), an optional bias.
std::vector<int> check_conv(const MatchContext &ctx, int node, std::string *why) {
  const Node &n = ctx.node(node);
  const AttrReader attrs(n.attrs, n.where());
  const int x = n.inputs[0], w = n.inputs[1], bias = n.inputs.size() > 2 ? n.inputs[2] : -1;
  if (ctx.value(x).dtype != DType::F32) return decline(why, "X is " + dtype_of(ctx, x) + ", not float32");
  if (ctx.value(x).shape->size() != 4)
    return decline(why, "not a 2-D conv (X has rank " + std::to_string(ctx.value(x).shape->size()) + ")");
  if (!ctx.is_constant(w)) return decline(why, "weights are not a constant");
  if (bias >= 0 && ctx.value(bias).dtype != DType::F32) return decline(why, "bias is " + dtype_of(ctx, bias));
  if (attrs.get_int("group", 1) != 1) return decline(why, "group != 1");
  const std::vector<int64_t> &k = ctx.value(w).constant->shape;
  if (k[2] > 7 || k[3] > 7) return decline(why, "kernel larger than 7x7");
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID")
    return decline(why, "auto_pad " + auto_pad + " (pads that depend on the input size)");
  return with_relu(ctx, node);
}

// Add: two float32 tensors that the shape store proves to have one shape. The
// accelerator does not broadcast, and a shape equal only at run time will not do.
std::vector<int> check_add(const MatchContext &ctx, int node, std::string *why) {
  const Node &n = ctx.node(node);
  const int a = n.inputs[0], b = n.inputs[1];
  for (int v : {a, b})
    if (ctx.value(v).dtype != DType::F32) return decline(why, "input is " + dtype_of(ctx, v) + ", not float32");
  if (!ctx.store().same_shape(*ctx.value(a).shape, *ctx.value(b).shape))
    return decline(why, "shapes may differ (the accelerator does not broadcast)");
  return with_relu(ctx, node);
}

}  // namespace

std::vector<SupportRule> example_rules() {
  return {{"conv2d[+relu]", {"Conv"}, check_conv}, {"add[+relu]", {"Add"}, check_add}};
}

}  // namespace disco
