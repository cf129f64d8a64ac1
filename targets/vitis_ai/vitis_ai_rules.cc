// The vitis_ai support rules. Each check declines with the DPU limit at
// fault; `disco inspect --targets vitis_ai,host` lists the reasons, and the
// node stays on the next backend (the host).
#include "targets/vitis_ai/vitis_ai_rules.h"

#include <cmath>

#include "frontend/attributes.h"
#include "targets/vitis_ai/dpu_limits.h"

namespace disco::vitis_ai {
namespace {

using Ints = std::vector<int64_t>;

std::string str(int64_t v) { return std::to_string(v); }

bool is_one(const MatchContext &ctx, const Dim &d) { return ctx.store().same_dim(d, Dim(1)); }

// Every data value the unit reads or writes is float32 with a known rank.
bool f32_values(const MatchContext &ctx, const Node &n, std::string *why) {
  for (int vid : n.inputs)
    if (vid >= 0 && !ctx.is_constant(vid) && (!ctx.is_f32(vid) || ctx.rank_of(vid) < 0)) {
      *why = "input '" + ctx.value(vid).name + "' is " + dtype_name(ctx.value(vid).dtype) + ", not float32";
      return false;
    }
  if (n.outputs.empty() || !ctx.is_f32(n.outputs[0]) || ctx.rank_of(n.outputs[0]) < 0) {
    *why = "the output is not a float32 tensor of known rank";
    return false;
  }
  return true;
}

bool in_range(const Ints &v, int64_t lo, int64_t hi) {
  for (int64_t x : v)
    if (x < lo || x > hi) return false;
  return true;
}

// Spatial window attributes shared by Conv and the pools.
struct Window {
  Ints kernel, strides, pads, dilations;
};

bool read_window(const Node &n, const Ints &kernel, Window *w, std::string *why) {
  const AttrReader a(n.attrs, n.where());
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    *why = "auto_pad " + auto_pad + " (pads that depend on the input size)";
    return false;
  }
  w->kernel = kernel;
  w->strides = a.get_ints_opt("strides").value_or(Ints{1, 1});
  w->dilations = a.get_ints_opt("dilations").value_or(Ints{1, 1});
  w->pads = auto_pad == "VALID" ? Ints{0, 0, 0, 0} : a.get_ints_opt("pads").value_or(Ints{0, 0, 0, 0});
  if (w->kernel.size() != 2 || w->strides.size() != 2 || w->dilations.size() != 2 || w->pads.size() != 4) {
    *why = "not a 2-D window";
    return false;
  }
  for (int i = 0; i < 4; ++i)
    if (w->pads[i] < 0 || w->pads[i] > w->kernel[i % 2] - 1) {
      *why = "pad " + str(w->pads[i]) + " outside [0, kernel - 1] (DPU limit)";
      return false;
    }
  return true;
}

bool clip_bounds(const MatchContext &ctx, const Node &n, double *lo, double *hi) {
  *lo = -INFINITY, *hi = INFINITY;
  if (n.opset < 11) {
    const AttrReader a(n.attrs, n.where());
    *lo = a.get_float("min", -INFINITY), *hi = a.get_float("max", INFINITY);
    return true;
  }
  if (n.inputs.size() > 1 && n.inputs[1] >= 0 && !ctx.scalar_constant(n.inputs[1], lo)) return false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !ctx.scalar_constant(n.inputs[2], hi)) return false;
  return true;
}

// The activation that reads `cur`, when nothing else does: Relu, Relu6 (Clip
// to [0, 6]) or LeakyRelu. The DPU applies it before rounding.
void match_activation(const MatchContext &ctx, int cur, VitisUnit &u) {
  const int next = ctx.sole_consumer(cur);
  if (next < 0) return;
  const Node &n = ctx.node(next);
  if (!MatchContext::is_default_domain(n) || n.inputs.empty() || n.inputs[0] != cur || !ctx.is_f32(n.outputs[0]))
    return;
  if (n.op_type == "Relu") {
    u.act.kind = ActKind::Relu;
  } else if (n.op_type == "Clip") {
    double lo = 0, hi = 0;
    if (!clip_bounds(ctx, n, &lo, &hi) || lo != 0.0 || hi != 6.0) return;
    u.act.kind = ActKind::Relu6;
  } else if (n.op_type == "LeakyRelu") {
    const double alpha = AttrReader(n.attrs, n.where()).get_float("alpha", 0.01f);
    if (!(alpha >= 0 && alpha < 1)) return;
    u.act.kind = ActKind::Leaky;
    u.act.leaky_num = static_cast<int>(std::lround(alpha * 256));
    u.leaky_alpha = alpha;
  } else {
    return;
  }
  u.nodes.push_back(next);
  u.output = n.outputs[0];
}

