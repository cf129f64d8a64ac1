#include "targets/onednn/onednn_rules.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "frontend/attributes.h"
#include "lowering/known_values.h"

namespace disco {

namespace {

// A one-element constant that does not raise the rank of a value of rank `rank`.
bool scalar_operand(const MatchContext &ctx, int vid, int rank, double *v) {
  return ctx.rank_of(vid) <= rank && ctx.scalar_constant(vid, v);
}

bool near(double v, double want) { return std::fabs(v - want) <= 1e-4 * std::fabs(want); }

// ---- views -------------------------------------------------------------------

// The perm of a Transpose with one data input and one read result, or {}.
std::vector<int64_t> transpose_perm(const MatchContext &ctx, int node) {
  const Node &t = ctx.node(node);
  if (!ctx.is_op(node, "Transpose") || t.inputs.size() != 1 || !ctx.only_first_output_read(t)) return {};
  const int rank = ctx.rank_of(t.inputs[0]);
  if (rank < 1 || rank > kOnednnMaxRank || !ctx.is_f32(t.inputs[0])) return {};
  std::vector<int64_t> perm;
  for (int i = rank; i-- > 0;) perm.push_back(i);  // ONNX's default: the dims reversed
  perm = AttrReader(t.attrs, t.where()).get_ints_opt("perm").value_or(perm);
  return static_cast<int>(perm.size()) == rank && is_permutation(perm) ? perm : std::vector<int64_t>{};
}

// A Reshape's output dims as view tokens over its input's dims: a constant,
// an input dim it provably equals ("in<i>"), or at most one "rest".
bool reshape_tokens(const MatchContext &ctx, int node, std::vector<std::string> *tokens) {
  const Node &r = ctx.node(node);
  if (!ctx.is_op(node, "Reshape") || r.inputs.empty() || !ctx.only_first_output_read(r) || !ctx.is_f32(r.inputs[0]))
    return false;
  const Shape *in = ctx.shape_of(r.inputs[0]), *out = ctx.shape_of(r.outputs[0]);
  if (!in || !out) return false;
  bool rest = false;
  for (const Dim &d : *out) {
    const Dim c = ctx.store().canonical(d);
    if (c.is_const() && c.as_const() >= 0) {
      tokens->push_back(std::to_string(c.as_const()));
      continue;
    }
    int found = -1;
    for (size_t i = 0; i < in->size() && found < 0; ++i)
      if (ctx.store().same_dim((*in)[i], d)) found = static_cast<int>(i);
    if (found < 0 && rest) return false;
    rest = rest || found < 0;
    tokens->push_back(found < 0 ? "rest" : "in" + std::to_string(found));
  }
  return true;
}

// Operand `x` of MatMul `reader`, when it is Transpose(Reshape(T)) or
// Transpose(T) with each value read only by the next: the view over T.
int match_operand_view(const MatchContext &ctx, int x, int reader, OperandView *view, std::vector<int> *nodes) {
  if (ctx.sole_consumer(x) != reader) return x;
  const int t = ctx.value(x).producer;
  if (t < 0) return x;
  std::vector<int64_t> perm = transpose_perm(ctx, t);
  if (perm.empty()) return x;
  view->perm = perm;
  nodes->push_back(t);
  const int y = ctx.node(t).inputs[0];
  const int r = ctx.value(y).producer;
  std::vector<std::string> tokens;
  if (r >= 0 && ctx.sole_consumer(y) == t && reshape_tokens(ctx, r, &tokens)) {
    view->reshape = tokens;
    nodes->push_back(r);
    return ctx.node(r).inputs[0];
  }
  return y;
}

// The result written in place through the Transpose (and Reshape) that read
// it. A Transpose that a MatMul reads is left to that MatMul's operand view,
// and a Reshape that a Transpose reads to that Transpose's, so that no two
// units claim one node.
void match_output_view(const MatchContext &ctx, OnednnUnit &u) {
  const int t = ctx.sole_consumer(u.output);
  if (t < 0) return;
  const std::vector<int64_t> perm = transpose_perm(ctx, t);
  if (perm.empty()) return;
  const int v = ctx.node(t).outputs[0];
  const int c = ctx.sole_consumer(v);
  if (ctx.is_op(c, "MatMul")) return;
  u.nodes.push_back(t);
  u.out_perm = perm;
  u.output = v;
  // On the dense output any Reshape is free; its dims need no tokens.
  if (!ctx.is_op(c, "Reshape") || ctx.node(c).inputs.empty() || ctx.node(c).inputs[0] != v ||
      !ctx.only_first_output_read(ctx.node(c)) || ctx.is_op(ctx.sole_consumer(ctx.node(c).outputs[0]), "Transpose"))
    return;
  u.nodes.push_back(c);
  u.output = ctx.node(c).outputs[0];
  u.out_reshaped = true;
}

// A 2-D convolution's result (after its epilogue) that only a Transpose to
// channels last reads, as in convnext's blocks (depthwise conv, permute to
// [N, H, W, C], LayerNorm): written in place of the Transpose
// (onednn_conv.cc). Left to a MatMul that reads the Transpose's result as
// its operand view, as in match_output_view.
void match_conv_output_view(const MatchContext &ctx, OnednnUnit &u) {
  if (ctx.rank_of(u.output) != 4 || ctx.is_graph_output(u.output)) return;
  const int t = ctx.sole_consumer(u.output);
  if (t < 0 || transpose_perm(ctx, t) != std::vector<int64_t>{0, 2, 3, 1}) return;
  const int v = ctx.node(t).outputs[0];
  for (int c : ctx.consumers(v))
    if (ctx.is_op(c, "MatMul")) return;
  u.nodes.push_back(t);
  u.out_perm = {0, 2, 3, 1};
  u.output = v;
}

// ---- anchors -----------------------------------------------------------

bool match_matmul(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.inputs.size() != 2 || n.outputs.empty()) return *why = "MatMul needs two inputs", false;
  const int a = n.inputs[0], b = n.inputs[1];
  if (*why = ctx.dtype_reason({a, b, n.outputs[0]}); !why->empty()) return false;
  const int ra = ctx.rank_of(a), rb = ctx.rank_of(b);
  if (ra < 2 || rb < 2) return *why = "1-D operands are left to the next backend", false;
  if (std::max(ra, rb) > kOnednnMaxRank)
    return *why = "rank " + std::to_string(std::max(ra, rb)) + " exceeds oneDNN's " + std::to_string(kOnednnMaxRank),
           false;
  u.anchor = OnednnUnit::MatMul;
  u.anchor_inputs = {match_operand_view(ctx, a, node, &u.a_view, &u.nodes),
                     match_operand_view(ctx, b, node, &u.b_view, &u.nodes)};
  return true;
}

bool match_gemm(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.opset < 7) return *why = "Gemm before opset 7 (the broadcast attribute) is not supported", false;
  if (n.inputs.size() < 2 || n.outputs.empty()) return *why = "Gemm needs A and B", false;
  const int a = n.inputs[0], b = n.inputs[1], c = n.inputs.size() > 2 ? n.inputs[2] : -1;
  const int y = n.outputs[0];
  if (*why = ctx.dtype_reason({a, b, c, y}); !why->empty()) return false;
  if (ctx.rank_of(a) != 2 || ctx.rank_of(b) != 2 || ctx.rank_of(y) != 2)
    return *why = "A, B and Y must be 2-D", false;
  AttrReader attrs(n.attrs, n.where());
  u.anchor = OnednnUnit::Gemm;
  u.anchor_inputs = {a, b};
  u.trans_a = attrs.get_int("transA", 0) != 0;
  u.trans_b = attrs.get_int("transB", 0) != 0;
  const double alpha = attrs.get_float("alpha", 1.0f), beta = attrs.get_float("beta", 1.0f);
  const bool use_c = c >= 0 && beta != 0;
  if (use_c && !ctx.broadcasts_into(*ctx.shape_of(c), *ctx.shape_of(y)))
    return *why = "C does not broadcast to [M, N]", false;
  // alpha*AB + beta*C as post-ops on AB: scale, add C; with beta != 1 the sum is
  // beta * ((alpha/beta) * AB + C), so that C needs no scaled copy.
  if (!use_c) {
    if (alpha != 1) u.post_ops.push_back({OnednnPostOp::Linear, alpha, 0});
    return true;
  }
  if (beta == 1) {
    if (alpha != 1) u.post_ops.push_back({OnednnPostOp::Linear, alpha, 0});
    u.post_ops.push_back({OnednnPostOp::Add});
    u.operands.push_back(c);
    return true;
  }
  u.post_ops.push_back({OnednnPostOp::Linear, alpha / beta, 0});
  u.post_ops.push_back({OnednnPostOp::Add});
  u.operands.push_back(c);
  u.post_ops.push_back({OnednnPostOp::Linear, beta, 0});
  return true;
}

