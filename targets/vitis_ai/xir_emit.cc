// XIR codegen with libxir (see xir_emit.h). The graph is the quantized float
// form that vai_c_xir compiles: every tensor passes through a `fix` op, and
// const ops hold the dequantized weights (q * 2^-fix), so the compiler's
// fix ops reproduce our int8 values exactly. Layout is NHWC; conv weights
// are OHWI ([M, kh, kw, C]), depthwise weights [1, kh, kw, C].
#include "targets/vitis_ai/xir_emit.h"

#include <cstring>
#include <set>
#include <sstream>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <xir/attrs/attrs.hpp>
#include <xir/graph/graph.hpp>
#include <xir/graph/subgraph.hpp>
#include <xir/op/op.hpp>
#include <xir/tensor/tensor.hpp>

#include "frontend/errors.h"
#include "frontend/file_util.h"
#include "targets/vitis_ai/region_builder.h"

namespace disco::vitis_ai {
namespace {

using Ints = std::vector<int64_t>;
using I32s = std::vector<int32_t>;

// NCHW -> NHWC for feature maps; other ranks unchanged.
Ints nhwc(const Ints &s) { return s.size() == 4 ? Ints{s[0], s[2], s[3], s[1]} : s; }

I32s i32s(const Ints &v) { return I32s(v.begin(), v.end()); }

std::string shape_text(const Ints &s) {
  std::string t;
  for (int64_t d : s) t += (t.empty() ? "" : "x") + std::to_string(d);
  return "[" + t + "]";
}

// What each op's output shape must be (ONNX order), from its inputs' shapes.
std::string check_op(const QOp &op, const std::vector<Ints> &shapes, const QProgram &p) {
  const Ints &x = shapes[op.in[0]], &y = shapes[op.out];
  const auto &g = op.geom;
  auto rank_is = [](const Ints &s, size_t r) { return s.size() == r; };
  switch (op.kind) {
    case UnitKind::Conv: {
      if (!rank_is(x, 4) || !rank_is(y, 4) || g.size() != 9) return "conv needs 4-D tensors and 9 geometry values";
      break;
    }
    case UnitKind::Gemm:
      if (!rank_is(x, 2) || !rank_is(y, 2)) return "gemm needs 2-D tensors";
      break;
    case UnitKind::MaxPool:
    case UnitKind::AvgPool:
      if (!rank_is(x, 4) || g.size() != 8) return "pool needs a 4-D input and 8 geometry values";
      if (y != Ints{x[0], x[1], conv_out_extent(x[2], g[4] + g[6], g[0], g[2], 1),
                    conv_out_extent(x[3], g[5] + g[7], g[1], g[3], 1)})
        return "pool output " + shape_text(y) + " does not follow from input " + shape_text(x);
      break;
    case UnitKind::GlobalAvgPool:
      if (!rank_is(x, 4) || y != Ints{x[0], x[1], 1, 1}) return "global pool output is not [N, C, 1, 1]";
      break;
    case UnitKind::Add:
      if (shapes[op.in.at(1)] != x || y != x) return "add of different shapes";
      if (op.act.kind != ActKind::None && op.act.kind != ActKind::Relu) return "add fuses Relu only";
      break;
    case UnitKind::Concat: {
      if (!rank_is(x, 4) || g != Ints{1}) return "concat must join 4-D tensors along channels";
      int64_t c = 0;
      for (int s : op.in) {
        const Ints &t = shapes[s];
        if (!rank_is(t, 4) || t[0] != x[0] || t[2] != x[2] || t[3] != x[3]) return "concat inputs differ in N, H or W";
        c += t[1];
      }
      if (y != Ints{x[0], c, x[2], x[3]}) return "concat output has the wrong shape";
      break;
    }
    case UnitKind::Resize:
      if (!rank_is(x, 4) || g.size() != 2 || y != Ints{x[0], x[1], x[2] * g[0], x[3] * g[1]})
        return "resize output does not follow from its scales";
      break;
    case UnitKind::Flatten:
      if (!rank_is(x, 4) || x[2] != 1 || x[3] != 1 || y != Ints{x[0], x[1]}) return "flatten of a map that is not 1x1";
      break;
  }
  for (int s : op.in)
    if (p.fix[s] < -32 || p.fix[s] > 32) return "fix position out of range";
  return "";
}

class XirBuilder {
 public:
  explicit XirBuilder(const XirRegion &r) : r_(r), p_(*r.program), g_(xir::Graph::create(r.name)) {}