// Inference BatchNormalization over the conv's output channels, constant parameters.
void match_batchnorm(const MatchContext &ctx, int cur, VitisUnit &u) {
  const int next = ctx.sole_consumer(cur);
  if (next < 0) return;
  const Node &n = ctx.node(next);
  if (!ctx.is_op(next, "BatchNormalization") || n.opset < 9 || n.inputs.size() != 5 ||
      n.inputs[0] != cur || !ctx.only_first_output_read(n))
    return;
  if (AttrReader(n.attrs, n.where()).get_int("training_mode", 0) != 0) return;
  for (int i = 1; i < 5; ++i)
    if (!ctx.is_constant(n.inputs[i]) || !ctx.is_f32(n.inputs[i]) || ctx.rank_of(n.inputs[i]) != 1) return;
  u.nodes.push_back(next);
  u.batchnorm = next;
  u.output = n.outputs[0];
}

bool check_conv(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  const int x = n.inputs[0], w = n.inputs[1], b = n.inputs.size() > 2 ? n.inputs[2] : -1;
  if (ctx.rank_of(x) != 4) return *why = "not a 2-D conv (X has rank " + str(ctx.rank_of(x)) + ")", false;
  if (!ctx.is_constant(w) || !ctx.is_f32(w)) return *why = "weights are not a float32 constant", false;
  if (b >= 0 && (!ctx.is_constant(b) || !ctx.is_f32(b))) return *why = "bias is not a float32 constant", false;
  const Ints &ws = ctx.value(w).constant->shape;
  const AttrReader a(n.attrs, n.where());
  Window win;
  if (!read_window(n, {ws[2], ws[3]}, &win, why)) return false;
  const int64_t group = a.get_int("group", 1), M = ws[0], C = ws[1] * group;
  const bool depthwise = group > 1 && ws[1] == 1 && M == group;
  if (group != 1 && !depthwise) return *why = "group " + str(group) + " is neither 1 nor depthwise", false;
  if (C > kMaxChannels || M > kMaxChannels)
    return *why = "channels " + str(C) + " -> " + str(M) + " exceed " + str(kMaxChannels) + " (DPU limit)", false;
  const int64_t max_k = depthwise ? kMaxDepthwiseKernel : kMaxConvKernel;
  const int64_t max_s = depthwise ? kMaxDepthwiseStride : kMaxConvStride;
  if (!in_range(win.kernel, 1, max_k))
    return *why = "kernel " + str(ws[2]) + "x" + str(ws[3]) + " outside [1, " + str(max_k) + "] (DPU limit)", false;
  if (!in_range(win.strides, 1, max_s)) return *why = "stride outside [1, " + str(max_s) + "] (DPU limit)", false;
  if (!in_range(win.dilations, 1, 16)) return *why = "dilation outside [1, 16]", false;
  if ((win.dilations[0] > 1 || win.dilations[1] > 1) && (win.strides[0] != 1 || win.strides[1] != 1))
    return *why = "dilation with a stride other than 1 (DPU limit)", false;
  u.kind = UnitKind::Conv;
  match_batchnorm(ctx, u.output, u);
  match_activation(ctx, u.output, u);
  return true;
}

// A [M, K] from the graph, B a 2-D float32 constant: MatMul(A, B) and Gemm(A, B, C).
bool fc_operands(const MatchContext &ctx, const Node &n, std::string *why) {
  const int a = n.inputs[0], b = n.inputs[1];
  if (ctx.rank_of(a) != 2) return *why = "A has rank " + str(ctx.rank_of(a)) + ", not 2", false;
  if (!ctx.is_constant(b) || !ctx.is_f32(b) || ctx.rank_of(b) != 2)
    return *why = "weights are not a 2-D float32 constant", false;
  return true;
}

