// The oneDNN backend's Concat rule: the channel Concat of convolutional
// networks whose result only convolutions and poolings read
// (onednn_concat.cc runs it). Other Concats stay with the next backend:
// there they fuse with their neighbours (ShuffleNet's Concat with the
// Reshape and Transpose of its channel shuffle), and oneDNN's layout gains
// nothing.
#include "frontend/attributes.h"
#include "targets/onednn/onednn_rules.h"

namespace disco {

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
  const int y = n.outputs[0];
  if (ctx.is_graph_output(y) || ctx.consumers(y).empty()) return *why = "the Concat's result is a graph output", false;
  for (int c : ctx.consumers(y)) {
    const std::string &op = ctx.node(c).op_type;
    const bool spatial = op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
                         op == "GlobalMaxPool" || op == "Concat";
    if (!MatchContext::is_default_domain(ctx.node(c)) || !spatial)
      return *why = "the Concat's result is read by a " + op + ", not only by convolutions and poolings", false;
  }
  u.anchor = OnednnUnit::Concat;
  u.anchor_inputs = n.inputs;
  return true;
}

}  // namespace disco
