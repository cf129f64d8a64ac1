// The ONNX importer: symbols from dim_param, fresh symbols for unknown dims,
// initializers, external data, opset imports, and clear errors.
#include "frontend/onnx_importer.h"

#include <gtest/gtest.h>

#include <fstream>

#include "frontend/errors.h"
#include "onnx/onnx_pb.h"
#include "tests/support/onnx_protos.h"

namespace disco {
namespace {

using testing::add_initializer;
using testing::add_input;
using testing::add_node;

onnx::ModelProto add_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto *g = m.mutable_graph();
  add_input(g, "a", {"batch", "", "4"});
  add_input(g, "b", {"batch", "7", "4"});
  add_node(g, "Add", {"a", "b"}, {"c"});
  g->add_output()->set_name("c");
  return m;
}

TEST(OnnxImporter, DimParamsBecomeSharedSymbolsAndUnknownDimsFreshOnes) {
  Graph g = load_onnx_bytes(add_model().SerializeAsString(), ".", "add");
  const Shape &a = *g.value(g.inputs[0]).shape, &b = *g.value(g.inputs[1]).shape;
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[0].str(), "batch");
  EXPECT_FALSE(a[1].is_const());
  EXPECT_NE(a[1], a[0]);
  EXPECT_EQ(a[2], Dim(4));
  EXPECT_EQ(g.opsets.at(""), 13);
  EXPECT_EQ(g.nodes[0].opset, 13);
}

TEST(OnnxImporter, ReadsInitializersFromRawAndTypedFields) {
  onnx::ModelProto m = add_model();
  auto *w = add_initializer(m.mutable_graph(), "w", onnx::TensorProto::INT64, {3});
  for (int64_t v : {5, -6, 7}) w->add_int64_data(v);
  auto *r = add_initializer(m.mutable_graph(), "r", onnx::TensorProto::FLOAT, {2});
  float vals[2] = {1.5f, -2.5f};
  r->set_raw_data(std::string(reinterpret_cast<char *>(vals), sizeof vals));
  Graph g = load_onnx_bytes(m.SerializeAsString(), ".", "init");
  const Value &wv = g.value(g.find_value("w"));
  ASSERT_TRUE(wv.constant);
  EXPECT_EQ(wv.constant->to_int64(), (std::vector<int64_t>{5, -6, 7}));
  EXPECT_FLOAT_EQ(static_cast<float>(g.value(g.find_value("r")).constant->float_at(1)), -2.5f);
}

TEST(OnnxImporter, ReadsExternalDataNextToTheModel) {
  char tmpl[] = "/tmp/disco-ext-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  float vals[4] = {0, 1, 2, 3.25f};
  {
    std::ofstream f(dir + "/weights.bin", std::ios::binary);
    f.write("padding!", 8);
    f.write(reinterpret_cast<char *>(vals), sizeof vals);
  }
  onnx::ModelProto m = add_model();
  auto *w = add_initializer(m.mutable_graph(), "w", onnx::TensorProto::FLOAT, {4});
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<const char *, std::string>{"location", "weights.bin"}, {"offset", "8"}, {"length", "16"}}) {
    auto *e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  std::ofstream(dir + "/m.onnx", std::ios::binary) << m.SerializeAsString();
  Graph g = load_onnx_file(dir + "/m.onnx");
  EXPECT_FLOAT_EQ(static_cast<float>(g.value(g.find_value("w")).constant->float_at(3)), 3.25f);
}

TEST(OnnxImporter, MissingExternalFileNamesTheTensor) {
  onnx::ModelProto m = add_model();
  auto *w = add_initializer(m.mutable_graph(), "w", onnx::TensorProto::FLOAT, {4});
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *e = w->add_external_data();
  e->set_key("location");
  e->set_value("nope.bin");
  try {
    load_onnx_bytes(m.SerializeAsString(), "/tmp", "m");
    FAIL();
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("tensor 'w'"), std::string::npos) << err.what();
  }
}

TEST(OnnxImporter, GarbageBytesAreNotAModel) {
  EXPECT_THROW(load_onnx_bytes("\x08\x07garbage\xff\xff", ".", "junk"), Error);
}

TEST(OnnxImporter, ConstantNodesKeepTheirAttributes) {
  onnx::ModelProto m = add_model();
  auto *n = m.mutable_graph()->add_node();
  n->set_op_type("Constant");
  n->add_output("k");
  auto *a = n->add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(3);
  a->add_ints(4);
  Graph g = load_onnx_bytes(m.SerializeAsString(), ".", "const");
  bool found = false;
  for (const auto &node : g.nodes)
    if (node.op_type == "Constant") {
      found = true;
      EXPECT_EQ(node.attrs.at("value_ints").ints, (std::vector<int64_t>{3, 4}));
    }
  EXPECT_TRUE(found);
}

// A Loop whose body takes a sequence (PyTorch exports repeat_interleave so):
// the error names the Loop node, its attribute and the body's input, and
// says what the input is.
TEST(OnnxImporter, ASequenceInASubgraphIsNamedWithItsNode) {
  onnx::ModelProto m = add_model();
  auto *loop = m.mutable_graph()->add_node();
  loop->set_op_type("Loop");
  loop->set_name("/Loop");
  loop->add_output("loop_out");
  auto *body = loop->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  auto *in = body->mutable_g()->add_input();
  in->set_name("18");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  try {
    load_onnx_bytes(m.SerializeAsString(), ".", "loop");
    FAIL() << "a sequence input was accepted";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node '/Loop' (Loop): attribute 'body': subgraph input '18' is a sequence"), std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace disco