// The DPU's size limit on the weights, then the activation that follows.
bool fc_unit(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  const Ints &bs = ctx.value(n.inputs[1]).constant->shape;
  if (bs[0] > kMaxChannels || bs[1] > kMaxChannels)
    return *why = "features exceed " + str(kMaxChannels) + " (DPU limit)", false;
  u.kind = UnitKind::Gemm;
  match_activation(ctx, u.output, u);
  return true;
}

bool check_matmul(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  return fc_operands(ctx, n, why) && fc_unit(ctx, n, u, why);
}

// Gemm as a MatMul with B maybe transposed, and C a constant bias per output column.
bool check_gemm(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  if (!fc_operands(ctx, n, why)) return false;
  const Ints &bs = ctx.value(n.inputs[1]).constant->shape;
  const AttrReader at(n.attrs, n.where());
  if (at.get_int("transA", 0) != 0) return *why = "transA (A must be [M, K])", false;
  const int c = n.inputs.size() > 2 ? n.inputs[2] : -1;
  if (c >= 0) {
    if (!ctx.is_constant(c) || !ctx.is_f32(c)) return *why = "C is not a float32 constant", false;
    const Ints &cs = ctx.value(c).constant->shape;
    const int64_t N = at.get_int("transB", 0) ? bs[0] : bs[1];
    const bool per_column = (cs.size() == 1 && (cs[0] == N || cs[0] == 1)) ||
                            (cs.size() == 2 && cs[0] == 1 && (cs[1] == N || cs[1] == 1)) || cs.empty();
    if (!per_column) return *why = "C is not a bias per output column", false;
  }
  return fc_unit(ctx, n, u, why);
}

bool check_global_avg_pool(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  if (ctx.rank_of(n.inputs[0]) != 4) return *why = "not a 2-D pool", false;
  return u.kind = UnitKind::GlobalAvgPool, true;
}

// What MaxPool and AveragePool share: a 2-D window the DPU's pooling takes.
bool pool_window(const MatchContext &ctx, const Node &n, Window *win, std::string *why) {
  if (ctx.rank_of(n.inputs[0]) != 4) return *why = "not a 2-D pool", false;
  const AttrReader a(n.attrs, n.where());
  if (!ctx.only_first_output_read(n)) return *why = "MaxPool's Indices are read", false;
  if (a.get_int("ceil_mode", 0) != 0) return *why = "ceil_mode 1", false;
  if (a.get_int("storage_order", 0) != 0) return *why = "storage_order 1", false;
  if (!read_window(n, a.get_ints("kernel_shape"), win, why)) return false;
  if (!in_range(win->dilations, 1, 1)) return *why = "dilated pooling", false;
  if (!in_range(win->strides, 1, kMaxPoolStride)) return *why = "stride outside [1, 8] (DPU limit)", false;
  return true;
}

bool check_max_pool(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  Window win;
  if (!pool_window(ctx, n, &win, why)) return false;
  if (!in_range(win.kernel, 1, kMaxPoolKernel)) return *why = "kernel outside [1, 8] (DPU limit)", false;
  return u.kind = UnitKind::MaxPool, true;
}

bool check_avg_pool(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  Window win;
  if (!pool_window(ctx, n, &win, why)) return false;
  if (win.kernel[0] != win.kernel[1] || !in_range(win.kernel, kMinAvgPoolKernel, kMaxAvgPoolKernel))
    return *why = "average pool kernel not square in [2, 8] (DPU limit)", false;
  const bool padded = win.pads != Ints{0, 0, 0, 0};
  if (padded && AttrReader(n.attrs, n.where()).get_int("count_include_pad", 0) == 0)
    return *why = "padded average pool that excludes pads (the DPU divides by the window size)", false;
  return u.kind = UnitKind::AvgPool, true;
}

bool check_add(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  const int a = n.inputs[0], b = n.inputs[1];
  if (ctx.is_constant(a) || ctx.is_constant(b)) return *why = "a constant operand (the DPU adds two feature maps)", false;
  if (!ctx.store().same_shape(*ctx.value(a).shape, *ctx.value(b).shape))
    return *why = "shapes may differ (the DPU's eltwise does not broadcast)", false;
  u.kind = UnitKind::Add;
  match_activation(ctx, u.output, u);
  if (u.act.kind != ActKind::None && u.act.kind != ActKind::Relu) {  // eltwise fuses Relu only
    u.nodes.resize(1), u.output = n.outputs[0], u.act = Activation{};
  }
  return true;
}

