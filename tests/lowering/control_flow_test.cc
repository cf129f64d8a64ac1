// Control flow (lowering/control_flow.h) end to end through a Session: bodies
// that read values of every enclosing graph (If in If, If in a Loop in an If,
// If in a Scan in an If, Loop in a Scan in a Loop), a branch chosen at run
// time by an input flag with one compile for both values, recurrent ops
// inside branches, and branches whose shapes differ. The models are ONNX
// protobufs built here; their inputs, weights and expected outputs come from
// numpy (tests/lowering/control_flow_references.py, run at test time).
#include <gtest/gtest.h>


#include <map>
#include <string>
#include <vector>

#include "driver/session.h"
#include "frontend/onnx_importer.h"
#include "frontend/tensor_compare.h"
#include "onnx/onnx_pb.h"
#include "runtime/npy.h"
#include "tests/support/error_message.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onnx_graph_writer.h"
#include "tests/support/python_references.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

// The numpy inputs and references, written once per test process.
const testing::PythonReferences &references() {
  static const testing::PythonReferences refs("control-flow", "tests/lowering/control_flow_references.py");
  return refs;
}

TensorData npy(const std::string &name) { return references().npy(name); }

TensorData flag(bool v) {
  TensorData t(DType::Bool, {});
  t.mutable_as<uint8_t>()[0] = v ? 1 : 0;
  return t;
}

using G = testing::GraphWriter;
using testing::graph_attr;
using testing::int_attr;

struct Model : testing::ModelWriter {
  Model() : ModelWriter("control_flow", 14) {}
};

CompileOptions no_cache() {
  CompileOptions o;
  o.use_cache = false;
  o.backends = {"host"};
  o.compile_workers = 1;
  return o;
}

void expect_close(const TensorData &got, const TensorData &want, const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  EXPECT_LE(closeness(got, want, 1e-4, 1e-5).worst, 1.0) << what;
}

// The symptom of issue #24: node 'If_25/then/If_69' (If): the body uses
// 'input_data1', which no enclosing graph defines.
Model if_in_if() {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  m.input("mode", onnx::TensorProto::BOOL, {});
  m.input("flag", onnx::TensorProto::BOOL, {});
  m.scalar("two", 2);
  m.node("Mul", {"x", "two"}, {"a"});
  auto *outer = m.node("If", {"mode"}, {"y"}, "If_25");
  G then_b = graph_attr(outer, "then_branch");
  then_b.scalar("one", 1);
  then_b.node("Add", {"a", "one"}, {"input_data1"});
  auto *inner = then_b.node("If", {"flag"}, {"inner_y"}, "If_69");
  G t2 = graph_attr(inner, "then_branch");
  t2.node("Mul", {"input_data1", "x"}, {"t2_out"});
  t2.output("t2_out", onnx::TensorProto::FLOAT);
  G e2 = graph_attr(inner, "else_branch");
  e2.node("Sub", {"input_data1", "a"}, {"e2_out"});
  e2.output("e2_out", onnx::TensorProto::FLOAT);
  then_b.output("inner_y", onnx::TensorProto::FLOAT);
  G else_b = graph_attr(outer, "else_branch");
  else_b.node("Neg", {"x"}, {"neg_x"});
  else_b.output("neg_x", onnx::TensorProto::FLOAT);
  m.output("y", onnx::TensorProto::FLOAT);
  return md;
}

TEST(ControlFlow, AnIfInsideAnIfReadsTheOuterBranchAndTheMainGraphWithOneCompileForEveryFlagAndShape) {
  Session s(if_in_if().graph(), "if_if", "", no_cache());
  for (std::string rows : {"", ".5rows"})
    for (int mode : {0, 1})
      for (int f : {0, 1}) {
        auto out = s.run({npy("if_if.x" + rows), flag(mode), flag(f)});
        expect_close(out.at(0), npy("if_if.ref." + std::to_string(mode) + std::to_string(f) + rows),
                     "mode " + std::to_string(mode) + " flag " + std::to_string(f) + rows);
      }
  EXPECT_TRUE(s.value_inputs().empty()) << "a flag was compiled in";
  EXPECT_EQ(s.compiles(), 1);
}

