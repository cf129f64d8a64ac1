// The .xmodel files the vitis_ai backend writes: each deserializes with
// libxir, holds the quantized graph vai_c_xir takes (data and const ops each
// followed by a fix op with bit_width 8, the DPU ops each followed by their
// activation and fix op), with the shapes disco inferred (NHWC) and the fix
// positions of the region's program; and `xir dump_txt` reads it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "frontend/graph_builder.h"
#include "runtime/extern_kernel.h"
#include "driver/compile_model.h"
#include "frontend/errors.h"
#include "targets/vitis_ai/region_program.h"
#include "targets/vitis_ai/xir_emit.h"
#include "tests/support/model_files.h"
#include "tests/support/tensors.h"
#if DISCO_VITIS_AI_XIR
#include <xir/graph/graph.hpp>
#include <xir/op/op.hpp>
#include <xir/tensor/tensor.hpp>
#endif

namespace disco {
namespace {

#if DISCO_VITIS_AI_XIR

using Ints = std::vector<int32_t>;

// Weights from testing::ramp, scaled.
TensorData weights(std::vector<int64_t> shape, float scale, int offset) {
  const int64_t n = testing::numel(shape);
  return testing::f32(std::move(shape), testing::ramp(n, scale / 6, offset));  // in [-scale, scale]
}

struct Emitted {
  CompiledModel model;
  std::string xmodel;  // path
  vitis_ai::QProgram program;
};

Emitted compile_for_vitis(Graph g, const std::string &name) {
  CompileOptions o;
  o.backends = {"vitis_ai", "host"};
  o.use_cache = false;
  Emitted e{compile_graph(std::move(g), name, "", o), "", {}};
  for (const auto &s : e.model.plan.steps)
    if (s.extern_call == "vitis_ai.region") {
      EXPECT_TRUE(e.xmodel.empty()) << "one region expected";
      e.xmodel = e.model.dir + "/" + param_str(s, "xmodel");
      e.program = vitis_ai::parse_program(param_str(s, "program"), s.label);
    }
  return e;
}

std::map<std::string, int> op_counts(const xir::Graph &g) {
  std::map<std::string, int> n;
  for (const xir::Op *op : g.get_ops()) n[op->get_type()] += 1;
  return n;
}

// `g` holds exactly want[type] ops of each listed type (others may be there too).
void expect_op_counts(const xir::Graph &g, const std::map<std::string, int> &want) {
  auto n = op_counts(g);
  for (const auto &[type, count] : want) EXPECT_EQ(n[type], count) << type;
}

Ints shape_of(const xir::Op *op) { return op->get_output_tensor()->get_shape(); }

// Every data and const op feeds fix ops only; every DPU op feeds its
// activation or a fix op; every activation feeds a fix op; every fix op is
// 8-bit, signed, DPU_ROUND.
void expect_quantized_form(const xir::Graph &g) {
  const std::set<std::string> compute = {"conv2d", "depthwise-conv2d", "maxpool2d", "avgpool2d", "add",
                                         "concat", "resize", "flatten", "inner-product"};
  const std::set<std::string> acts = {"relu", "relu6", "leaky-relu"};
  for (const xir::Op *op : g.get_ops()) {
    const std::string t = op->get_type();
    if (t == "fix") {
      EXPECT_EQ(op->get_attr<int32_t>("bit_width"), 8) << op->get_name();
      EXPECT_EQ(op->get_attr<std::string>("round_mode"), "DPU_ROUND") << op->get_name();
      EXPECT_TRUE(op->get_attr<bool>("if_signed")) << op->get_name();
      continue;
    }
    EXPECT_TRUE(t == "data" || t == "const" || compute.count(t) || acts.count(t)) << "unexpected op type " << t;
    EXPECT_FALSE(op->get_fanout_ops().empty()) << op->get_name() << " feeds nothing";
    for (const xir::Op *next : op->get_fanout_ops()) {
      const bool ok = next->get_type() == "fix" || (compute.count(t) && acts.count(next->get_type()));
      EXPECT_TRUE(ok) << op->get_name() << " (" << t << ") feeds " << next->get_name() << " (" << next->get_type() << ")";
    }
  }
}

// The fix op of slot s is named "s<s>_<value>_fix" and carries the program's fix position.
void expect_program_fix_points(const xir::Graph &g, const vitis_ai::QProgram &p) {
  int checked = 0;
  for (const xir::Op *op : g.get_ops()) {
    const std::string n = op->get_name();
    if (op->get_type() != "fix" || n[0] != 's') continue;
    const int slot = std::atoi(n.c_str() + 1);
    ASSERT_LT(slot, static_cast<int>(p.fix.size())) << n;
    EXPECT_EQ(op->get_attr<int32_t>("fix_point"), p.fix[slot]) << n;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(p.fix.size())) << "one fix op per slot";
}

TEST(VitisAiXir, ConvnetBnRegionIsAValidQuantizedXirGraph) {
  const std::string path = testing::find_model("convnet_bn");
  if (path.empty()) GTEST_SKIP() << "convnet_bn.onnx is not in ../shared/models";
  Emitted e = compile_for_vitis(load_model_source(path).graph, "convnet_bn");
  ASSERT_FALSE(e.xmodel.empty()) << "no region wrote an .xmodel";
  EXPECT_EQ(std::filesystem::path(e.xmodel).filename().string(), "convnet_bn.r0.xmodel");
  std::unique_ptr<xir::Graph> g = xir::Graph::deserialize(e.xmodel);
  expect_op_counts(*g, {{"data", 1}, {"conv2d", 9}, {"relu", 7}, {"add", 3}, {"maxpool2d", 1}, {"avgpool2d", 1},
                        {"flatten", 1}, {"inner-product", 1}});
  auto n = op_counts(*g);
  EXPECT_EQ(n["const"], 2 * 10) << "weights and bias of 9 convs and the fc";
  EXPECT_EQ(n["fix"], n["const"] + static_cast<int>(e.program.fix.size()));
  expect_quantized_form(*g);
  expect_program_fix_points(*g, e.program);
  // Shapes: the calibration shape (1x3x32x32) in NHWC, through to the logits.
  for (const xir::Op *op : g->get_ops()) {
    if (op->get_type() == "data") {
      EXPECT_EQ(shape_of(op), (Ints{1, 32, 32, 3}));
    }
    if (op->get_name() == "op0_conv_weights") {
      EXPECT_EQ(shape_of(op), (Ints{32, 3, 3, 3})) << "OHWI";
    }
    if (op->get_type() == "inner-product") {
      EXPECT_EQ(shape_of(op), (Ints{1, 10}));
    }
    if (op->get_type() == "avgpool2d") {
      EXPECT_TRUE(op->get_attr<bool>("global"));
      EXPECT_EQ(shape_of(op), (Ints{1, 1, 1, 128}));
    }
    if (op->get_type() == "maxpool2d") {
      EXPECT_EQ(shape_of(op), (Ints{1, 16, 16, 32}));
    }
  }
}

// Depthwise conv with LeakyRelu, concat, padded average pooling, nearest
// upsampling and a 1x1 conv with Relu6, as one region.
Graph mixed_graph() {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n"), 4, 8, 8});
  auto dw = b.op("Conv", {x, b.constant("dw_w", weights({4, 1, 3, 3}, 0.2f, 1)), b.constant("dw_b", weights({4}, 0.1f, 2))},
                 {{"group", attr_int(4)}, {"pads", attr_ints({1, 1, 1, 1})}});
  auto leaky = b.op("LeakyRelu", {dw}, {{"alpha", attr_float(0.1f)}});
  auto cat = b.op("Concat", {leaky, x}, {{"axis", attr_int(1)}});
  auto pool = b.op("AveragePool", {cat}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}});
  TensorData scales(DType::F32, {4});
  const float scale[4] = {1, 1, 2, 3};  // H x2, W x3
  for (int i = 0; i < 4; ++i) scales.mutable_as<float>()[i] = scale[i];
  auto up = b.op("Resize", {pool, "", b.constant("scales", scales)},
                 {{"mode", attr_string("nearest")}, {"coordinate_transformation_mode", attr_string("asymmetric")},
                  {"nearest_mode", attr_string("floor")}});
  auto c = b.op("Conv", {up, b.constant("w", weights({6, 8, 1, 1}, 0.3f, 3))});
  b.output(b.op("Clip", {c, b.constant("lo", TensorData::scalar_f32(0)), b.constant("hi", TensorData::scalar_f32(6))}));
  return b.build();
}