bool check_concat(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  for (int v : n.inputs)
    if (v < 0 || ctx.is_constant(v)) return *why = "a constant operand", false;
  const int rank = ctx.rank_of(n.inputs[0]);
  const int64_t axis = AttrReader(n.attrs, n.where()).get_int("axis");
  if (rank != 4 || (axis != 1 && axis != -3)) return *why = "not a channel concat of 4-D tensors", false;
  return u.kind = UnitKind::Concat, true;
}

// Nearest-neighbour upsampling by integer factors on H and W, from constant
// scales, in a coordinate mode where output pixel o reads input o / s.
bool check_resize(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  if (n.opset < 11) return *why = "Resize before opset 11", false;
  if (ctx.rank_of(n.inputs[0]) != 4) return *why = "not a 4-D Resize", false;
  const AttrReader a(n.attrs, n.where());
  if (a.get_string("mode", "nearest") != "nearest") return *why = "mode is not nearest", false;
  const std::string ctm = a.get_string("coordinate_transformation_mode", "half_pixel");
  const std::string nm = a.get_string("nearest_mode", "round_prefer_floor");
  const bool floor_like = (ctm == "asymmetric" && nm == "floor") ||
                          ((ctm == "half_pixel" || ctm == "pytorch_half_pixel") && nm == "round_prefer_floor");
  if (!floor_like) return *why = "coordinate mode " + ctm + " with " + nm + " (not o / s)", false;
  const int scales = n.inputs.size() > 2 ? n.inputs[2] : -1;
  const int sizes = n.inputs.size() > 3 ? n.inputs[3] : -1;
  if (sizes >= 0 || scales < 0 || !ctx.is_constant(scales)) return *why = "sizes instead of constant scales", false;
  const TensorData &s = *ctx.value(scales).constant;
  if (s.num_elements() != 4 || s.float_at(0) != 1 || s.float_at(1) != 1) return *why = "scales N or C", false;
  for (int i = 2; i < 4; ++i) {
    const double f = s.float_at(i);
    if (f != std::floor(f) || f < 1 || f > kMaxResizeScale)
      return *why = "scale " + std::to_string(f) + " is not an integer in [1, 8]", false;
  }
  return u.kind = UnitKind::Resize, true;
}

// Flatten of [N, C, 1, 1] to [N, C]: the same bytes in NCHW and NHWC.
bool check_flatten(const MatchContext &ctx, const Node &n, VitisUnit &u, std::string *why) {
  const int x = n.inputs[0];
  if (ctx.rank_of(x) != 4 || AttrReader(n.attrs, n.where()).get_int("axis", 1) != 1)
    return *why = "not a Flatten of a 4-D tensor at axis 1", false;
  const Shape &s = *ctx.value(x).shape;
  if (!is_one(ctx, s[2]) || !is_one(ctx, s[3])) return *why = "H and W are not 1", false;
  return u.kind = UnitKind::Flatten, true;
}

}  // namespace

std::vector<SupportRule> vitis_ai_rules() {
  using Check = bool (*)(const MatchContext &, const Node &, VitisUnit &, std::string *);
  // A rule for one anchor op: every value float32, then the op's own limits.
  auto rule = [](const char *name, const char *op, Check check) -> SupportRule {
    return {name, op, [check](const MatchContext &ctx, int node) {
              const Node &n = ctx.node(node);
              VitisUnit u;
              u.nodes = {node};
              u.output = n.outputs.empty() ? -1 : n.outputs[0];
              std::string why;
              if (!f32_values(ctx, n, &why) || !check(ctx, n, u, &why)) return decline(why);
              return take_record(std::move(u));
            }};
  };
  return {rule("conv[+bn][+act]", "Conv", check_conv),
          rule("fc[+act]", "Gemm", check_gemm),
          rule("fc[+act]", "MatMul", check_matmul),
          rule("pool", "MaxPool", check_max_pool),
          rule("pool", "AveragePool", check_avg_pool),
          rule("pool", "GlobalAveragePool", check_global_avg_pool),
          rule("eltwise-add[+relu]", "Add", check_add),
          rule("concat", "Concat", check_concat),
          rule("resize-nearest", "Resize", check_resize),
          rule("flatten", "Flatten", check_flatten)};
}

}  // namespace disco::vitis_ai
