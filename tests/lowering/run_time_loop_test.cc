// Loops whose trip count is known only at run time (lowering/ops/run_time_loop.h):
// the body compiles once, with symbolic shapes, into a plan of its own, and
// the executor runs it once per iteration (runtime/loop_runner.h). One
// compile serves every trip count, 0 included. The models are ONNX protobufs
// built here; the references come from numpy
// (tests/references/make_run_time_loop_references.py, run at test time).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "driver/compile_model.h"
#include "driver/session.h"
#include "frontend/tensor_compare.h"
#include "onnx/onnx_pb.h"
#include "runtime/npy.h"
#include "tests/support/onnx_graph_writer.h"
#include "tests/support/python_references.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using G = testing::GraphWriter;
using testing::f32;
using testing::graph_attr;
using testing::i64;
using testing::int_attr;

// The numpy inputs and references, written once per test process.
const testing::PythonReferences &references() {
  static const testing::PythonReferences refs("run-time-loop", "tests/references/make_run_time_loop_references.py");
  return refs;
}

TensorData npy(const std::string &name) { return references().npy(name); }

struct Model : testing::ModelWriter {
  explicit Model(const std::string &name) : ModelWriter(name, 13) {}
};

CompileOptions options() {
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

// trips = ReduceSum(k); Loop(trips, -, ones(3)) with body
//   s' = 0.5 s + w * float(i), scan y = s' + 1, where w = ReduceSum(x, axis 0) is read from the main graph;
// outputs s, ys [trips, 3], z = 2 ys.
Model scan_loop() {
  Model md("scan_loop");
  G &m = md.main;
  m.symbolic_input("x", onnx::TensorProto::FLOAT, {"n", "3"});
  m.symbolic_input("k", onnx::TensorProto::INT64, {"m"});
  m.tensor("axes0", i64({1}, {0}));
  m.tensor("s0", f32({3}, {1.f, 1.f, 1.f}));
  m.scalar("two", 2.f);
  int_attr(m.node("ReduceSum", {"k"}, {"trips"}), "keepdims", 0);
  int_attr(m.node("ReduceSum", {"x", "axes0"}, {"w"}), "keepdims", 0);
  auto *loop = m.node("Loop", {"trips", "", "s0"}, {"s_final", "ys"}, "Loop_scan");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.untyped_input("s");
  body.scalar("half", 0.5f);
  body.scalar("one", 1.f);
  int_attr(body.node("Cast", {"i"}, {"fi"}), "to", onnx::TensorProto::FLOAT);
  body.node("Mul", {"s", "half"}, {"hs"});
  body.node("Mul", {"w", "fi"}, {"wf"});
  body.node("Add", {"hs", "wf"}, {"s_next"});
  body.node("Add", {"s_next", "one"}, {"y"});
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out");
  body.output("s_next");
  body.output("y");
  m.node("Mul", {"ys", "two"}, {"z"});
  m.output("s_final");
  m.output("ys");
  m.output("z");
  return md;
}

// trips = the number of positive elements of v; Loop(trips, -, zeros [1, 2]) with body
//   sel = Compress(v, v > float(i)) (its extent changes each trip), row = [sum(sel), len(sel)],
//   acc' = Concat(acc, [row]) (grows a row a trip), scan c = [len(sel)], cond' = i < 3.
// From an empty start (`from_empty`), the appended rows become a scan output.
Model grow_loop(bool from_empty = false) {
  Model md("grow_loop");
  G &m = md.main;
  m.symbolic_input("v", onnx::TensorProto::FLOAT, {"n"});
  m.scalar("zero", 0.f);
  m.tensor("acc0", from_empty ? f32({0, 2}, {}) : f32({1, 2}, {0.f, 0.f}));
  m.node("Greater", {"v", "zero"}, {"pos"});
  int_attr(m.node("Cast", {"pos"}, {"posi"}), "to", onnx::TensorProto::INT64);
  int_attr(m.node("ReduceSum", {"posi"}, {"trips"}), "keepdims", 0);
  auto *loop = m.node("Loop", {"trips", "", "acc0"}, {"acc", "cs"}, "Loop_grow");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.untyped_input("acc_in");
  body.tensor("axes0", i64({1}, {0}));
  body.int_scalar("three", 3);
  int_attr(body.node("Cast", {"i"}, {"fi"}), "to", onnx::TensorProto::FLOAT);
  body.node("Greater", {"v", "fi"}, {"mask"});
  int_attr(body.node("Compress", {"v", "mask"}, {"sel"}), "axis", 0);
  int_attr(body.node("ReduceSum", {"sel"}, {"ssum"}), "keepdims", 1);
  body.node("Shape", {"sel"}, {"shp"});
  int_attr(body.node("Cast", {"shp"}, {"cnt"}), "to", onnx::TensorProto::FLOAT);
  int_attr(body.node("Concat", {"ssum", "cnt"}, {"row"}), "axis", 0);
  body.node("Unsqueeze", {"row", "axes0"}, {"row2"});
  int_attr(body.node("Concat", {"acc_in", "row2"}, {"acc_next"}), "axis", 0);
  body.node("Less", {"i", "three"}, {"cond_out"});
  body.output("cond_out");
  body.output("acc_next");
  body.output("cnt");
  m.output("acc");
  m.output("cs");
  return md;
}

TEST(RunTimeLoop, ATripCountFromTheDataRunsTheBodyOncePerTripWithOneCompileForEveryCountZeroIncluded) {
  Session s(scan_loop().graph(), "scan_loop", "", options());
  for (int c = 0; c < 5; ++c) {
    const std::string k = "scan_loop." + std::to_string(c);
    auto out = s.run({npy(k + ".x"), npy(k + ".k")});
    ASSERT_EQ(out.size(), 3u);
    expect_close(out[0], npy(k + ".ref.0"), k + " s");
    expect_close(out[1], npy(k + ".ref.1"), k + " ys");
    expect_close(out[2], npy(k + ".ref.2"), k + " z");
  }
  EXPECT_EQ(s.compiles(), 1);
}

TEST(RunTimeLoop, ABodyWithDataDependentShapesAGrowingCarriedValueAndItsOwnConditionRunsAtRunTime) {
  Session s(grow_loop().graph(), "grow_loop", "", options());
  for (int c = 0; c < 4; ++c) {
    const std::string k = "grow_loop." + std::to_string(c);
    auto out = s.run({npy(k + ".v")});
    ASSERT_EQ(out.size(), 2u);
    expect_close(out[0], npy(k + ".ref.0"), k + " acc");
    expect_close(out[1], npy(k + ".ref.1"), k + " cs");
  }
  EXPECT_EQ(s.compiles(), 1);
}

// trips = lens' extent (a shape symbol); Loop(trips, -) with body
//   z = ConstantOfShape(Unsqueeze(Gather(lens, i)), 1.0), whose extent the data gives each trip;
//   scan s = ReduceSum(Concat(z, [2, 2]) * float(i + 1), keepdims 1); lens[i] = 0 makes z an empty
//   part of the Concat, as torchvision's paste_masks pads a box at the image's edge with zeros(0, w).
Model dims_loop() {
  Model md("dims_loop");
  G &m = md.main;
  m.symbolic_input("lens", onnx::TensorProto::INT64, {"m"});
  m.tensor("zero_index", i64({}, {0}));
  m.node("Shape", {"lens"}, {"lens_shape"});
  int_attr(m.node("Gather", {"lens_shape", "zero_index"}, {"trips"}), "axis", 0);
  auto *loop = m.node("Loop", {"trips", ""}, {"s"}, "Loop_dims");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.tensor("axes0", i64({1}, {0}));
  body.int_scalar("one", 1);
  int_attr(body.node("Gather", {"lens", "i"}, {"len"}), "axis", 0);
  body.node("Unsqueeze", {"len", "axes0"}, {"len1"});
  auto *fill = body.node("ConstantOfShape", {"len1"}, {"z"});
  auto *value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  G::fill(value->mutable_t(), "value", f32({1}, {1.f}));
  body.node("Add", {"i", "one"}, {"i1"});
  int_attr(body.node("Cast", {"i1"}, {"fi1"}), "to", onnx::TensorProto::FLOAT);
  body.tensor("twos", f32({2}, {2.f, 2.f}));
  int_attr(body.node("Concat", {"z", "twos"}, {"zc"}), "axis", 0);
  body.node("Mul", {"zc", "fi1"}, {"zi"});
  int_attr(body.node("ReduceSum", {"zi"}, {"sum"}), "keepdims", 1);
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out");
  body.output("sum");
  m.output("s");
  return md;
}

TEST(RunTimeLoop, ABodyWhoseExtentsComeFromEachTripsDataBindsThemAtRunTime) {
  Session s(dims_loop().graph(), "dims_loop", "", options());
  for (int c = 0; c < 3; ++c) {
    const std::string k = "dims_loop." + std::to_string(c);
    auto out = s.run({npy(k + ".lens")});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], npy(k + ".ref.0"), k + " s");
  }
  EXPECT_EQ(s.compiles(), 1);
}