  std::unique_ptr<xir::Graph> build() {
    for (int s = 0; s < p_.num_inputs; ++s) {
      auto attrs = xir::Attrs::create();
      attrs->set_attr<I32s>("shape", i32s(nhwc(r_.shapes[s])));
      attrs->set_attr<std::string>("data_type", "FLOAT32");
      xir::Op *data = g_->add_op(name(s, "data"), "data", std::move(attrs), {});
      data_ops_.push_back(data);
      slot_op_[s] = fix(data, p_.fix[s], name(s, "fix"));
    }
    for (size_t i = 0; i < p_.ops.size(); ++i) emit(p_.ops[i], static_cast<int>(i));
    check_shapes();
    partition();
    return std::move(g_);
  }

 private:
  std::string name(int slot, const std::string &what) const {
    return "s" + std::to_string(slot) + "_" + r_.slot_names.at(slot) + "_" + what;
  }

  xir::Op *fix(xir::Op *in, int fix_point, const std::string &op_name) {
    auto attrs = xir::Attrs::create();
    attrs->set_attr<int32_t>("fix_point", fix_point);
    attrs->set_attr<int32_t>("bit_width", 8);
    attrs->set_attr<std::string>("round_mode", "DPU_ROUND");
    attrs->set_attr<bool>("if_signed", true);
    xir::Op *f = g_->add_op(op_name, "fix", std::move(attrs), {{"input", {in}}});
    f->get_output_tensor()->set_attr<int32_t>("fix_point", fix_point);
    return f;
  }

  // A const op holding the dequantized int8 values, then its fix op.
  xir::Op *constant(const Int8Tensor &q, const Ints &shape, const std::string &op_name) {
    std::vector<char> bytes(q.data.size() * sizeof(float));
    for (size_t i = 0; i < q.data.size(); ++i) {
      const float v = dequantize_value(q.data[i], q.fix);
      std::memcpy(&bytes[i * sizeof(float)], &v, sizeof v);
    }
    auto attrs = xir::Attrs::create();
    attrs->set_attr<I32s>("shape", i32s(shape));
    attrs->set_attr<std::string>("data_type", "FLOAT32");
    attrs->set_attr<std::vector<char>>("data", bytes);
    xir::Op *c = g_->add_op(op_name, "const", std::move(attrs), {});
    return fix(c, q.fix, op_name + "_fix");
  }

  xir::Op *activation(xir::Op *in, const Activation &act, const std::string &base) {
    if (act.kind == ActKind::None) return in;
    auto attrs = xir::Attrs::create();
    std::string type = "relu";
    if (act.kind == ActKind::Relu6) type = "relu6";
    if (act.kind == ActKind::Leaky) {
      type = "leaky-relu";
      attrs->set_attr<float>("alpha", static_cast<float>(act.leaky_num) / 256.0f);
    }
    return g_->add_op(base + "_" + type, type, std::move(attrs), {{"input", {in}}});
  }