bool match_conv(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.inputs.size() < 2 || n.outputs.empty()) return *why = "Conv needs X and W", false;
  const int x = n.inputs[0], w = n.inputs[1], bias = n.inputs.size() > 2 ? n.inputs[2] : -1;
  if (*why = ctx.dtype_reason({x, w, bias, n.outputs[0]}); !why->empty()) return false;
  const int rank = ctx.rank_of(x);
  if (rank < 3 || rank > 5) return *why = "only 1-D, 2-D and 3-D convolutions are supported", false;
  if (ctx.rank_of(w) != rank) return *why = "W must have the rank of X", false;
  if (bias >= 0 && ctx.rank_of(bias) != 1) return *why = "the bias must be 1-D", false;
  const size_t spatial = static_cast<size_t>(rank - 2);
  AttrReader attrs(n.attrs, n.where());
  u.group = attrs.get_int("group", 1);
  if (u.group < 1) return *why = "group must be positive", false;
  u.auto_pad = attrs.get_string("auto_pad", "NOTSET");
  if (u.auto_pad != "NOTSET" && u.auto_pad != "VALID" && u.auto_pad != "SAME_UPPER" && u.auto_pad != "SAME_LOWER")
    return *why = "unknown auto_pad '" + u.auto_pad + "'", false;
  u.strides = attrs.get_ints_opt("strides").value_or(std::vector<int64_t>(spatial, 1));
  u.dilations = attrs.get_ints_opt("dilations").value_or(std::vector<int64_t>(spatial, 1));
  u.pads = std::vector<int64_t>(2 * spatial, 0);
  if (u.auto_pad == "NOTSET") u.pads = attrs.get_ints_opt("pads").value_or(u.pads);
  if (u.strides.size() != spatial || u.dilations.size() != spatial || u.pads.size() != 2 * spatial)
    return *why = "strides, dilations or pads do not match the spatial rank", false;
  for (size_t i = 0; i < spatial; ++i)
    if (u.strides[i] < 1 || u.dilations[i] < 1) return *why = "strides and dilations must be positive", false;
  for (int64_t p : u.pads)
    if (p < 0) return *why = "negative pads are not supported", false;
  if (auto ks = attrs.get_ints_opt("kernel_shape"); ks && ks->size() != spatial)
    return *why = "kernel_shape does not match the spatial rank", false;
  u.anchor = OnednnUnit::Conv;
  u.anchor_inputs = {x, w, bias};
  return true;
}