TEST(ControlFlow, ABranchMayOutputAnEnclosingGraphsValueWithNoNode) {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  m.input("mode", onnx::TensorProto::BOOL, {});
  m.input("flag", onnx::TensorProto::BOOL, {});
  m.scalar("two", 2);
  m.node("Mul", {"x", "two"}, {"a"});
  auto *outer = m.node("If", {"mode"}, {"y"}, "outer_if");
  G tb = graph_attr(outer, "then_branch");
  tb.scalar("one", 1);
  tb.node("Add", {"a", "one"}, {"b1"});
  auto *inner = tb.node("If", {"flag"}, {"inner_y"}, "inner_if");
  graph_attr(inner, "then_branch").output("b1", onnx::TensorProto::FLOAT);
  graph_attr(inner, "else_branch").output("x", onnx::TensorProto::FLOAT);
  tb.output("inner_y", onnx::TensorProto::FLOAT);
  graph_attr(outer, "else_branch").output("a", onnx::TensorProto::FLOAT);
  m.output("y", onnx::TensorProto::FLOAT);
  Session s(md.graph(), "passthrough", "", no_cache());
  for (int mode : {0, 1})
    for (int f : {0, 1}) {
      auto out = s.run({npy("passthrough.x"), flag(mode), flag(f)});
      expect_close(out.at(0), npy("passthrough.ref." + std::to_string(mode) + std::to_string(f)),
                   "mode " + std::to_string(mode) + " flag " + std::to_string(f));
    }
  EXPECT_EQ(s.compiles(), 1);
}

TEST(ControlFlow, AnIfInsideALoopInsideAnIfReadsTheIterationTheCarriedValueAndValuesTwoAndThreeLevelsUp) {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  m.scalar("one", 1);
  m.bool_scalar("yes", true);
  m.node("Add", {"x", "one"}, {"b"});
  auto *outer = m.node("If", {"yes"}, {"final_s", "steps"}, "outer_if");
  G tb = graph_attr(outer, "then_branch");
  tb.scalar("two", 2);
  tb.int_scalar("trips", 3);
  tb.bool_scalar("go", true);
  tb.node("Mul", {"b", "two"}, {"c"});
  auto *loop = tb.node("Loop", {"trips", "go", "x"}, {"loop_s", "loop_steps"}, "loop");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.untyped_input("s");
  body.int_scalar("limit", 2);
  body.node("Less", {"i", "limit"}, {"early"});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  auto *inner = body.node("If", {"early"}, {"r"}, "inner_if");
  G it = graph_attr(inner, "then_branch");
  it.scalar("half", 0.5f);
  it.node("Mul", {"s", "half"}, {"hs"});
  int_attr(it.node("Cast", {"i"}, {"fi"}), "to", onnx::TensorProto::FLOAT);
  it.node("Add", {"hs", "fi"}, {"hsi"});
  it.node("Add", {"hsi", "c"}, {"it_out"});
  it.output("it_out", onnx::TensorProto::FLOAT);
  G ie = graph_attr(inner, "else_branch");
  ie.node("Sub", {"s", "x"}, {"ie_out"});
  ie.output("ie_out", onnx::TensorProto::FLOAT);
  body.node("Identity", {"r"}, {"r_scan"});
  body.output("cond_out", onnx::TensorProto::FLOAT);
  body.output("r", onnx::TensorProto::FLOAT);
  body.output("r_scan", onnx::TensorProto::FLOAT);
  tb.output("loop_s", onnx::TensorProto::FLOAT);
  tb.output("loop_steps", onnx::TensorProto::FLOAT);
  G eb = graph_attr(outer, "else_branch");
  eb.node("Identity", {"x"}, {"e1"});
  eb.node("Identity", {"x"}, {"e2"});
  eb.output("e1", onnx::TensorProto::FLOAT);
  eb.output("e2", onnx::TensorProto::FLOAT);
  m.output("final_s", onnx::TensorProto::FLOAT);
  m.output("steps", onnx::TensorProto::FLOAT);
  Session s(md.graph(), "if_loop_if", "", no_cache());
  auto out = s.run({npy("if_loop_if.x")});
  expect_close(out.at(0), npy("if_loop_if.ref.0"), "final s");
  expect_close(out.at(1), npy("if_loop_if.ref.1"), "steps");
}

