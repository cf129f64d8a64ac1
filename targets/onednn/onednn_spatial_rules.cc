// The oneDNN backend's rules for the ops between convolutions that keep a
// network in oneDNN's layout: a channel Concat (onednn_concat.cc) and a
// tensor scaled by a per-channel value, a squeeze-excitation's Mul
// (onednn_binary.cc). Each is taken only where convolutions and poolings
// alone read its result; elsewhere it stays with the next backend, where it
// fuses with its neighbours (ShuffleNet's Concat with the Reshape and
// Transpose of its channel shuffle) and oneDNN's layout gains nothing.
//
// ShuffleNet's channel shuffle, with the Concat before it and the Slices
// after it, is one channel gather (onednn_channel_gather.cc) instead: every
// result channel is one input channel, so the whole chain is a copy that
// reads and writes oneDNN's layouts as they are. On the host it was a Halide
// kernel over plain tensors, and two more for the Slices, with reorders
// in and out of the blocked layout around them.
#include <algorithm>
#include <optional>

#include "frontend/attributes.h"
#include "lowering/known_values.h"
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

// The channel range [first, last) that Slice `node` takes of a [N, C, ...]
// tensor, C constant: axes [1] (or its negative), step 1, constant bounds.
bool channel_slice(const MatchContext &ctx, int node, int64_t channels, int64_t *first, int64_t *last) {
  const Node &n = ctx.node(node);
  if (!ctx.is_op(node, "Slice") || n.inputs.size() < 4 || n.outputs.size() != 1) return false;
  const int rank = ctx.rank_of(n.inputs[0]);
  // Constants, or shape values folded to constant dims (ShuffleNet's halves: Shape -> Gather -> Div).
  auto known = [&](int vid) {
    return vid < 0 ? std::nullopt : ints_value(ctx.value(vid), ctx.store());
  };
  const auto starts = known(n.inputs[1]), ends = known(n.inputs[2]), axes = known(n.inputs[3]);
  const bool stepped = n.inputs.size() > 4 && n.inputs[4] >= 0;
  const auto steps = stepped ? known(n.inputs[4]) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
  if (!starts || !ends || !axes || !steps) return false;
  if (starts->size() != 1 || ends->size() != 1 || axes->size() != 1 || steps->size() != 1 || (*steps)[0] != 1)
    return false;
  if ((*axes)[0] != 1 && (*axes)[0] != 1 - rank) return false;
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + channels : i, int64_t{0}, channels); };
  *first = clamp((*starts)[0]);
  *last = std::max(*first, clamp((*ends)[0]));
  return true;
}

}  // namespace