// The pools differ in their algorithm and window only.
struct PoolKind {
  bool max, global;
};

bool match_pool(const MatchContext &ctx, int node, PoolKind kind, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.inputs.empty() || n.outputs.empty()) return *why = n.op_type + " needs X", false;
  const int x = n.inputs[0];
  if (*why = ctx.dtype_reason({x, n.outputs[0]}); !why->empty()) return false;
  if (!ctx.only_first_output_read(n)) return *why = "MaxPool's Indices output is left to the next backend", false;
  const int rank = ctx.rank_of(x);
  if (rank < 3 || rank > 5) return *why = "only 1-D, 2-D and 3-D pooling is supported", false;
  const size_t spatial = static_cast<size_t>(rank - 2);
  const bool max = kind.max;
  u.anchor = OnednnUnit::Pool;
  u.anchor_inputs = {x};
  if (kind.global) {
    u.global_pool = true;
    u.pool_algorithm = max ? "max" : "avg_exclude";
    return true;
  }
  AttrReader attrs(n.attrs, n.where());
  u.kernel_shape = attrs.get_ints_opt("kernel_shape").value_or(std::vector<int64_t>{});
  u.strides = attrs.get_ints_opt("strides").value_or(std::vector<int64_t>(spatial, 1));
  u.dilations = attrs.get_ints_opt("dilations").value_or(std::vector<int64_t>(spatial, 1));
  u.auto_pad = attrs.get_string("auto_pad", "NOTSET");
  u.pads = std::vector<int64_t>(2 * spatial, 0);
  if (u.auto_pad == "NOTSET") u.pads = attrs.get_ints_opt("pads").value_or(u.pads);
  if (u.auto_pad != "NOTSET" && u.auto_pad != "VALID" && u.auto_pad != "SAME_UPPER" && u.auto_pad != "SAME_LOWER")
    return *why = "unknown auto_pad '" + u.auto_pad + "'", false;
  if (u.kernel_shape.size() != spatial || u.strides.size() != spatial || u.dilations.size() != spatial ||
      u.pads.size() != 2 * spatial)
    return *why = "kernel_shape, strides, dilations or pads do not match the spatial rank", false;
  for (size_t i = 0; i < spatial; ++i) {
    if (u.kernel_shape[i] < 1 || u.strides[i] < 1 || u.dilations[i] < 1)
      return *why = "kernel_shape, strides and dilations must be positive", false;
    const int64_t span = u.dilations[i] * (u.kernel_shape[i] - 1) + 1;
    if (u.pads[i] < 0 || u.pads[i + spatial] < 0 || u.pads[i] >= span || u.pads[i + spatial] >= span)
      return *why = "pads must be smaller than the window", false;
  }
  const bool ceil = attrs.get_int("ceil_mode", 0) != 0;
  const bool include_pad = !max && attrs.get_int("count_include_pad", 0) != 0;
  // oneDNN would count the padding that ceil_mode adds at the end; ONNX does not.
  if (include_pad && ceil) return *why = "count_include_pad with ceil_mode is left to the next backend", false;
  u.pool_algorithm = max ? "max" : include_pad ? "avg_include" : "avg_exclude";
  return true;
}

