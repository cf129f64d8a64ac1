// The rule for onednn.recurrence (onednn_recurrence.cc): an RNN, GRU or LSTM
// node that reads its input projections (this backend split them out,
// lowering/recurrent_projection.h), with what recurrent_cell.h computes:
// ONNX's default activations, no clip, sequence_lens or peepholes, LSTM
// without input_forget, GRU with linear_before_reset (PyTorch's and Keras's
// form), a constant float32 R. Other recurrent nodes stay with the host's
// Halide recurrence, which has all of ONNX's forms.
#include <string>
#include <vector>

#include "frontend/attributes.h"
#include "lowering/recurrent_projection.h"
#include "targets/onednn/ab_switch.h"
#include "targets/onednn/onednn_rules.h"

namespace disco {

bool match_recurrence(const MatchContext &ctx, int node, OnednnUnit &u, std::string *why) {
  const Node &n = ctx.node(node);
  const AttrReader attrs(n.attrs, n.where());
  if (!has_projected_recurrent_input(attrs)) return *why = "its input projection is not split out", false;
  if (switched_off("DISCO_RECURRENCE_STEP")) return *why = "DISCO_RECURRENCE_STEP=0", false;
  auto input = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; };
  auto output = [&](size_t i) { return i < n.outputs.size() ? n.outputs[i] : -1; };
  const int x = input(0), r = input(2);
  const bool lstm = n.op_type == "LSTM", gru = n.op_type == "GRU";
  if (x < 0 || r < 0) return *why = "it needs its projections and R", false;
  std::vector<int> values = {x, r, input(3), input(5), input(6), output(0), output(1), output(2)};
  if (*why = ctx.dtype_reason(values); !why->empty()) return false;
  if (!ctx.is_constant(r) || ctx.rank_of(r) != 3) return *why = "R must be a rank-3 constant", false;
  if (input(4) >= 0) return *why = "sequence_lens is left to the next backend", false;
  if (input(7) >= 0) return *why = "peepholes are left to the next backend", false;
  if (attrs.has("clip")) return *why = "clip is left to the next backend", false;
  if (attrs.has("activation_alpha") || attrs.has("activation_beta"))
    return *why = "activation_alpha and activation_beta are left to the next backend", false;
  if (lstm && attrs.get_int("input_forget", 0) != 0) return *why = "input_forget is left to the next backend", false;
  if (gru && attrs.get_int("linear_before_reset", 0) == 0)
    return *why = "a GRU without linear_before_reset is left to the next backend", false;
  const std::string direction = attrs.get_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return *why = "unknown direction '" + direction + "'", false;
  const int64_t layout = attrs.get_int("layout", 0);
  if (layout != 0 && layout != 1) return *why = "unknown layout", false;
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (attrs.has("activations")) {
    const std::vector<std::string> one = lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                         : gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                               : std::vector<std::string>{"Tanh"};
    std::vector<std::string> want;
    for (int64_t d = 0; d < dirs; ++d) want.insert(want.end(), one.begin(), one.end());
    if (attrs.get("activations").strings != want) return *why = "activations other than the defaults", false;
  }
  const std::vector<int64_t> &rs = ctx.value(r).constant->shape;
  const int64_t gates = lstm ? 4 : gru ? 3 : 1, hidden = rs[2];
  if (rs[0] != dirs || rs[1] != gates * hidden || attrs.get_int("hidden_size", hidden) != hidden)
    return *why = "R's shape does not match hidden_size and direction", false;
  u.anchor = OnednnUnit::Recurrence;
  u.anchor_inputs = {x, r, input(3), input(5), lstm ? input(6) : -1};
  for (int i = 0; i < 3; ++i)
    if (output(static_cast<size_t>(i)) >= 0) {
      u.outputs.push_back(output(static_cast<size_t>(i)));
      u.recurrence_results.push_back(i);
    }
  if (u.outputs.empty()) return *why = "none of its outputs is read", false;
  u.output = u.outputs.front();
  u.recurrence_cell = lstm ? "lstm" : gru ? "gru" : "rnn";
  u.recurrence_directions = dirs;
  u.recurrence_reverse = direction == "reverse";
  u.recurrence_hidden = hidden;
  u.recurrence_layout = layout;
  return true;
}

}  // namespace disco