  void emit(const QOp &op, int index) {
    const std::string base = "op" + std::to_string(index) + "_" + unit_kind_name(op.kind);
    const auto &g = op.geom;
    xir::Op *in = slot_op_.at(op.in[0]);
    xir::Op *out = nullptr;
    auto attrs = xir::Attrs::create();
    switch (op.kind) {
      case UnitKind::Conv:
      case UnitKind::Gemm: {
        const FoldedWeights f = fold_op_weights(op, r_.constant);
        const Int8Tensor w = quantize_tensor(f.w.data(), f.shape, op.wfix);
        const Int8Tensor b = quantize_tensor(f.b.data(), {static_cast<int64_t>(f.b.size())}, op.bfix);
        xir::Op *bias = constant(b, b.shape, base + "_bias");
        if (op.kind == UnitKind::Gemm) {
          attrs->set_attr<int32_t>("axis", 1);
          xir::Op *wc = constant(w, w.shape, base + "_weights");
          out = g_->add_op(base, "inner-product", std::move(attrs), {{"input", {in}}, {"weights", {wc}}, {"bias", {bias}}});
          break;
        }
        const bool depthwise = g[8] > 1;
        const int64_t M = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
        // OIHW -> OHWI (conv2d) or [1, kh, kw, C] (depthwise: C = M, one input channel each).
        Int8Tensor t = Int8Tensor::zeros(depthwise ? Ints{1, KH, KW, M} : Ints{M, KH, KW, Cg}, w.fix);
        for (int64_t m = 0; m < M; ++m)
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int8_t v = w.data[((m * Cg + c) * KH + kh) * KW + kw];
                t.data[depthwise ? (kh * KW + kw) * M + m : ((m * KH + kh) * KW + kw) * Cg + c] = v;
              }
        xir::Op *wc = constant(t, t.shape, base + "_weights");
        attrs->set_attr<I32s>("kernel", {static_cast<int32_t>(KW), static_cast<int32_t>(KH)});
        attrs->set_attr<I32s>("stride", {static_cast<int32_t>(g[1]), static_cast<int32_t>(g[0])});
        attrs->set_attr<I32s>("dilation", {static_cast<int32_t>(g[7]), static_cast<int32_t>(g[6])});
        attrs->set_attr<std::string>("pad_mode", "FLOOR");
        attrs->set_attr<I32s>("pad", {static_cast<int32_t>(g[3]), static_cast<int32_t>(g[5]),
                                      static_cast<int32_t>(g[2]), static_cast<int32_t>(g[4])});
        if (!depthwise) attrs->set_attr<int32_t>("group", 1);
        out = g_->add_op(base, depthwise ? "depthwise-conv2d" : "conv2d", std::move(attrs),
                         {{"input", {in}}, {"weights", {wc}}, {"bias", {bias}}});
        break;
      }
      case UnitKind::MaxPool:
      case UnitKind::AvgPool:
      case UnitKind::GlobalAvgPool: {
        const bool global = op.kind == UnitKind::GlobalAvgPool;
        const Ints &x = r_.shapes[op.in[0]];
        const Ints geo = global ? Ints{x[2], x[3], 1, 1, 0, 0, 0, 0} : g;
        attrs->set_attr<I32s>("kernel", {static_cast<int32_t>(geo[1]), static_cast<int32_t>(geo[0])});
        attrs->set_attr<I32s>("stride", {static_cast<int32_t>(geo[3]), static_cast<int32_t>(geo[2])});
        attrs->set_attr<std::string>("pad_mode", "FLOOR");
        attrs->set_attr<I32s>("pad", {static_cast<int32_t>(geo[5]), static_cast<int32_t>(geo[7]),
                                      static_cast<int32_t>(geo[4]), static_cast<int32_t>(geo[6])});
        attrs->set_attr<bool>("global", global);
        if (op.kind != UnitKind::MaxPool) {
          attrs->set_attr<bool>("count_include_pad", true);
          attrs->set_attr<bool>("count_include_invalid", true);
        }
        out = g_->add_op(base, op.kind == UnitKind::MaxPool ? "maxpool2d" : "avgpool2d", std::move(attrs),
                         {{"input", {in}}});
        break;
      }
      case UnitKind::Add:
        out = g_->add_op(base, "add", std::move(attrs), {{"input", {in, slot_op_.at(op.in[1])}}});
        break;
      case UnitKind::Concat: {
        std::vector<xir::Op *> ins;
        for (int s : op.in) ins.push_back(slot_op_.at(s));
        attrs->set_attr<int32_t>("axis", 3);  // channels, in NHWC
        out = g_->add_op(base, "concat", std::move(attrs), {{"input", ins}});
        break;
      }
      case UnitKind::Resize:
        attrs->set_attr<std::string>("mode", "NEAREST");
        attrs->set_attr<std::vector<float>>("scale", {static_cast<float>(g[1]), static_cast<float>(g[0])});
        out = g_->add_op(base, "resize", std::move(attrs), {{"input", {in}}});
        break;
      case UnitKind::Flatten:
        attrs->set_attr<int32_t>("start_axis", 1);
        attrs->set_attr<int32_t>("end_axis", -1);
        out = g_->add_op(base, "flatten", std::move(attrs), {{"input", {in}}});
        break;
    }
    out = activation(out, op.act, base);
    slot_op_[op.out] = fix(out, p_.fix[op.out], name(op.out, "fix"));
  }