TEST(ControlFlow, AnIfInsideAScanInsideAnIfReadsTheStateTheElementAndValuesTwoAndThreeLevelsUp) {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {4, 3});
  m.input("b", onnx::TensorProto::FLOAT, {3});
  m.input("flag", onnx::TensorProto::BOOL, {});
  m.scalar("half", 0.5f);
  m.bool_scalar("yes", true);
  m.node("Mul", {"b", "half"}, {"mm"});
  auto *outer = m.node("If", {"yes"}, {"final_h", "hs"}, "outer_if");
  G tb = graph_attr(outer, "then_branch");
  tb.scalar("one", 1);
  TensorData h0(DType::F32, {3});
  for (int k = 0; k < 3; ++k) h0.mutable_as<float>()[k] = 0;
  tb.tensor("h0", h0);
  tb.node("Add", {"mm", "one"}, {"w"});
  auto *scan = tb.node("Scan", {"h0", "x"}, {"scan_h", "scan_hs"}, "scan");
  int_attr(scan, "num_scan_inputs", 1);
  G body = graph_attr(scan, "body");
  body.untyped_input("h");
  body.untyped_input("e");
  auto *inner = body.node("If", {"flag"}, {"h2"}, "inner_if");
  G it = graph_attr(inner, "then_branch");
  it.node("Mul", {"e", "w"}, {"ew"});
  it.node("Add", {"h", "ew"}, {"it_out"});
  it.output("it_out", onnx::TensorProto::FLOAT);
  G ie = graph_attr(inner, "else_branch");
  ie.node("Mul", {"h", "half"}, {"hh"});
  ie.node("Add", {"hh", "e"}, {"hhe"});
  ie.node("Sub", {"hhe", "mm"}, {"ie_out"});
  ie.output("ie_out", onnx::TensorProto::FLOAT);
  body.node("Identity", {"h2"}, {"h2_scan"});
  body.output("h2", onnx::TensorProto::FLOAT);
  body.output("h2_scan", onnx::TensorProto::FLOAT);
  tb.output("scan_h", onnx::TensorProto::FLOAT);
  tb.output("scan_hs", onnx::TensorProto::FLOAT);
  G eb = graph_attr(outer, "else_branch");
  eb.node("Identity", {"b"}, {"e1"});
  eb.node("Identity", {"x"}, {"e2"});
  eb.output("e1", onnx::TensorProto::FLOAT);
  eb.output("e2", onnx::TensorProto::FLOAT);
  m.output("final_h", onnx::TensorProto::FLOAT);
  m.output("hs", onnx::TensorProto::FLOAT);
  Session s(md.graph(), "if_scan_if", "", no_cache());
  for (int f : {0, 1}) {
    auto out = s.run({npy("if_scan_if.x"), npy("if_scan_if.b"), flag(f)});
    expect_close(out.at(0), npy("if_scan_if.ref." + std::to_string(f) + ".0"), "final h, flag " + std::to_string(f));
    expect_close(out.at(1), npy("if_scan_if.ref." + std::to_string(f) + ".1"), "hs, flag " + std::to_string(f));
  }
  EXPECT_TRUE(s.value_inputs().empty()) << "the flag was compiled in";
  EXPECT_EQ(s.compiles(), 1);
}

