#include "targets/onednn/onednn_backend.h"

#include <algorithm>
#include <map>
#include <set>

#include "lowering/recurrent_projection.h"
#include "runtime/extern_kernel.h"
#include "runtime/memory_plan.h"
#include "targets/onednn/ab_switch.h"
#include "targets/onednn/onednn_layout.h"
#include "targets/onednn/onednn_rules.h"
#include "targets/partitioner.h"
#include "targets/plan_builder.h"

namespace disco {

namespace {

std::string unit_label(const Graph &g, const OnednnUnit &u) {
  std::string s;
  for (int n : u.nodes) s += (s.empty() ? "" : " ") + g.nodes[n].name;
  return s;
}

// Units whose steps read and write tensors in oneDNN's layout (onednn_layout.h).
bool spatial(const OnednnUnit &u) {
  return u.anchor == OnednnUnit::Conv || u.anchor == OnednnUnit::Pool || u.anchor == OnednnUnit::Concat ||
         u.anchor == OnednnUnit::Binary || u.anchor == OnednnUnit::Gather;
}

// The unit's results: a Gather's several, else its one.
std::vector<int> unit_outputs(const OnednnUnit &u) { return u.outputs.empty() ? std::vector<int>{u.output} : u.outputs; }

// A Concat's result is held blocked only when each input fills whole blocks
// of it (constant channel counts, multiples of the block). The block is the
// running machine's (channel_block()), so this holds for every block it may be.
bool concat_fills_blocks(const MatchContext &ctx, const OnednnUnit &u) {
  const Shape *out = ctx.shape_of(u.output);
  if (!out || !(*out)[1].is_const()) return true;  // not blocked
  for (int64_t block : kChannelBlocks) {
    if ((*out)[1].as_const() % block != 0) continue;  // not blocked with this block
    for (int v : u.anchor_inputs) {
      const Shape *s = ctx.shape_of(v);
      if (!s || !(*s)[1].is_const() || (*s)[1].as_const() % block != 0) return false;
    }
  }
  return true;
}

// Values this region's steps hand each other channels last (onednn_layout.h):
// the result of a spatial unit, not a graph output, that every reader takes
// as a Conv's, Pool's or Binary's X, a Concat's or Gather's input or a Conv's
// full-rank post-op operand (or, having one position, as a Binary's S).
std::set<int> channels_last_values(const MatchContext &ctx, const std::vector<const OnednnUnit *> &units) {
  auto rank = [&](int vid) { return ctx.value(vid).shape ? static_cast<int>(ctx.value(vid).shape->size()) : -1; };
  std::map<int, const OnednnUnit *> unit_of;  // node -> its unit
  for (const OnednnUnit *u : units)
    for (int n : u->nodes) unit_of[n] = u;
  std::set<int> values;
  for (const OnednnUnit *up : units) {
    const OnednnUnit &u = *up;
    for (int v : unit_outputs(u)) {
      if (!spatial(u) || rank(v) < 3 || rank(v) > 5 || ctx.is_graph_output(v) || ctx.consumers(v).empty()) continue;
      if (!u.out_perm.empty()) continue;  // a Conv's result transposed: its own layout already
      if (u.anchor == OnednnUnit::Concat && !concat_fills_blocks(ctx, u)) continue;
      bool ok = true;
      for (int c : ctx.consumers(v)) {
        auto it = unit_of.find(c);
        const OnednnUnit *r = it == unit_of.end() ? nullptr : it->second;
        if (!r || !spatial(*r)) {
          ok = false;
          break;
        }
        if (r->anchor == OnednnUnit::Concat || r->anchor == OnednnUnit::Binary || r->anchor == OnednnUnit::Gather)
          continue;  // X, or S of one position
        for (size_t i = 1; i < r->anchor_inputs.size(); ++i) ok = ok && r->anchor_inputs[i] != v;  // W, bias
        const bool as_x = c == r->nodes.front() && r->anchor_inputs.front() == v;
        const bool as_operand = c != r->nodes.front() && r->anchor == OnednnUnit::Conv && rank(r->output) == rank(v) &&
                                std::count(r->operands.begin(), r->operands.end(), v) > 0;
        ok = ok && (as_x || as_operand);
      }
      if (ok) values.insert(v);
    }
  }
  return values;
}

// A post-op that keeps a zero-padded channel finite (0 in, finite out), with
// no operand or a residual of the result's own dims: the producer of a padded
// tensor computes its padding's channels too (zero weights, zero bias), and
// the convolutions that read it multiply them by zero weights, so they may
// hold anything but Inf or NaN. Per-channel operands (a Mul by a
// squeeze-excitation's scale, a Div) are left out: their padding is not
// disco's.
bool keeps_padding_finite(const OnednnPostOp &op) {
  switch (op.kind) {
    case OnednnPostOp::Relu:
    case OnednnPostOp::GeluErf:
    case OnednnPostOp::Sigmoid:
    case OnednnPostOp::Tanh:
    case OnednnPostOp::Swish:
    case OnednnPostOp::HardSwish:
    case OnednnPostOp::Clip:
    case OnednnPostOp::Linear:
    case OnednnPostOp::Add:
      return true;
    default:
      return false;
  }
}

// Values of channels_last_values held padded instead (onednn_layout.h): a
// 2-D convolution's result of a constant channel count that is not a multiple
// of the largest block, which only other 2-D convolutions read, as X or as a
// residual of their own dims. Grouped convolutions other than depthwise ones
// are left out on both sides: 2.6 has no blocked JIT kernel for groups of a
// few channels (regnet_y_400mf's 8), and their layouts stay as they were.
std::set<int> padded_values(const MatchContext &ctx, const std::vector<const OnednnUnit *> &units,
                            const std::set<int> &channels_last) {
  if (switched_off("DISCO_PADDED_HELD")) return {};  // A/B runs (ab_switch.h)
  std::map<int, const OnednnUnit *> unit_of, producer;
  for (const OnednnUnit *u : units) {
    for (int n : u->nodes) unit_of[n] = u;
    producer[u->output] = u;
  }
  auto channels = [&](int v) -> int64_t {
    const Shape *s = ctx.shape_of(v);
    return s && s->size() == 4 && (*s)[1].is_const() ? (*s)[1].as_const() : -1;
  };
  // Plain or depthwise: for a conv reading `in` channels.
  auto ungrouped = [](const OnednnUnit &u, int64_t in) { return u.group == 1 || u.group == in; };
  std::set<int> values;
  for (int v : channels_last) {
    const int64_t c = channels(v);
    auto p = producer.find(v);
    if (c <= 1 || c % kMaxChannelBlock == 0 || p == producer.end()) continue;
    const OnednnUnit &u = *p->second;
    if (u.anchor != OnednnUnit::Conv || !u.out_perm.empty() || u.strides.size() != 2) continue;
    if (!ungrouped(u, channels(u.anchor_inputs.front()))) continue;
    bool ok = std::all_of(u.post_ops.begin(), u.post_ops.end(), keeps_padding_finite);
    for (int o : u.operands) ok = ok && ctx.shape_of(o) && ctx.shape_of(v) && *ctx.shape_of(o) == *ctx.shape_of(v);
    for (int n : ctx.consumers(v)) {
      const OnednnUnit *r = unit_of.count(n) ? unit_of[n] : nullptr;
      ok = ok && r && r->anchor == OnednnUnit::Conv && r->strides.size() == 2 &&
           (r->anchor_inputs.front() != v || ungrouped(*r, c));
    }
    if (ok) values.insert(v);
  }
  // Each kept only where no copy is left at its ends: the producer's X and
  // each reader's result blocked too (held channels last with whole blocks,
  // or padded). A padded value beside an nhwc one costs the copy it saved
  // (regnet_y_400mf's: 54 copies per run instead of 20).
  auto blocks = [&](int w) {
    const int64_t c = channels(w);
    return values.count(w) || (channels_last.count(w) && c > 0 && c % kMaxChannelBlock == 0);
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = values.begin(); it != values.end();) {
      const OnednnUnit &u = *producer[*it];
      bool ok = blocks(u.anchor_inputs.front());
      for (int n : ctx.consumers(*it)) ok = ok && blocks(unit_of[n]->output);
      if (ok) {
        ++it;
      } else {
        it = values.erase(it);
        changed = true;
      }
    }
  }
  return values;
}

// The step input (an index into the step's inputs) whose bytes the unit's
// result may take where nothing later reads it (memory_plan.h's
// kOutputReusesInput), or -1. A conv or product starts its result from the
// operand of its first Add that is held as the result is (the sum post-op,
// or the panel product's epilogue reading each element before writing it):
// ResNet-50 copied 22 MB of residuals into results per run, 2.4% of its time
// on one thread. A per-channel Binary (a squeeze-excitation's scaling) reads
// X element by element as it writes the result, so its result lands in
// bytes still in the caches.
int reused_step_input(const OnednnUnit &u, const std::set<int> &channels_last, const std::set<int> &padded,
                      const Graph &g) {
  const std::optional<Shape> &out = g.values[u.output].shape;
  auto held_as_result = [&](int v) {
    return out && g.values[v].shape == out && channels_last.count(v) == channels_last.count(u.output) &&
           padded.count(v) == padded.count(u.output);
  };
  if (u.anchor == OnednnUnit::Binary) return u.post_ops.empty() && held_as_result(u.anchor_inputs.at(0)) ? 0 : -1;
  if (u.anchor != OnednnUnit::Conv && u.anchor != OnednnUnit::MatMul && u.anchor != OnednnUnit::Gemm) return -1;
  size_t i = 0;
  for (const OnednnPostOp &op : u.post_ops) {
    if (op.num_operands() == 0) continue;
    if (op.kind == OnednnPostOp::Add && i < u.operands.size() && held_as_result(u.operands[i]))
      return static_cast<int>(u.anchor_inputs.size() + i);
    i += static_cast<size_t>(op.num_operands());
  }
  return -1;
}

// One extern step per unit. Inputs: the anchor's operands, then the operands
// of the binary post-ops in list order. Output: the unit's last value (its
// intermediates each have one reader, inside the unit); a Gather's results.
PlanStep unit_step(const OnednnUnit &u, const Region &region, const std::set<int> &channels_last,
                   const std::set<int> &padded, PlanBuilder &b) {
  PlanStep step;
  step.label = unit_label(b.graph(), u);
  for (const std::string &sym : region.symbols) step.symbols.push_back(Dim::symbol(sym));
  step.params["post_ops"] = post_ops_to_string(u.post_ops);
  if (spatial(u)) {
    // Step inputs kept channels last: X (0), a Concat's inputs or a Binary's
    // X and S and, for a Conv, post-op operands (3 on).
    std::vector<int64_t> inputs;
    const bool all_x =
        u.anchor == OnednnUnit::Concat || u.anchor == OnednnUnit::Binary || u.anchor == OnednnUnit::Gather;
    const size_t xs = all_x ? u.anchor_inputs.size() : 1;
    for (size_t i = 0; i < xs; ++i)
      if (channels_last.count(u.anchor_inputs[i])) inputs.push_back(static_cast<int64_t>(i));
    for (size_t i = 0; i < u.operands.size(); ++i)
      if (channels_last.count(u.operands[i])) inputs.push_back(3 + static_cast<int64_t>(i));
    step.params["channels_last_inputs"] = join_ints(inputs);
    step.params["channels_last_output"] = channels_last.count(u.output) ? "1" : "0";
    if (u.anchor == OnednnUnit::Conv) {  // those of them held padded
      std::vector<int64_t> padded_inputs;
      if (padded.count(u.anchor_inputs.front())) padded_inputs.push_back(0);
      for (size_t i = 0; i < u.operands.size(); ++i)
        if (padded.count(u.operands[i])) padded_inputs.push_back(3 + static_cast<int64_t>(i));
      step.params["padded_inputs"] = join_ints(padded_inputs);
      step.params["padded_output"] = padded.count(u.output) ? "1" : "0";
    }
  }
  if (u.anchor == OnednnUnit::Gather) {
    // Per result: which are kept channels last, and its channels' sources
    // as one list: the channel count, then (input, channel) per channel.
    std::vector<int64_t> kept, map;
    for (size_t o = 0; o < u.outputs.size(); ++o) {
      if (channels_last.count(u.outputs[o])) kept.push_back(static_cast<int64_t>(o));
      map.push_back(static_cast<int64_t>(u.channel_sources[o].size()));
      for (const OnednnUnit::Source &s : u.channel_sources[o]) {
        map.push_back(s.input);
        map.push_back(s.channel);
      }
    }
    step.params["channels_last_outputs"] = join_ints(kept);
    step.params["channel_map"] = join_ints(map);
  }
  if (u.anchor == OnednnUnit::Recurrence) {
    step.extern_call = "onednn.recurrence";
    step.params["cell"] = u.recurrence_cell;
    step.params["directions"] = std::to_string(u.recurrence_directions);
    step.params["reverse"] = u.recurrence_reverse ? "1" : "0";
    step.params["hidden"] = std::to_string(u.recurrence_hidden);
    step.params["layout"] = std::to_string(u.recurrence_layout);
    step.params["results"] = join_ints(u.recurrence_results);
  } else if (u.anchor == OnednnUnit::Gather) {
    step.extern_call = "onednn.channel_gather";
  } else if (u.anchor == OnednnUnit::Concat) {
    step.extern_call = "onednn.concat";
  } else if (u.anchor == OnednnUnit::Binary) {
    step.extern_call = "onednn.binary";
    step.params["algorithm"] = u.binary_algorithm;
  } else if (u.anchor == OnednnUnit::Pool) {
    step.extern_call = "onednn.pool";
    step.params["algorithm"] = u.pool_algorithm;
    step.params["global"] = u.global_pool ? "1" : "0";
    if (!u.global_pool) {
      step.params["kernel_shape"] = join_ints(u.kernel_shape);
      step.params["strides"] = join_ints(u.strides);
      step.params["dilations"] = join_ints(u.dilations);
      step.params["pads"] = join_ints(u.pads);
      step.params["auto_pad"] = u.auto_pad;
    }
  } else if (u.anchor == OnednnUnit::Conv) {
    step.extern_call = "onednn.conv";
    step.params["strides"] = join_ints(u.strides);
    step.params["dilations"] = join_ints(u.dilations);
    step.params["pads"] = join_ints(u.pads);
    step.params["group"] = std::to_string(u.group);
    step.params["auto_pad"] = u.auto_pad;
    if (!u.out_perm.empty()) step.params["out_perm"] = join_ints(u.out_perm);
  } else {
    step.extern_call = "onednn.matmul";
    step.params["trans_a"] = u.trans_a ? "1" : "0";
    step.params["trans_b"] = u.trans_b ? "1" : "0";
    auto add_view = [&](const std::string &x, const OperandView &v) {
      if (!v.present()) return;
      step.params[x + "_perm"] = join_ints(v.perm);
      step.params[x + "_reshape"] = join_tokens(v.reshape);
    };
    add_view("a", u.a_view);
    add_view("b", u.b_view);
    if (!u.out_perm.empty()) {
      step.params["out_perm"] = join_ints(u.out_perm);
      step.params["out_reshaped"] = u.out_reshaped ? "1" : "0";
    }
  }
  for (int vid : u.anchor_inputs) step.inputs.push_back(vid < 0 ? -1 : b.input_buffer(vid));
  if (const int r = reused_step_input(u, channels_last, padded, b.graph()); r >= 0)
    step.params[kOutputReusesInput] = std::to_string(r);
  for (int vid : u.operands) step.inputs.push_back(b.input_buffer(vid));
  for (int vid : unit_outputs(u)) {
    step.outputs.push_back(b.output_buffer(vid));
    if (padded.count(vid)) b.pad_channels(step.outputs.back(), kMaxChannelBlock);
  }
  return step;
}

class OnednnBackend : public Backend {
 public:
  std::string name() const override { return "onednn"; }
  std::vector<SupportRule> rules() const override { return onednn_rules(); }
  int min_region_nodes() const override { return 1; }
  // The input projections of RNN/GRU/LSTM nodes as MatMuls, which the matmul
  // rule takes (DISCO_RECURRENT_MATMUL=0: the recurrent kernel's own, for A/B
  // runs with --no-cache).
  int prepare_graph(Graph &g) const override {
    return switched_off("DISCO_RECURRENT_MATMUL") ? 0 : split_recurrent_projections(g);
  }
  // The runtime glue (onednn_kernels.h) and what it links: oneDNN, its OpenMP threads, C++.
  std::optional<AotGlue> aot_glue() const override {
    AotGlue g;
    g.install_function = "disco_install_onednn_glue";
    for (const char *a : {DISCO_ONEDNN_GLUE_ARCHIVES}) g.archives.push_back(a);
    g.link_flags = {"-ldnnl", "-lgomp", "-lstdc++"};
    g.par_for_function = "disco_openmp_do_par_for";  // runtime/openmp_par_for.h, as disco run does
    g.par_for_threads_function = "disco_openmp_set_par_for_threads";
    return g;
  }

  Declined compile(const Region &region, PlanBuilder &b) const override {
    // A unit's epilogue may read the result of a later-anchored unit (a
    // residual branch), so steps go in the order of each unit's last node.
    std::vector<const OnednnUnit *> units;
    for (const Unit &unit : region.units) units.push_back(&unit.payload_as<OnednnUnit>());
    auto last = [](const OnednnUnit *u) { return *std::max_element(u->nodes.begin(), u->nodes.end()); };
    std::stable_sort(units.begin(), units.end(), [&](auto *x, auto *y) { return last(x) < last(y); });
    const MatchContext ctx(b.graph(), b.store());
    const std::set<int> channels_last = channels_last_values(ctx, units);
    const std::set<int> padded = padded_values(ctx, units, channels_last);
    add_unit_steps(units, b, "onednn step ",
                   [&](const OnednnUnit *u) { return unit_step(*u, region, channels_last, padded, b); });
    return {};
  }
};

}  // namespace

std::unique_ptr<Backend> make_onednn_backend() { return std::make_unique<OnednnBackend>(); }

}  // namespace disco