// ReduceMean over every spatial dim of a 4-D or 5-D tensor (torchvision's
// x.mean([2, 3]) before a classifier, ShuffleNet's): a global average pool,
// so that the convolution before it keeps its blocked result instead of
// handing a Halide reduction a plain copy.
bool match_spatial_mean(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) return *why = "ReduceMean needs its data", false;
  const int x = n.inputs[0];
  if (*why = ctx.dtype_reason({x, n.outputs[0]}); !why->empty()) return false;
  // Not 3-D: a mean over the last dim of [B, S, E] is a transformer's
  // RMSNorm, which fuses with its neighbours on the host.
  const int rank = ctx.rank_of(x);
  if (rank < 4 || rank > 5) return *why = "only a mean over the spatial dims of a 4-D or 5-D tensor", false;
  AttrReader attrs(n.attrs, n.where());
  std::optional<std::vector<int64_t>> axes;
  if (n.opset >= 18) {
    if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      axes = ints_value(ctx.value(n.inputs[1]), ctx.store());
      if (!axes) return *why = "ReduceMean's axes are not known at compile time", false;
    }
  } else {
    axes = attrs.get_ints_opt("axes");
  }
  if (!axes) return *why = "ReduceMean over every dim is left to the next backend", false;
  std::vector<int64_t> sorted;
  for (int64_t a : *axes) sorted.push_back(a < 0 ? a + rank : a);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> spatial;
  for (int d = 2; d < rank; ++d) spatial.push_back(d);
  if (sorted != spatial) return *why = "only a ReduceMean over every spatial dim (a global average pool)", false;
  u.anchor = OnednnUnit::Pool;
  u.anchor_inputs = {x};
  u.global_pool = true;
  u.pool_algorithm = "avg_exclude";
  return true;
}

// ---- epilogue ------------------------------------------------------------