TEST(ControlFlow, ALoopInsideAScanInsideALoopReadsTheElementTheIterationAndTheCarriedValueLevelsUp) {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {4, 3});
  m.input("b", onnx::TensorProto::FLOAT, {3});
  m.int_scalar("trips", 2);
  m.bool_scalar("go", true);
  auto *outer = m.node("Loop", {"trips", "go", "b"}, {"final_s", "all_hs"}, "outer_loop");
  G lb = graph_attr(outer, "body");
  lb.input("i", onnx::TensorProto::INT64, {});
  lb.input("cond_in", onnx::TensorProto::BOOL, {});
  lb.untyped_input("s");
  lb.node("Identity", {"cond_in"}, {"cond_out"});
  int_attr(lb.node("Cast", {"i"}, {"fi"}), "to", onnx::TensorProto::FLOAT);
  auto *scan = lb.node("Scan", {"s", "x"}, {"scan_h", "scan_hs"}, "scan");
  int_attr(scan, "num_scan_inputs", 1);
  G sb = graph_attr(scan, "body");
  sb.untyped_input("h");
  sb.untyped_input("e");
  sb.int_scalar("inner_trips", 2);
  sb.bool_scalar("inner_go", true);
  auto *inner = sb.node("Loop", {"inner_trips", "inner_go", "h"}, {"u_final"}, "inner_loop");
  G ib = graph_attr(inner, "body");
  ib.input("j", onnx::TensorProto::INT64, {});
  ib.input("inner_cond", onnx::TensorProto::BOOL, {});
  ib.untyped_input("u");
  ib.scalar("half", 0.5f);
  ib.node("Identity", {"inner_cond"}, {"inner_cond_out"});
  ib.node("Mul", {"e", "fi"}, {"ei"});
  ib.node("Mul", {"s", "half"}, {"hs_half"});
  ib.node("Add", {"u", "ei"}, {"u1"});
  ib.node("Add", {"u1", "hs_half"}, {"u2"});
  ib.output("inner_cond_out", onnx::TensorProto::FLOAT);
  ib.output("u2", onnx::TensorProto::FLOAT);
  sb.node("Identity", {"u_final"}, {"h_scan"});
  sb.output("u_final", onnx::TensorProto::FLOAT);
  sb.output("h_scan", onnx::TensorProto::FLOAT);
  lb.output("cond_out", onnx::TensorProto::FLOAT);
  lb.output("scan_h", onnx::TensorProto::FLOAT);
  lb.output("scan_hs", onnx::TensorProto::FLOAT);
  m.output("final_s", onnx::TensorProto::FLOAT);
  m.output("all_hs", onnx::TensorProto::FLOAT);
  Session s(md.graph(), "loop_scan_loop", "", no_cache());
  auto out = s.run({npy("loop_scan_loop.x"), npy("loop_scan_loop.b")});
  expect_close(out.at(0), npy("loop_scan_loop.ref.0"), "final s");
  expect_close(out.at(1), npy("loop_scan_loop.ref.1"), "every iteration's Scan states");
}

TEST(ControlFlow, AnLstmAndAGruSitInTheBranchesOfAnIfChosenAtRunTime) {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {3, 2, 4});
  m.input("flag", onnx::TensorProto::BOOL, {});
  for (const char *w : {"W", "R", "B", "Wg", "Rg", "Bg"}) m.tensor(w, npy(std::string("recurrent.") + w));
  auto *n = m.node("If", {"flag"}, {"y_h"}, "If_rnn");
  G tb = graph_attr(n, "then_branch");
  int_attr(tb.node("LSTM", {"x", "W", "R", "B"}, {"", "lstm_h"}, "lstm"), "hidden_size", 5);
  tb.output("lstm_h", onnx::TensorProto::FLOAT);
  G eb = graph_attr(n, "else_branch");
  int_attr(eb.node("GRU", {"x", "Wg", "Rg", "Bg"}, {"", "gru_h"}, "gru"), "hidden_size", 5);
  eb.output("gru_h", onnx::TensorProto::FLOAT);
  m.output("y_h", onnx::TensorProto::FLOAT);
  Session s(md.graph(), "recurrent_if", "", no_cache());
  for (int f : {1, 0}) {
    auto out = s.run({npy("recurrent.x"), flag(f)});
    expect_close(out.at(0), npy("recurrent.ref." + std::to_string(f)), f ? "LSTM" : "GRU");
  }
  EXPECT_TRUE(s.value_inputs().empty()) << "the flag was compiled in";
  EXPECT_EQ(s.compiles(), 1);
}

Model shapes_differ() {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  m.input("flag", onnx::TensorProto::BOOL, {});
  auto *n = m.node("If", {"flag"}, {"y"}, "If_shapes");
  G tb = graph_attr(n, "then_branch");
  tb.node("Identity", {"x"}, {"same"});
  tb.output("same", onnx::TensorProto::FLOAT);
  G eb = graph_attr(n, "else_branch");
  int_attr(eb.node("Concat", {"x", "x"}, {"twice"}), "axis", 0);
  eb.output("twice", onnx::TensorProto::FLOAT);
  m.output("y", onnx::TensorProto::FLOAT);
  return md;
}