  // XIR inferred every shape; they must be the ones disco inferred.
  void check_shapes() const {
    for (const auto &[slot, op] : slot_op_) {
      const std::vector<int32_t> got = op->get_output_tensor()->get_shape();
      const Ints want = nhwc(r_.shapes[slot]);
      DISCO_CHECK(Ints(got.begin(), got.end()) == want, "XIR infers ", shape_text(Ints(got.begin(), got.end())),
                  " for '", r_.slot_names[slot], "', disco ", shape_text(want));
    }
  }

  // The data ops run on the host (device USER); everything else is one DPU subgraph.
  void partition() {
    xir::Subgraph *root = g_->get_root_subgraph();
    root->create_children();
    std::set<xir::Subgraph *> dpu;
    for (xir::Subgraph *child : root->get_children()) {
      bool is_data = false;
      for (const xir::Op *op : child->get_ops()) is_data = is_data || op->get_type() == "data";
      if (is_data)
        child->set_attr<std::string>("device", "USER");
      else
        dpu.insert(child);
    }
    xir::Subgraph *merged = root->merge_children(dpu);
    merged->set_attr<std::string>("device", "DPU");
    // vai_c_xir replaces this with the compiled kernel's runners; before that,
    // VART's reference runner is the only one that could run it.
    merged->set_attr<std::map<std::string, std::string>>(
        "runner", {{"ref", "libvart-cpu-runner.so"}, {"sim", "libvart-sim-runner.so"}, {"run", "libvart-dpu-runner.so"}});
  }

  const XirRegion &r_;
  const QProgram &p_;
  std::unique_ptr<xir::Graph> g_;
  std::vector<xir::Op *> data_ops_;
  std::map<int, xir::Op *> slot_op_;
};

}  // namespace

bool xir_available() { return true; }