// Gelu as PyTorch exports it: x * 0.5 * (1 + erf(x / sqrt(2))), with the
// scalings in either place and the operands of Add and Mul in either order.
// `x` feeds two nodes of the pattern; every other value in it has one reader.
bool match_gelu(const MatchContext &ctx, int x, std::vector<int> *nodes, int *out) {
  const auto &cs = ctx.consumers(x);
  if (cs.size() != 2 || ctx.is_graph_output(x)) return false;
  const int rank = ctx.rank_of(x);
  auto other_input = [&](const Node &n, int v) { return n.inputs[0] == v ? n.inputs[1] : n.inputs[0]; };
  auto is_binary = [&](int node, const char *op, int v) {
    const Node &n = ctx.node(node);
    return n.op_type == op && MatchContext::is_default_domain(n) && n.inputs.size() == 2 && n.outputs.size() == 1 &&
           (n.inputs[0] == v || n.inputs[1] == v) && n.inputs[0] != n.inputs[1];
  };
  // Mul of v by a scalar near `want` (either order), or Div by 1/want (v first).
  auto is_scaling = [&](int node, int v, double want) {
    double s = 0;
    const Node &n = ctx.node(node);
    if (is_binary(node, "Mul", v)) return scalar_operand(ctx, other_input(n, v), rank, &s) && near(s, want);
    if (is_binary(node, "Div", v) && n.inputs[0] == v)
      return scalar_operand(ctx, n.inputs[1], rank, &s) && s != 0 && near(1 / s, want);
    return false;
  };
  const double inv_sqrt2 = 0.70710678118654752;
  for (int k = 0; k < 2; ++k) {
    const int scaled = cs[k], rest = cs[1 - k];
    if (!is_scaling(scaled, x, inv_sqrt2)) continue;
    std::vector<int> found{scaled};
    const int erf = ctx.sole_consumer(ctx.node(scaled).outputs[0]);
    if (erf < 0 || ctx.node(erf).op_type != "Erf" || !MatchContext::is_default_domain(ctx.node(erf))) continue;
    found.push_back(erf);
    const int erf_out = ctx.node(erf).outputs[0];
    const int plus = ctx.sole_consumer(erf_out);
    double one = 0;
    if (plus < 0 || !is_binary(plus, "Add", erf_out) ||
        !scalar_operand(ctx, other_input(ctx.node(plus), erf_out), rank, &one) || !near(one, 1.0))
      continue;
    found.push_back(plus);
    int factor = ctx.node(plus).outputs[0];  // 1 + erf(x / sqrt 2), maybe halved next
    bool halved = false;
    if (int h = ctx.sole_consumer(factor); h >= 0 && is_scaling(h, factor, 0.5)) {
      found.push_back(h);
      factor = ctx.node(h).outputs[0];
      halved = true;
    }
    int left = x;  // x, maybe halved first
    if (!halved && is_scaling(rest, x, 0.5)) {
      found.push_back(rest);
      left = ctx.node(rest).outputs[0];
      halved = true;
    }
    const int prod = left == x ? rest : ctx.sole_consumer(left);
    if (prod < 0 || !is_binary(prod, "Mul", left) || other_input(ctx.node(prod), left) != factor ||
        ctx.sole_consumer(factor) != prod)
      continue;
    found.push_back(prod);
    int result = ctx.node(prod).outputs[0];
    if (!halved) {
      const int h = ctx.sole_consumer(result);
      if (h < 0 || !is_scaling(h, result, 0.5)) continue;
      found.push_back(h);
      result = ctx.node(h).outputs[0];
    }
    if (!ctx.is_f32(result) || ctx.rank_of(result) != rank) continue;
    nodes->insert(nodes->end(), found.begin(), found.end());
    *out = result;
    return true;
  }
  return false;
}

// SiLU as PyTorch exports it: Mul(x, Sigmoid(x)), the Mul's operands in
// either order. `x` feeds both nodes; the Sigmoid's result only the Mul.
bool match_silu(const MatchContext &ctx, int x, std::vector<int> *nodes, int *out) {
  const auto &cs = ctx.consumers(x);
  if (cs.size() != 2 || ctx.is_graph_output(x)) return false;
  for (int k = 0; k < 2; ++k) {
    const int sig = cs[k], prod = cs[1 - k];
    const Node &s = ctx.node(sig);
    if (!ctx.is_op(sig, "Sigmoid") || s.inputs.size() != 1 || s.inputs[0] != x || s.outputs.size() != 1) continue;
    const int gate = s.outputs[0];
    const Node &m = ctx.node(prod);
    if (ctx.sole_consumer(gate) != prod || !ctx.is_op(prod, "Mul") || m.inputs.size() != 2 || m.outputs.size() != 1)
      continue;
    if (!((m.inputs[0] == x && m.inputs[1] == gate) || (m.inputs[0] == gate && m.inputs[1] == x))) continue;
    const int result = m.outputs[0];
    if (!ctx.is_f32(result) || ctx.rank_of(result) != ctx.rank_of(x)) continue;
    nodes->insert(nodes->end(), {sig, prod});
    *out = result;
    return true;
  }
  return false;
}