TEST(VitisAiXir, DepthwiseConcatPoolResizeAndActivationsBecomeXirOps) {
  Emitted e = compile_for_vitis(mixed_graph(), "mixed");
  ASSERT_FALSE(e.xmodel.empty()) << "no region wrote an .xmodel";
  std::unique_ptr<xir::Graph> g = xir::Graph::deserialize(e.xmodel);
  expect_op_counts(*g, {{"depthwise-conv2d", 1}, {"leaky-relu", 1}, {"concat", 1}, {"avgpool2d", 1}, {"resize", 1},
                        {"conv2d", 1}, {"relu6", 1}});
  expect_quantized_form(*g);
  expect_program_fix_points(*g, e.program);
  for (const xir::Op *op : g->get_ops()) {
    if (op->get_type() == "depthwise-conv2d") {
      EXPECT_EQ(shape_of(op->get_input_op("weights")), (Ints{1, 3, 3, 4}));
    }
    if (op->get_type() == "leaky-relu") {
      EXPECT_FLOAT_EQ(op->get_attr<float>("alpha"), 26.0f / 256);
    }
    if (op->get_type() == "concat") {
      EXPECT_EQ(shape_of(op), (Ints{1, 8, 8, 8}));
    }
    if (op->get_type() == "resize") {
      EXPECT_EQ(shape_of(op), (Ints{1, 8, 12, 8}));
    }
    if (op->get_type() == "relu6") {
      EXPECT_EQ(shape_of(op), (Ints{1, 8, 12, 6}));
    }
  }
}

