// The oneDNN backend's rules for the ops between convolutions that keep a
// network in oneDNN's layout: a channel Concat (onednn_concat.cc) and a
// tensor scaled by a per-channel value, a squeeze-excitation's Mul
// (onednn_binary.cc). Each is taken only where convolutions and poolings
// alone read its result; elsewhere it stays with the next backend, where it
// fuses with its neighbours (ShuffleNet's Concat with the Reshape and
// Transpose of its channel shuffle) and oneDNN's layout gains nothing.
#include "frontend/attributes.h"
#include "targets/onednn/onednn_rules.h"

namespace disco {

namespace {

// True when every reader of `y` is a Conv, a pooling or another such op, and y is no graph output.
bool read_only_by_spatial_ops(const MatchContext &ctx, int y, std::string *why) {
  if (ctx.is_graph_output(y) || ctx.consumers(y).empty()) return *why = "its result is a graph output", false;
  for (int c : ctx.consumers(y)) {
    const std::string &op = ctx.node(c).op_type;
    const bool spatial = op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
                         op == "GlobalMaxPool" || op == "Concat";
    if (!MatchContext::is_default_domain(ctx.node(c)) || !spatial)
      return *why = "its result is read by a " + op + ", not only by convolutions and poolings", false;
  }
  return true;
}

}  // namespace

bool match_channel_concat(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.inputs.empty() || n.outputs.size() != 1) return *why = "Concat needs inputs and one output", false;
  std::vector<int> values = n.inputs;
  values.push_back(n.outputs[0]);
  for (int v : n.inputs)
    if (v < 0) return *why = "Concat has an omitted input", false;
  if (*why = ctx.dtype_reason(values); !why->empty()) return false;
  const int rank = ctx.rank_of(n.outputs[0]);
  if (rank < 4 || rank > 5) return *why = "only Concat of 4-D and 5-D tensors (2-D and 3-D maps)", false;
  int64_t axis = AttrReader(n.attrs, n.where()).get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != 1) return *why = "only Concat along the channels (axis 1)", false;
  for (int v : n.inputs)
    if (ctx.rank_of(v) != rank) return *why = "Concat's inputs differ in rank", false;
  if (!read_only_by_spatial_ops(ctx, n.outputs[0], why)) return false;
  u.anchor = OnednnUnit::Concat;
  u.anchor_inputs = n.inputs;
  return true;
}

bool match_channel_scale(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return *why = n.op_type + " needs two inputs", false;
  const int y = n.outputs[0];
  if (n.inputs[0] < 0 || n.inputs[1] < 0) return *why = n.op_type + " has an omitted input", false;
  if (*why = ctx.dtype_reason({n.inputs[0], n.inputs[1], y}); !why->empty()) return false;
  const int rank = ctx.rank_of(y);
  if (rank < 4 || rank > 5 || ctx.rank_of(n.inputs[0]) != rank || ctx.rank_of(n.inputs[1]) != rank)
    return *why = "only " + n.op_type + " of two 4-D or 5-D tensors", false;
  // X: the full tensor; S: per channel ([N or 1, C, 1, 1]), on either side.
  const Shape &out = *ctx.shape_of(y);
  auto full = [&](int v) {
    const Shape &s = *ctx.shape_of(v);
    for (int d = 0; d < rank; ++d)
      if (!ctx.store().same_dim(s[d], out[d])) return false;
    return true;
  };
  auto per_channel = [&](int v) {
    const Shape &s = *ctx.shape_of(v);
    if (!(s[0].is_const(1) || ctx.store().same_dim(s[0], out[0])) || !ctx.store().same_dim(s[1], out[1])) return false;
    for (int d = 2; d < rank; ++d)
      if (!s[d].is_const(1)) return false;
    return true;
  };
  const int a = n.inputs[0], b = n.inputs[1];
  int x = -1, s = -1;
  if (full(a) && per_channel(b)) x = a, s = b;
  else if (full(b) && per_channel(a)) x = b, s = a;
  if (x < 0 || x == s) return *why = n.op_type + " is not of a tensor and a per-channel value", false;
  // S computed from X, as a squeeze-excitation's is: never a post-op of the
  // op that makes X (match_arith), so no two units claim this node.
  const int made_by = ctx.value(x).producer;
  if (made_by < 0 || !ctx.depends_on(s, made_by)) return *why = "the per-channel value is not computed from X", false;
  if (!read_only_by_spatial_ops(ctx, y, why)) return false;
  u.anchor = OnednnUnit::Binary;
  u.binary_algorithm = n.op_type == "Mul" ? "mul" : "add";
  u.anchor_inputs = {x, s};
  return true;
}

}  // namespace disco