// a * value + b, composed with a Linear right before it: one post-op, one rounding.
void append_linear(OnednnUnit &u, double a, double b) {
  if (!u.post_ops.empty() && u.post_ops.back().kind == OnednnPostOp::Linear) {
    OnednnPostOp &prev = u.post_ops.back();
    prev.b = a * prev.b + b;
    prev.a = a * prev.a;
    return;
  }
  u.post_ops.push_back({OnednnPostOp::Linear, a, b});
}

// Add, Sub, Mul or Div of the running value `cur` by a scalar constant (a
// Linear post-op) or by a tensor that broadcasts into it and is not computed
// from the anchor (a binary post-op).
bool match_arith(const MatchContext &ctx, int anchor, int cur, const Node &n, OnednnUnit &u) {
  if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return false;
  const bool cur_first = n.inputs[0] == cur;
  const int other = cur_first ? n.inputs[1] : n.inputs[0];
  const std::string &op = n.op_type;
  double s = 0;
  if (scalar_operand(ctx, other, ctx.rank_of(cur), &s)) {
    if (op == "Add")
      append_linear(u, 1, s);
    else if (op == "Sub")
      append_linear(u, cur_first ? 1.0 : -1.0, cur_first ? -s : s);
    else if (op == "Mul")
      append_linear(u, s, 0);
    else if (op == "Div" && cur_first && s != 0)
      append_linear(u, 1 / s, 0);
    else
      return false;
    return true;
  }
  if (!ctx.is_f32(other) || !ctx.shape_of(other) ||
      !ctx.broadcasts_into(*ctx.shape_of(other), *ctx.shape_of(cur)) || ctx.depends_on(other, anchor))
    return false;
  // Two chains can meet here (a residual block's two convolutions). The one
  // whose running value is computed last takes the node, so both rules agree
  // on who owns it and neither unit is refused for overlapping the other.
  if (ctx.value(other).producer > ctx.value(cur).producer) return false;
  if (op == "Add")
    u.post_ops.push_back({OnednnPostOp::Add});
  else if (op == "Mul")
    u.post_ops.push_back({OnednnPostOp::Mul});
  else if (op == "Sub" && cur_first)
    u.post_ops.push_back({OnednnPostOp::Sub});
  else if (op == "Div" && cur_first)
    u.post_ops.push_back({OnednnPostOp::Div});
  else
    return false;
  u.operands.push_back(other);
  return true;
}

// Inference BatchNormalization over dim 1 with constant parameters.
bool match_batchnorm(const MatchContext &ctx, int cur, const Node &n, OnednnUnit &u) {
  if (n.opset < 9 || n.inputs.size() != 5 || n.inputs[0] != cur || ctx.rank_of(cur) < 2) return false;
  AttrReader attrs(n.attrs, n.where());
  if (attrs.get_int("training_mode", 0) != 0) return false;
  const Dim channels = (*ctx.shape_of(cur))[1];
  for (int i = 1; i < 5; ++i) {
    const int p = n.inputs[i];
    if (!ctx.is_constant(p) || !ctx.is_f32(p) || ctx.rank_of(p) != 1 ||
        !ctx.store().same_dim((*ctx.shape_of(p))[0], channels))
      return false;
  }
  u.post_ops.push_back({OnednnPostOp::BatchNorm, attrs.get_float("epsilon", 1e-5f), 0});
  for (int i = 1; i < 5; ++i) u.operands.push_back(n.inputs[i]);
  return true;
}