// Invalid regions are caught before libxir sees them (libxir would abort):
// validate_for_xir names the fault and emit_xmodel throws disco::Error.
TEST(VitisAiXir, InvalidRegionsAreRejectedBeforeLibxirIsCalled) {
  vitis_ai::QProgram p;
  p.num_inputs = 1;
  p.fix = {5, 4};
  vitis_ai::QOp conv;
  conv.kind = vitis_ai::UnitKind::Conv;
  conv.label = "Conv_0";
  conv.in = {0};
  conv.out = 1;
  conv.consts = {1, -1};
  conv.geom = {1, 1, 0, 0, 0, 0, 1, 1, 1};
  p.ops = {conv};
  std::vector<float> w(8 * 4 * 3 * 3, 0.25f);
  vitis_ai::XirRegion r;
  r.name = "bad";
  r.program = &p;
  r.slot_names = {"x", "y"};
  r.constant = [&](int) { return vitis_ai::ConstView{w.data(), {8, 4, 3, 3}}; };
  const std::string file = ::testing::TempDir() + "/bad.xmodel";

  r.shapes = {{1, 3, 6, 6}, {1, 8, 4, 4}};  // X has 3 channels, W expects 4
  EXPECT_NE(vitis_ai::validate_for_xir(r).find("do not fit"), std::string::npos) << vitis_ai::validate_for_xir(r);
  EXPECT_THROW(vitis_ai::emit_xmodel(r, file), Error);

  r.shapes = {{1, 4, 6, 6}, {1, 8, 5, 5}};  // a 3x3 valid conv of 6x6 gives 4x4
  EXPECT_NE(vitis_ai::validate_for_xir(r).find("do not fit"), std::string::npos);
  EXPECT_THROW(vitis_ai::emit_xmodel(r, file), Error);

  r.shapes = {{}, {1, 8, 4, 4}};  // no static shape
  EXPECT_NE(vitis_ai::validate_for_xir(r).find("no static shape"), std::string::npos);

  r.shapes = {{1, 4, 6, 6}, {1, 8, 4, 4}};
  p.ops[0].in = {1};  // reads the slot it writes
  EXPECT_NE(vitis_ai::validate_for_xir(r).find("unwritten slot"), std::string::npos);

  p.ops[0].in = {0};
  EXPECT_EQ(vitis_ai::validate_for_xir(r), "") << "the fixed-up region is valid";
  vitis_ai::emit_xmodel(r, file);
  EXPECT_EQ(op_counts(*xir::Graph::deserialize(file))["conv2d"], 1);
}

TEST(VitisAiXir, XirDumpTxtReadsTheEmittedModel) {
  if (std::system("command -v xir > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "the xir tool is not installed (apt-get install libxir-utils)";
  Emitted e = compile_for_vitis(mixed_graph(), "dumped");
  ASSERT_FALSE(e.xmodel.empty());
  const std::string txt = e.model.dir + "/dump.txt";
  ASSERT_EQ(std::system(("xir dump_txt '" + e.xmodel + "' '" + txt + "' > /dev/null 2>&1").c_str()), 0);
  std::ifstream f(txt);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("op_type: \"depthwise-conv2d\""), std::string::npos);
  EXPECT_NE(ss.str().find("key: \"fix_point\""), std::string::npos);
}

#else

TEST(VitisAiXir, SkippedWithoutLibxir) {
  GTEST_SKIP() << "disco was configured without libxir/libvart (apt-get install libxir-dev libvart-dev libunilog-dev)";
}

#endif

}  // namespace
}  // namespace disco