// torchvision's paste_masks_in_image collects a [1, h, w] mask a trip into a
// [0, h, w] start with a Concat: the body appends to the carried value only.
TEST(RunTimeLoop, ACarriedValueTheBodyOnlyAppendsToFromAnEmptyStartIsCollectedAsAScanOutput) {
  Session s(grow_loop(true).graph(), "grow_loop_from_empty", "", options());
  for (int c = 0; c < 4; ++c) {
    const std::string k = "grow_loop." + std::to_string(c);
    auto out = s.run({npy(k + ".v")});
    ASSERT_EQ(out.size(), 2u);
    expect_close(out[0], npy(k + ".ref.from_empty"), k + " acc");
    expect_close(out[1], npy(k + ".ref.1"), k + " cs");
  }
  EXPECT_EQ(s.compiles(), 1);
}

// No trip count: start = ReduceSum(k); Loop(-, start > 0, x = start) with body
//   x' = x - 1, cond' = x' > 0, scan y = Loop(x, -, a = 0){ a' = a + float(x) }: a run-time Loop
//   inside the body, whose trip count is the carried value and whose body reads it.
Model while_loop() {
  Model md("while_loop");
  G &m = md.main;
  m.symbolic_input("k", onnx::TensorProto::INT64, {"m"});
  m.int_scalar("zero", 0);
  int_attr(m.node("ReduceSum", {"k"}, {"start"}), "keepdims", 0);
  m.node("Greater", {"start", "zero"}, {"go"});
  auto *loop = m.node("Loop", {"", "go", "start"}, {"x_final", "ys"}, "Loop_while");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.untyped_input("x");
  body.int_scalar("one", 1);
  body.int_scalar("none", 0);
  body.scalar("fzero", 0.f);
  body.node("Sub", {"x", "one"}, {"x_next"});
  body.node("Greater", {"x_next", "none"}, {"cond_out"});
  auto *inner = body.node("Loop", {"x", "", "fzero"}, {"y"}, "Loop_inner");
  G ib = graph_attr(inner, "body");
  ib.input("j", onnx::TensorProto::INT64, {});
  ib.input("icond", onnx::TensorProto::BOOL, {});
  ib.untyped_input("a");
  int_attr(ib.node("Cast", {"x"}, {"fx"}), "to", onnx::TensorProto::FLOAT);
  ib.node("Add", {"a", "fx"}, {"a_next"});
  ib.node("Identity", {"icond"}, {"icond_out"});
  ib.output("icond_out");
  ib.output("a_next");
  body.node("Identity", {"y"}, {"y_scan"});
  body.output("cond_out");
  body.output("x_next");
  body.output("y_scan");
  m.output("x_final");
  m.output("ys");
  return md;
}