// Clip's bounds: attributes before opset 11, optional scalar constant inputs after.
bool clip_bounds(const MatchContext &ctx, int cur, const Node &n, double *lo, double *hi) {
  *lo = -std::numeric_limits<double>::infinity();
  *hi = std::numeric_limits<double>::infinity();
  if (n.opset < 11) {
    AttrReader attrs(n.attrs, n.where());
    *lo = attrs.get_float("min", -std::numeric_limits<float>::infinity());
    *hi = attrs.get_float("max", std::numeric_limits<float>::infinity());
    return true;
  }
  const int rank = ctx.rank_of(cur);
  if (n.inputs.size() > 1 && n.inputs[1] >= 0 && !scalar_operand(ctx, n.inputs[1], rank, lo)) return false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !scalar_operand(ctx, n.inputs[2], rank, hi)) return false;
  return true;
}

// Appends the epilogue node that reads `cur`, if it is one the backend fuses.
bool match_epilogue_node(const MatchContext &ctx, int anchor, int cur, int node, OnednnUnit &u) {
  const Node &n = ctx.node(node);
  if (!MatchContext::is_default_domain(n) || !ctx.only_first_output_read(n) || !ctx.is_f32(n.outputs[0])) return false;
  if (n.inputs.empty() || n.inputs[0] < 0) return false;
  const std::string &op = n.op_type;
  if (op == "Relu" || op == "LeakyRelu") {
    const double slope = op == "Relu" ? 0.0 : AttrReader(n.attrs, n.where()).get_float("alpha", 0.01f);
    // oneDNN 2.6's JIT post-ops give every eltwise post-op of one algorithm
    // the parameters of one of them. The glue rewrites repeated Linear and Clip
    // as binary ops; a second Relu with another slope ends the chain instead.
    for (const auto &p : u.post_ops)
      if (p.kind == OnednnPostOp::Relu && p.a != slope) return false;
    u.post_ops.push_back({OnednnPostOp::Relu, slope, 0});
  } else if (op == "Sigmoid") {
    u.post_ops.push_back({OnednnPostOp::Sigmoid});
  } else if (op == "Tanh") {
    u.post_ops.push_back({OnednnPostOp::Tanh});
  } else if (op == "HardSwish") {  // opset 14's: x * HardSigmoid(x) with alpha 1/6, beta 1/2
    u.post_ops.push_back({OnednnPostOp::HardSwish});
  } else if (op == "HardSigmoid") {  // max(0, min(1, alpha * x + beta)); oneDNN 2.6 has no eltwise for it
    AttrReader attrs(n.attrs, n.where());
    append_linear(u, attrs.get_float("alpha", 0.2f), attrs.get_float("beta", 0.5f));
    u.post_ops.push_back({OnednnPostOp::Clip, 0, 1});
  } else if (op == "Gelu") {  // opset 20's; its tanh form stays on the host
    if (AttrReader(n.attrs, n.where()).get_string("approximate", "none") != "none") return false;
    u.post_ops.push_back({OnednnPostOp::GeluErf});
  } else if (op == "Clip") {
    double lo = 0, hi = 0;
    if (n.inputs[0] != cur || !clip_bounds(ctx, cur, n, &lo, &hi)) return false;
    u.post_ops.push_back({OnednnPostOp::Clip, lo, hi});
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    return match_arith(ctx, anchor, cur, n, u);
  } else if (op == "BatchNormalization") {
    return match_batchnorm(ctx, cur, n, u);
  } else {
    return false;
  }
  return true;
}

void match_epilogue(const MatchContext &ctx, int anchor, OnednnUnit &u) {
  int cur = u.output;
  while (static_cast<int>(u.post_ops.size()) < kOnednnMaxPostOps) {
    // The activations whose input has two readers in the pattern.
    std::vector<int> act_nodes;
    int act_out = -1;
    if (match_gelu(ctx, cur, &act_nodes, &act_out)) {
      u.post_ops.push_back({OnednnPostOp::GeluErf});
    } else if (match_silu(ctx, cur, &act_nodes, &act_out)) {
      u.post_ops.push_back({OnednnPostOp::Swish, 1, 0});
    }
    if (act_out >= 0) {
      u.nodes.insert(u.nodes.end(), act_nodes.begin(), act_nodes.end());
      cur = act_out;
      continue;
    }
    const int next = ctx.sole_consumer(cur);
    if (next < 0) break;
    const OnednnUnit before = u;
    if (!match_epilogue_node(ctx, anchor, cur, next, u)) {
      u = before;
      break;
    }
    u.nodes.push_back(next);
    cur = ctx.node(next).outputs[0];
    // An epilogue never changes the shape: broadcasting into `cur` was checked.
  }
  u.output = cur;
  std::sort(u.nodes.begin() + 1, u.nodes.end());
}

