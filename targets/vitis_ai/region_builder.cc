#include "targets/vitis_ai/region_builder.h"

#include <algorithm>

#include "frontend/attributes.h"
#include "frontend/errors.h"

namespace disco::vitis_ai {
namespace {

using Ints = std::vector<int64_t>;

Ints window_geom(const Node &n, bool conv) {
  const AttrReader a(n.attrs, n.where());
  const bool valid = a.get_string("auto_pad", "NOTSET") == "VALID";
  Ints g;
  if (!conv) {
    const Ints k = a.get_ints("kernel_shape");
    g.insert(g.end(), k.begin(), k.end());
  }
  const Ints s = a.get_ints_opt("strides").value_or(Ints{1, 1});
  const Ints p = valid ? Ints{0, 0, 0, 0} : a.get_ints_opt("pads").value_or(Ints{0, 0, 0, 0});
  g.insert(g.end(), s.begin(), s.end());
  g.insert(g.end(), p.begin(), p.end());
  if (conv) {
    const Ints d = a.get_ints_opt("dilations").value_or(Ints{1, 1});
    g.insert(g.end(), d.begin(), d.end());
    g.push_back(a.get_int("group", 1));
  }
  return g;
}

ConstView view_of(const Graph &g, int vid) {
  if (vid < 0) return {};
  const TensorData &t = *g.value(vid).constant;
  return {t.as<float>(), t.shape};
}

}  // namespace

std::optional<BuiltRegion> build_region(const Graph &g, const Region &region,
                                        const Calibration &calib, std::string *why) {
  BuiltRegion out;
  QProgram &p = out.program;
  std::map<int, int> slot_of;
  auto new_slot = [&](int vid, int fix) {
    p.fix.push_back(fix);
    out.slot_values.push_back(vid);
    return slot_of[vid] = static_cast<int>(p.fix.size()) - 1;
  };
  auto calibrated_fix = [&](int vid, int *fix) {
    auto it = calib.values.find(vid);
    if (it == calib.values.end() || it->second.empty()) {
      *why = "no calibration data reaches '" + g.value(vid).name + "' (the float reference cannot compute it)";
      return false;
    }
    *fix = choose_fix(it->second);
    return true;
  };
  for (int vid : region.inputs) {
    int fix = 0;
    if (!calibrated_fix(vid, &fix)) return std::nullopt;
    new_slot(vid, fix);
  }
  p.num_inputs = static_cast<int>(region.inputs.size());
  std::map<int, int> const_index;
  auto constant = [&](int vid) {
    if (vid < 0) return -1;
    if (auto it = const_index.find(vid); it != const_index.end()) return it->second;
    out.const_values.push_back(vid);
    return const_index[vid] = p.num_inputs + static_cast<int>(out.const_values.size()) - 1;
  };
  for (const Unit &unit : region.units) {
    const VitisUnit *u = &unit.payload_as<VitisUnit>();
    const Node &n = g.nodes[unit.nodes.front()];
    QOp op;
    op.kind = u->kind;
    op.act = u->act;
    for (int node : unit.nodes) op.label += (op.label.empty() ? "" : "+") + g.nodes[node].name;
    std::vector<int> data_inputs = {n.inputs[0]};
    if (u->kind == UnitKind::Add) data_inputs = {n.inputs[0], n.inputs[1]};
    if (u->kind == UnitKind::Concat) data_inputs = n.inputs;
    for (int vid : data_inputs) {
      auto it = slot_of.find(vid);
      if (it == slot_of.end()) {
        *why = "'" + g.value(vid).name + "' reaches " + op.label + " from outside the region's inputs";
        return std::nullopt;
      }
      op.in.push_back(it->second);
    }
    const int in_fix = p.fix[op.in[0]];
    int out_fix = in_fix;
    const AttrReader a(n.attrs, n.where());
    switch (u->kind) {
      case UnitKind::Conv: {
        op.geom = window_geom(n, true);
        op.consts = {constant(n.inputs[1]), constant(n.inputs.size() > 2 ? n.inputs[2] : -1)};
        if (u->batchnorm >= 0) {
          const Node &bn = g.nodes[u->batchnorm];
          for (int i = 1; i < 5; ++i) op.consts.push_back(constant(bn.inputs[i]));
          op.eps = AttrReader(bn.attrs, bn.where()).get_float("epsilon", 1e-5f);
        }
        break;
      }
      case UnitKind::Gemm:
        if (n.op_type == "Gemm") {
          op.geom = {a.get_int("transB", 0)};
          op.alpha = a.get_float("alpha", 1.0f), op.beta = a.get_float("beta", 1.0f);
        } else {
          op.geom = {0};
        }
        op.consts = {constant(n.inputs[1]), constant(n.op_type == "Gemm" && n.inputs.size() > 2 ? n.inputs[2] : -1)};
        break;
      case UnitKind::MaxPool:
      case UnitKind::AvgPool: op.geom = window_geom(n, false); break;
      case UnitKind::Concat: op.geom = {1}; break;
      case UnitKind::Resize: {
        const TensorData &s = *g.value(n.inputs[2]).constant;
        op.geom = {static_cast<int64_t>(s.float_at(2)), static_cast<int64_t>(s.float_at(3))};
        break;
      }
      default: break;
    }
    // Max pooling, resize and flatten move values without arithmetic: they
    // keep their input's fix position, as on the DPU.
    if (u->kind != UnitKind::MaxPool && u->kind != UnitKind::Resize && u->kind != UnitKind::Flatten) {
      if (!calibrated_fix(u->output, &out_fix)) return std::nullopt;
    }
    if (u->kind == UnitKind::Conv || u->kind == UnitKind::Gemm) {
      const FoldedWeights f = fold_op_weights(op, [&](int idx) { return view_of(g, out.const_values[idx - p.num_inputs]); });
      op.wfix = choose_fix(f.w);
      op.bfix = choose_bias_fix(f.b, in_fix + op.wfix);
    }
    op.out = new_slot(u->output, out_fix);
    p.ops.push_back(std::move(op));
  }
  for (int vid : region.outputs) {
    auto it = slot_of.find(vid);
    if (it == slot_of.end()) {
      *why = "region output '" + g.value(vid).name + "' is not a unit's output";
      return std::nullopt;
    }
    p.outputs.push_back(it->second);
  }
  return out;
}

}  // namespace disco::vitis_ai