TEST(RunTimeLoop, AWhileLoopWithoutATripCountRunsARunTimeLoopInsideItsBody) {
  Session s(while_loop().graph(), "while_loop", "", options());
  for (int c = 0; c < 4; ++c) {
    const std::string k = "while_loop." + std::to_string(c);
    auto out = s.run({npy(k + ".k")});
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].shape, npy(k + ".ref.0").shape) << k;
    EXPECT_EQ(out[0].int_at(0), npy(k + ".ref.0").int_at(0)) << k;
    expect_close(out[1], npy(k + ".ref.1"), k + " ys");
  }
  EXPECT_EQ(s.compiles(), 1);
}

// Scan outputs are stacked: a body whose scan output changes shape from one
// trip to the next (here Compress(v, v > float(i))) stops with an error that
// names the loop, the output, the trips and the shapes.
TEST(RunTimeLoop, AScanOutputWhoseShapeChangesBetweenTripsIsAnErrorNamingTheLoop) {
  Model md("ragged_scan");
  G &m = md.main;
  m.symbolic_input("v", onnx::TensorProto::FLOAT, {"n"});
  m.symbolic_input("trips", onnx::TensorProto::INT64, {});
  auto *loop = m.node("Loop", {"trips", ""}, {"sels"}, "Loop_ragged");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  int_attr(body.node("Cast", {"i"}, {"fi"}), "to", onnx::TensorProto::FLOAT);
  body.node("Greater", {"v", "fi"}, {"mask"});
  int_attr(body.node("Compress", {"v", "mask"}, {"sel"}), "axis", 0);
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out");
  body.output("sel");
  m.output("sels");
  Session s(md.graph(), "ragged_scan", "", options());
  // v = [0.5, 2, 3]: trip 0 keeps 3 elements, trip 1 keeps 2.
  try {
    s.run({f32({3}, {0.5f, 2.f, 3.f}), i64({}, {2})});
    FAIL() << "ran";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node 'Loop_ragged' (Loop): scan output 0 has the shape [2] at iteration 1 and [3] at iteration 0"),
              std::string::npos) << msg;
  }
  // Trips of one shape stack: v = [5, 6] keeps both elements in both trips.
  auto out = s.run({f32({2}, {5.f, 6.f}), i64({}, {2})});
  ASSERT_EQ(out.at(0).shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(testing::floats(out[0]), (std::vector<double>{5, 6, 5, 6}));
  EXPECT_EQ(s.compiles(), 1);
}