TEST(ControlFlow, BranchesWithDifferentShapesCompileTheFlagInOnceForEachValue) {
  Session s(shapes_differ().graph(), "shapes_differ", "", no_cache());
  for (int f : {1, 0}) {
    auto out = s.run({npy("shapes_differ.x"), flag(f)});
    expect_close(out.at(0), npy("shapes_differ.ref." + std::to_string(f)), "flag " + std::to_string(f));
  }
  EXPECT_EQ(s.value_inputs(), (std::set<size_t>{1}));
  EXPECT_EQ(s.compiles(), 2);
}

TEST(ControlFlow, BranchesWithDifferentShapesAndNoSessionGiveAnErrorNamingTheIf) {
  testing::expect_run_error(shapes_differ().graph(), {npy("shapes_differ.x"), flag(true)}, "If_shapes",
                            "output 0 the shapes [2, 3] and [4, 3]");
}

// then: x's elements 0 and 3, whose run-time check wants x's length at
// least 4; else: its elements 0 and 1. Both branches run when the flag is
// known only at run time.
Model check_in_a_branch() {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {-1});
  m.input("flag", onnx::TensorProto::BOOL, {});
  m.tensor("far", TensorData::from_int64({0, 3}, {2}));
  m.tensor("near", TensorData::from_int64({0, 1}, {2}));
  auto *n = m.node("If", {"flag"}, {"out"}, "If_check");
  G tb = graph_attr(n, "then_branch");
  tb.node("Gather", {"x", "far"}, {"far_x"}, "Gather_far");
  tb.output("far_x", onnx::TensorProto::FLOAT);
  G eb = graph_attr(n, "else_branch");
  eb.node("Gather", {"x", "near"}, {"near_x"}, "Gather_near");
  eb.output("near_x", onnx::TensorProto::FLOAT);
  m.output("out", onnx::TensorProto::FLOAT);
  return md;
}

TEST(ControlFlow, ACheckFailingInTheBranchNotTakenCompilesTheFlagInAndRunsAgain) {
  Session s(check_in_a_branch().graph(), "check_in_a_branch", "", no_cache());
  auto out = s.run({testing::f32({4}, {1, 2, 3, 4}), flag(true)});
  EXPECT_EQ(testing::floats(out.at(0)), (std::vector<double>{1, 4}));
  EXPECT_EQ(s.compiles(), 1);
  EXPECT_TRUE(s.value_inputs().empty());
  // Length 3: the then branch's check fails though the else branch is taken.
  out = s.run({testing::f32({3}, {1, 2, 3}), flag(false)});
  EXPECT_EQ(testing::floats(out.at(0)), (std::vector<double>{1, 2}));
  EXPECT_EQ(s.value_inputs(), (std::set<size_t>{1}));
  // The taken branch's own check still fails, with its message.
  const std::string msg = testing::error_message([&] { s.run({testing::f32({3}, {1, 2, 3}), flag(true)}); });
  EXPECT_NE(msg.find("Gather_far"), std::string::npos) << msg;
}

TEST(ControlFlow, ANestedBodyReadingANameNoEnclosingGraphDefinesIsAnErrorNamingTheNode) {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  m.bool_scalar("yes", true);
  auto *outer = m.node("If", {"yes"}, {"y"}, "outer_if");
  G tb = graph_attr(outer, "then_branch");
  auto *inner = tb.node("If", {"yes"}, {"inner_y"}, "inner_if");
  G it = graph_attr(inner, "then_branch");
  it.node("Add", {"x", "nowhere"}, {"sum"});
  it.output("sum", onnx::TensorProto::FLOAT);
  graph_attr(inner, "else_branch").output("x", onnx::TensorProto::FLOAT);
  tb.output("inner_y", onnx::TensorProto::FLOAT);
  graph_attr(outer, "else_branch").output("x", onnx::TensorProto::FLOAT);
  m.output("y", onnx::TensorProto::FLOAT);
  const std::string msg = testing::error_message([&] { Session(md.graph(), "undefined", "", no_cache()); });
  EXPECT_NE(msg.find("node 'outer_if/then/inner_if' (If): the body uses 'nowhere', which no enclosing graph defines"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace disco