// A channel Concat's BatchNormalization, and the Relu after it: DenseNet's
// dense layers read the Concat of every earlier result through both. The
// copy applies them as it writes (onednn_concat.cc), where a host kernel made
// a second pass over the result (5.2 of densenet121's 35 ms per run).
void match_concat_epilogue(const MatchContext &ctx, int anchor, OnednnUnit &u) {
  for (const char *op : {"BatchNormalization", "Relu"}) {
    const int next = ctx.sole_consumer(u.output);
    const OnednnUnit before = u;
    if (!ctx.is_op(next, op) || !match_epilogue_node(ctx, anchor, u.output, next, u)) {
      u = before;
      return;
    }
    u.nodes.push_back(next);
    u.output = ctx.node(next).outputs[0];
  }
}

}  // namespace

std::vector<SupportRule> onednn_rules() {
  using Anchor = std::function<bool(const MatchContext &, int, OnednnUnit &, std::string *)>;
  // A rule for one anchor op: the anchor's match, then its epilogue (none
  // after a pool, Binary or Gather; a Concat's BatchNormalization and Relu
  // only) and, after a MatMul or a Conv,
  // the views of its result.
  auto rule = [](const char *name, const char *op, Anchor match_anchor) -> SupportRule {
    return {name, op, [match_anchor](const MatchContext &ctx, int node) {
              OnednnUnit u;
              u.nodes = {node};
              std::string why;
              if (!match_anchor(ctx, node, u, &why)) return decline(why);
              if (u.outputs.empty()) u.output = ctx.node(node).outputs[0];  // a Gather names its own
              const bool alone = u.anchor == OnednnUnit::Pool || u.anchor == OnednnUnit::Concat ||
                                 u.anchor == OnednnUnit::Binary || u.anchor == OnednnUnit::Gather ||
                                 u.anchor == OnednnUnit::Recurrence;
              if (!alone) match_epilogue(ctx, node, u);
              if (u.anchor == OnednnUnit::Concat) {
                match_concat_epilogue(ctx, node, u);
                if (!channel_concat_pays(ctx, u, &why)) return decline(why);
              }
              if (u.anchor == OnednnUnit::MatMul) match_output_view(ctx, u);
              if (u.anchor == OnednnUnit::Conv) match_conv_output_view(ctx, u);
              std::sort(u.nodes.begin() + 1, u.nodes.end());
              return take_record(std::move(u));
            }};
  };
  auto pool = [](PoolKind kind) {
    return [kind](const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
      return match_pool(ctx, node, kind, u, why);
    };
  };
  return {rule("onednn.matmul+epilogue", "MatMul", match_matmul),
          rule("onednn.matmul+epilogue", "Gemm", match_gemm),
          rule("onednn.conv+epilogue", "Conv", match_conv),
          rule("onednn.pool", "MaxPool", pool({true, false})),
          rule("onednn.pool", "AveragePool", pool({false, false})),
          rule("onednn.pool", "GlobalMaxPool", pool({true, true})),
          rule("onednn.pool", "GlobalAveragePool", pool({false, true})),
          rule("onednn.pool", "ReduceMean", match_spatial_mean),
          rule("onednn.channel_gather", "Concat", match_channel_shuffle),
          rule("onednn.channel_gather", "Reshape", match_channel_shuffle),
          rule("onednn.concat", "Concat", match_channel_concat),
          rule("onednn.binary", "Mul", match_channel_scale),
          rule("onednn.binary", "Add", match_channel_scale),
          rule("onednn.recurrence", "LSTM", match_recurrence),
          rule("onednn.recurrence", "GRU", match_recurrence),
          rule("onednn.recurrence", "RNN", match_recurrence)};
}

}  // namespace disco