// A body that cannot run at run time: its Resize needs float scales computed
// from the iteration index (run time binds integer values only). With the trip
// count a graph input, the loop unrolls as before: the session compiles the
// count in, once per value. scan s_i = sum(Resize(x, scales [1, 1, i + 1, i + 1], nearest)) = (i + 1)^2 sum(x).
TEST(RunTimeLoop, ABodyThatCannotRunAtRunTimeUnrollsWithATripCountFromAGraphInputCompiledIn) {
  Model md("scales_loop");
  G &m = md.main;
  m.symbolic_input("x", onnx::TensorProto::FLOAT, {"1", "1", "2", "2"});
  m.symbolic_input("trips", onnx::TensorProto::INT64, {});
  auto *loop = m.node("Loop", {"trips", ""}, {"sums"}, "Loop_scales");
  G body = graph_attr(loop, "body");
  body.input("i", onnx::TensorProto::INT64, {});
  body.input("cond_in", onnx::TensorProto::BOOL, {});
  body.tensor("axes0", i64({1}, {0}));
  body.tensor("ones2", f32({2}, {1.f, 1.f}));
  body.tensor("roi", f32({0}, {}));
  body.int_scalar("one", 1);
  body.node("Add", {"i", "one"}, {"i1"});
  int_attr(body.node("Cast", {"i1"}, {"f"}), "to", onnx::TensorProto::FLOAT);
  body.node("Unsqueeze", {"f", "axes0"}, {"f1"});
  int_attr(body.node("Concat", {"ones2", "f1", "f1"}, {"scales"}), "axis", 0);
  body.node("Resize", {"x", "roi", "scales"}, {"big"});
  int_attr(body.node("ReduceSum", {"big"}, {"sum"}), "keepdims", 0);
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out");
  body.output("sum");
  m.output("sums");
  Session s(md.graph(), "scales_loop", "", options());
  const TensorData x = f32({1, 1, 2, 2}, {1.f, 2.f, 3.f, 4.f});
  auto out = s.run({x, i64({}, {3})});
  EXPECT_EQ(testing::floats(out.at(0)), (std::vector<double>{10, 40, 90}));
  out = s.run({x, i64({}, {1})});
  EXPECT_EQ(testing::floats(out.at(0)), (std::vector<double>{10}));
  EXPECT_EQ(s.compiles(), 2);
}

TEST(RunTimeLoop, TheBodysPlanComesBackFromTheCompileCache) {
  CompileOptions o = options();
  o.use_cache = true;
  o.cache_dir = (std::filesystem::temp_directory_path() / ("disco-run-time-loop-cache-" + std::to_string(getpid()))).string();
  const std::string k = "scan_loop.2";
  {
    Session first(scan_loop().graph(), "scan_loop", "run-time-loop-test", o);
    expect_close(first.run({npy(k + ".x"), npy(k + ".k")}).at(1), npy(k + ".ref.1"), "first ys");
    EXPECT_FALSE(first.last_compile().cache_hit);
  }
  Session again(scan_loop().graph(), "scan_loop", "run-time-loop-test", o);
  auto out = again.run({npy(k + ".x"), npy(k + ".k")});
  EXPECT_TRUE(again.last_compile().cache_hit);
  expect_close(out.at(0), npy(k + ".ref.0"), "cached s");
  expect_close(out.at(1), npy(k + ".ref.1"), "cached ys");
  std::error_code ec;
  std::filesystem::remove_all(o.cache_dir, ec);
}

TEST(RunTimeLoop, AnAotCompileRefusesARunTimeLoopNamingTheNode) {
  CompileOptions o = options();
  o.keep_objects = true;
  try {
    compile_graph(scan_loop().graph(), "scan_loop", "", o);
    FAIL() << "compiled";
  } catch (const Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node 'Loop_scan' (Loop)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("AOT libraries cannot hold"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace disco