std::string validate_for_xir(const XirRegion &r) {
  if (!r.program) return "no program";
  const QProgram &p = *r.program;
  if (r.shapes.size() != p.fix.size() || r.slot_names.size() != p.fix.size()) return "a slot has no shape";
  for (size_t s = 0; s < r.shapes.size(); ++s) {
    if (r.shapes[s].empty()) return "'" + r.slot_names[s] + "' has no static shape (calibration did not reach it)";
    if (r.shapes[s].size() != 4 && r.shapes[s].size() != 2) return "'" + r.slot_names[s] + "' is neither 4-D nor 2-D";
    for (int64_t d : r.shapes[s])
      if (d <= 0 || d > (1 << 24)) return "'" + r.slot_names[s] + "' has dim " + std::to_string(d);
  }
  if (p.ops.empty()) return "an empty region";
  std::vector<bool> written(p.fix.size(), false);
  for (int s = 0; s < p.num_inputs; ++s) written[s] = true;
  for (const QOp &op : p.ops) {
    for (int s : op.in)
      if (s < 0 || s >= static_cast<int>(written.size()) || !written[s]) return op.label + " reads an unwritten slot";
    if (op.out < 0 || op.out >= static_cast<int>(written.size()) || written[op.out]) return op.label + " rewrites a slot";
    written[op.out] = true;
    const std::string why = check_op(op, r.shapes, p);
    if (!why.empty()) return op.label + ": " + why;
    if (op.kind == UnitKind::Conv || op.kind == UnitKind::Gemm) {
      if (!r.constant || op.consts.empty() || op.consts[0] < 0) return op.label + ": no weights";
      const ConstView w = r.constant(op.consts[0]);
      const Ints &x = r.shapes[op.in[0]], &y = r.shapes[op.out];
      if (op.kind == UnitKind::Gemm) {
        const bool tb = !op.geom.empty() && op.geom[0];
        if (w.shape.size() != 2 || x[1] != (tb ? w.shape[1] : w.shape[0]) ||
            y != Ints{x[0], tb ? w.shape[0] : w.shape[1]})
          return op.label + ": weights " + shape_text(w.shape) + " do not fit " + shape_text(x) + " -> " + shape_text(y);
      } else {
        const auto &g = op.geom;
        if (w.shape.size() != 4 || w.shape[1] * g[8] != x[1] ||
            y != Ints{x[0], w.shape[0], conv_out_extent(x[2], g[2] + g[4], w.shape[2], g[0], g[6]),
                      conv_out_extent(x[3], g[3] + g[5], w.shape[3], g[1], g[7])})
          return op.label + ": weights " + shape_text(w.shape) + " do not fit " + shape_text(x) + " -> " + shape_text(y);
        if (g[8] != 1 && !(w.shape[1] == 1 && w.shape[0] == g[8])) return op.label + ": a grouped conv that is not depthwise";
      }
    }
  }
  if (p.fix[p.ops.back().out] < -32 || p.fix[p.ops.back().out] > 32) return "fix position out of range";
  return "";
}

namespace {

// The graph's serialized bytes, the same for the same graph. XIR writes each
// op's attrs as protobuf maps, whose order differs from run to run, and two
// compiles must give the same bytes (AOT libraries install these files beside
// NAME.a). Re-serialized here through XIR's own message type (serial_v2.Graph,
// from the generated pool libxir registers) on a stream of our own that is
// set deterministic: protobuf's process-wide switch is left alone.
std::string deterministic_bytes(const xir::Graph &g) {
  std::string bytes;
  g.serialize_to_string(&bytes);
  namespace pb = google::protobuf;
  const pb::Descriptor *type = pb::DescriptorPool::generated_pool()->FindMessageTypeByName("serial_v2.Graph");
  DISCO_CHECK(type, "vitis_ai: libxir registers no serial_v2.Graph message type");
  std::unique_ptr<pb::Message> m(pb::MessageFactory::generated_factory()->GetPrototype(type)->New());
  DISCO_CHECK(m->ParseFromString(bytes), "vitis_ai: XIR's serialized graph ", g.get_name(), " does not parse back");
  std::string out;
  {
    pb::io::StringOutputStream stream(&out);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    DISCO_CHECK(m->SerializeToCodedStream(&coded), "vitis_ai: cannot serialize graph ", g.get_name());
  }
  return out;
}

}  // namespace

void emit_xmodel(const XirRegion &r, const std::string &path) {
  const std::string why = validate_for_xir(r);
  DISCO_CHECK(why.empty(), "vitis_ai: region ", r.name, " cannot be written as XIR: ", why);
  std::unique_ptr<xir::Graph> g = XirBuilder(r).build();
  write_file(path, deterministic_bytes(*g));
}

}  // namespace disco::vitis_ai