bool match_channel_shuffle(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  std::vector<int> sources;
  int x = -1, reshape = -1;  // the shuffled [N, C, ...] tensor, and the Reshape that splits its channels
  if (ctx.is_op(node, "Concat")) {
    if (n.inputs.empty() || n.outputs.size() != 1) return *why = "Concat needs inputs and one output", false;
    for (int v : n.inputs)
      if (v < 0) return *why = "Concat has an omitted input", false;
    x = n.outputs[0];
    int64_t axis = AttrReader(n.attrs, n.where()).get_int("axis", 0);
    if (axis < 0) axis += ctx.rank_of(x);
    if (axis != 1) return *why = "only Concat along the channels (axis 1)", false;
    sources = n.inputs;
    reshape = ctx.sole_consumer(x);
  } else {
    if (n.inputs.empty() || n.inputs[0] < 0) return *why = "Reshape has no data input", false;
    x = n.inputs[0];
    sources = {x};
    reshape = node;
  }
  std::vector<int> values = sources;
  values.push_back(x);
  if (*why = ctx.dtype_reason(values); !why->empty()) return false;
  const int rank = ctx.rank_of(x);
  if (rank < 3 || rank > 5) return *why = "only channel shuffles of 3-D to 5-D tensors", false;
  const Shape &xs = *ctx.shape_of(x);
  if (!xs[1].is_const()) return *why = "the channel count is not a constant", false;
  const int64_t channels = xs[1].as_const();
  // Where each channel of x comes from: input i's channel c, in concatenation order.
  std::vector<OnednnUnit::Source> of_x;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Shape *s = ctx.shape_of(sources[i]);
    if (!s || static_cast<int>(s->size()) != rank || !(*s)[1].is_const())
      return *why = "a Concat input's channel count is not a constant", false;
    for (int64_t c = 0; c < (*s)[1].as_const(); ++c) of_x.push_back({static_cast<int>(i), c});
  }
  if (static_cast<int64_t>(of_x.size()) != channels) return *why = "the Concat's channels do not add up", false;
  const std::string not_shuffle = "not followed by a channel shuffle (Reshape, Transpose, Reshape)";
  // Reshape to [N, g, C/g, spatial...].
  if (reshape < 0 || !ctx.is_op(reshape, "Reshape") || !ctx.only_first_output_read(ctx.node(reshape)) ||
      ctx.node(reshape).inputs[0] != x)
    return *why = not_shuffle, false;
  const int split = ctx.node(reshape).outputs[0];
  const Shape *ss = ctx.shape_of(split);
  if (!ss || static_cast<int>(ss->size()) != rank + 1 || !(*ss)[1].is_const() || !(*ss)[2].is_const())
    return *why = not_shuffle, false;
  const int64_t groups = (*ss)[1].as_const(), per_group = (*ss)[2].as_const();
  bool same = groups * per_group == channels && ctx.store().same_dim((*ss)[0], xs[0]);
  for (int d = 2; same && d < rank; ++d) same = ctx.store().same_dim((*ss)[d + 1], xs[d]);
  if (!same) return *why = not_shuffle + ": the Reshape does not split the channels", false;
  // Transpose of the two channel dims.
  const int transpose = ctx.sole_consumer(split);
  if (transpose < 0 || !ctx.is_op(transpose, "Transpose") || !ctx.only_first_output_read(ctx.node(transpose)))
    return *why = not_shuffle, false;
  const auto perm = AttrReader(ctx.node(transpose).attrs, ctx.node(transpose).where()).get_ints_opt("perm");
  std::vector<int64_t> want = {0, 2, 1};
  for (int d = 3; d <= rank; ++d) want.push_back(d);
  if (!perm || *perm != want) return *why = not_shuffle + ": the Transpose is not of the two channel dims", false;
  // Reshape back to [N, C, spatial...].
  const int merge = ctx.sole_consumer(ctx.node(transpose).outputs[0]);
  if (merge < 0 || !ctx.is_op(merge, "Reshape") || !ctx.only_first_output_read(ctx.node(merge)))
    return *why = not_shuffle, false;
  const int y = ctx.node(merge).outputs[0];
  const Shape *ys = ctx.shape_of(y);
  same = ys && static_cast<int>(ys->size()) == rank;
  for (int d = 0; same && d < rank; ++d) same = ctx.store().same_dim((*ys)[d], xs[d]);
  if (!same) return *why = not_shuffle + ": the last Reshape does not merge the channels", false;
  // y's channel j * g + k is x's channel k * (C/g) + j.
  std::vector<OnednnUnit::Source> of_y(static_cast<size_t>(channels));
  for (int64_t k = 0; k < groups; ++k)
    for (int64_t j = 0; j < per_group; ++j) of_y[static_cast<size_t>(j * groups + k)] = of_x[static_cast<size_t>(k * per_group + j)];
  u.nodes = {node};
  if (node != reshape) u.nodes.push_back(reshape);
  u.nodes.push_back(transpose);
  u.nodes.push_back(merge);
  // The Slices along the channels, when they are all that read y.
  std::vector<int> slices;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  if (!ctx.is_graph_output(y) && !ctx.consumers(y).empty()) {
    for (int c : ctx.consumers(y)) {
      int64_t first = 0, last = 0;
      if (ctx.node(c).inputs[0] != y || !channel_slice(ctx, c, channels, &first, &last) ||
          !ctx.is_f32(ctx.node(c).outputs[0])) {
        slices.clear();
        break;
      }
      slices.push_back(c);
      ranges.push_back({first, last});
    }
  }
  u.anchor = OnednnUnit::Gather;
  u.anchor_inputs = sources;
  if (slices.empty()) {
    u.outputs = {y};
    u.channel_sources = {of_y};
  } else {
    for (size_t i = 0; i < slices.size(); ++i) {
      u.nodes.push_back(slices[i]);
      u.outputs.push_back(ctx.node(slices[i]).outputs[0]);
      u.channel_sources.emplace_back(of_y.begin() + ranges[i].first, of_y.begin() + ranges[i].second);
    }
  }
  u.output = u.outputs.front();
  return true;
}

constexpr size_t kCopiedConcatInputs = 4;

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
  u.anchor = OnednnUnit::Concat;
  u.anchor_inputs = n.inputs;
  return true;
}

bool channel_concat_pays(const MatchContext &ctx, const OnednnUnit &u, std::string *why) {
  // With an epilogue (DenseNet's BatchNormalization and Relu, applied as the
  // copy writes: match_concat_epilogue), always: its earlier layers' Concats
  // of 2 and 3 taken too, the results they read stay blocked, where a host
  // reader made them plain, reordered into each later Concat.
  if (u.nodes.size() > 1) return true;
  // Read by other ops, a Concat of a few inputs stays with them on the host,
  // whose kernel reads it in place. There each element is a select over
  // every input, each read: from kCopiedConcatInputs inputs on, a copy into
  // a plain result costs less.
  const int y = u.output;
  if (read_only_by_spatial_ops(ctx, y, why)) return true;
  return u.anchor_inputs.size() >= kCopiedConcatInputs && !ctx.is_graph_output(y);
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
