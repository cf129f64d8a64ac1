// A run-time If whose branches give outputs of different shapes
// (lowering/control_flow.h: IfSelectDynamic). torchvision's batched_nms
// exports If(boxes.numel() == 0): then an empty int64 [0], else
// NonMaxSuppression(...)[:, 2], [k]. The condition comes from the data (the
// boxes a score threshold leaves), so neither the compile nor compiling the
// inputs in can decide it: both branches run, a host op copies the taken one's
// output and binds its extent, a fresh symbol, at run time, and the ops after
// it take that symbol on. One compile serves every input. The models are ONNX
// protobufs built here; the references are worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "driver/session.h"
#include "frontend/onnx_importer.h"
#include "onnx/onnx_pb.h"
#include "tests/support/onnx_graph_writer.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::f32;
using testing::floats;
using testing::i64;

using G = testing::GraphWriter;
using testing::graph_attr;
using testing::int_attr;

struct Model : testing::ModelWriter {
  Model() : ModelWriter("if_dynamic_shape", 13) {}
};

CompileOptions no_cache() {
  CompileOptions o;
  o.use_cache = false;
  o.backends = {"host"};
  o.compile_workers = 1;
  return o;
}

// y = If(ReduceSum(x) > 0): then x's positive elements, [count], else an
// empty [0]; z = 2 * y, a kernel over y's run-time extent.
Model positives_or_empty() {
  Model md;
  G &m = md.main;
  m.input("x", onnx::TensorProto::FLOAT, {-1});
  m.tensor("zero", f32({}, {0.f}));
  m.tensor("two", f32({}, {2.f}));
  int_attr(m.node("ReduceSum", {"x"}, {"sum"}), "keepdims", 0);
  m.node("Greater", {"sum", "zero"}, {"cond"});
  auto *n = m.node("If", {"cond"}, {"y"}, "If_positives");
  G tb = graph_attr(n, "then_branch");
  tb.tensor("axis0", i64({1}, {0}));
  tb.node("Greater", {"x", "zero"}, {"positive"});
  tb.node("NonZero", {"positive"}, {"where"});
  tb.node("Squeeze", {"where", "axis0"}, {"index"});
  tb.node("Gather", {"x", "index"}, {"positives"});
  tb.output("positives");
  G eb = graph_attr(n, "else_branch");
  eb.constant("empty", f32({0}, {}));
  eb.output("empty");
  m.node("Mul", {"y", "two"}, {"z"});
  m.output("y");
  m.output("z");
  return md;
}

TEST(IfDynamicShape, AConditionFromTheDataPicksBranchesOfDifferentLengthsWithOneCompile) {
  Session s(positives_or_empty().graph(), "positives_or_empty", "", no_cache());
  struct Case {
    std::vector<float> x;
    std::vector<double> y;  // the sum's sign picks: positives, or nothing
  };
  const std::vector<Case> cases = {
      {{1, -2, 3, 0}, {1, 3}},                // sum 2: then, 2 elements
      {{-1, -2, 0.5f}, {}},                   // sum -2.5: else, [0]
      {{0.5f, -0.25f, 4, 1, -3}, {0.5, 4, 1}},  // sum 2.25: then, 3 elements
      {{2, -1}, {2}},                         // sum 1: then, 1 element
      {{0, 0}, {}},                           // sum 0: else
  };
  for (const Case &c : cases) {
    const std::string what = "x of " + std::to_string(c.x.size()) + " elements, sum picks " +
                             (c.y.empty() ? "else" : "then");
    auto out = s.run({f32({static_cast<int64_t>(c.x.size())}, c.x)});
    ASSERT_EQ(out.at(0).shape, (std::vector<int64_t>{static_cast<int64_t>(c.y.size())})) << what;
    EXPECT_EQ(floats(out[0]), c.y) << what;
    std::vector<double> twice;
    for (double v : c.y) twice.push_back(2 * v);
    ASSERT_EQ(out.at(1).shape, out[0].shape) << what;
    EXPECT_EQ(floats(out[1]), twice) << what;
  }
  EXPECT_TRUE(s.value_inputs().empty()) << "x was compiled in";
  EXPECT_EQ(s.compiles(), 1);
}

// torchvision's postprocessing in miniature: the boxes whose score passes
// 0.5, then batched_nms (the coordinate trick: each label's boxes offset by
// label * (max coordinate + 1), so boxes of different labels never overlap)
// as torch.onnx exports it, If(numel(boxes) == 0) then an empty int64 [0]
// else NonMaxSuppression(no limit, IoU 0.5)[:, 2]; then the detections
// [kept, 5] = Concat(boxes[keep], scores[keep][:, None]).
Model score_filter_then_batched_nms() {
  Model md;
  G &m = md.main;
  m.input("boxes_all", onnx::TensorProto::FLOAT, {-1, 4});
  m.input("scores_all", onnx::TensorProto::FLOAT, {-1});
  m.input("labels_all", onnx::TensorProto::INT64, {-1});
  m.tensor("threshold", f32({}, {0.5f}));
  m.tensor("axis0", i64({1}, {0}));
  m.tensor("axis1", i64({1}, {1}));
  m.tensor("zero", i64({}, {0}));
  m.node("Greater", {"scores_all", "threshold"}, {"passes"});
  m.node("NonZero", {"passes"}, {"where"});
  m.node("Squeeze", {"where", "axis0"}, {"kept"});
  m.node("Gather", {"boxes_all", "kept"}, {"boxes"});
  m.node("Gather", {"scores_all", "kept"}, {"scores"});
  m.node("Gather", {"labels_all", "kept"}, {"labels"});
  m.node("Size", {"boxes"}, {"numel"});
  m.node("Equal", {"numel", "zero"}, {"no_boxes"});
  auto *n = m.node("If", {"no_boxes"}, {"keep"}, "If_1009");
  G tb = graph_attr(n, "then_branch");
  tb.constant("none", i64({0}, {}));
  tb.output("none");
  G eb = graph_attr(n, "else_branch");
  eb.tensor("one", f32({}, {1.f}));
  eb.tensor("axes01", i64({2}, {0, 1}));
  eb.tensor("no_limit", i64({1}, {std::numeric_limits<int64_t>::max()}));
  eb.tensor("iou", f32({1}, {0.5f}));
  eb.tensor("column2", i64({}, {2}));
  int_attr(eb.node("ReduceMax", {"boxes"}, {"max_coordinate"}), "keepdims", 0);
  eb.node("Add", {"max_coordinate", "one"}, {"spacing"});
  int_attr(eb.node("Cast", {"labels"}, {"labels_f"}), "to", onnx::TensorProto::FLOAT);
  eb.node("Mul", {"labels_f", "spacing"}, {"offsets"});
  eb.node("Unsqueeze", {"offsets", "axis1"}, {"offsets_col"});
  eb.node("Add", {"boxes", "offsets_col"}, {"boxes_for_nms"});
  eb.node("Unsqueeze", {"boxes_for_nms", "axis0"}, {"nms_boxes"});
  eb.node("Unsqueeze", {"scores", "axes01"}, {"nms_scores"});
  eb.node("NonMaxSuppression", {"nms_boxes", "nms_scores", "no_limit", "iou"}, {"selected"});
  int_attr(eb.node("Gather", {"selected", "column2"}, {"selected_boxes"}), "axis", 1);
  eb.output("selected_boxes");
  m.node("Gather", {"boxes", "keep"}, {"kept_boxes"});
  m.node("Gather", {"scores", "keep"}, {"kept_scores"});
  m.node("Unsqueeze", {"kept_scores", "axis1"}, {"kept_scores_col"});
  int_attr(m.node("Concat", {"kept_boxes", "kept_scores_col"}, {"detections"}), "axis", 1);
  m.output("keep");
  m.output("detections");
  return md;
}

struct NmsCase {
  std::string what;
  std::vector<float> boxes, scores;
  std::vector<int64_t> labels;
  std::vector<int64_t> keep;         // indices into the boxes that passed the threshold
  std::vector<double> detections;   // [keep, 5]: box, score
};

// Worked by hand. IoU of two 10x10 boxes offset by (1, 1): 81 / 119 = 0.68.
std::vector<NmsCase> nms_cases() {
  const std::vector<float> six = {0, 0, 10, 10,  1, 1, 11, 11,  20, 20, 30, 30,
                                  0, 0, 10, 10,  21, 21, 31, 31,  50, 50, 60, 60};
  const std::vector<float> six_scores = {0.9f, 0.8f, 0.7f, 0.3f, 0.6f, 0.55f};
  return {
      // Box 3 fails the threshold; the rest, by score: 0 kept, 1 (label 1, moved
      // by 61 past every other box) kept, 2 kept, 4 overlaps 2 (0.68), 5 kept.
      {"six boxes, two labels", six, six_scores, {0, 1, 0, 0, 0, 0}, {0, 1, 2, 4},
       {0, 0, 10, 10, 0.9f, 1, 1, 11, 11, 0.8f, 20, 20, 30, 30, 0.7f, 50, 50, 60, 60, 0.55f}},
      // One label: box 1 overlaps box 0 (0.68) too.
      {"six boxes, one label", six, six_scores, {0, 0, 0, 0, 0, 0}, {0, 2, 4},
       {0, 0, 10, 10, 0.9f, 20, 20, 30, 30, 0.7f, 50, 50, 60, 60, 0.55f}},
      // No score passes 0.5 (0.5 itself does not): no boxes, the then branch;
      // the else branch still runs, on zero boxes.
      {"no box passes", six, {0.1f, 0.2f, 0.5f, 0.3f, 0.0f, 0.4f}, {0, 1, 0, 0, 0, 0}, {}, {}},
      // Boxes 0 and 2 pass and coincide; 2 scores higher, so it alone stays.
      {"three boxes", {0, 0, 1, 1, 5, 5, 6, 6, 0, 0, 1, 1}, {0.7f, 0.2f, 0.9f}, {0, 0, 0}, {1},
       {0, 0, 1, 1, 0.9f}},
      // One box passes.
      {"one box passes", {0, 0, 1, 1, 5, 5, 6, 6}, {0.1f, 0.75f}, {0, 3}, {0}, {5, 5, 6, 6, 0.75f}},
  };
}

std::vector<TensorData> nms_inputs(const NmsCase &c) {
  const int64_t n = static_cast<int64_t>(c.scores.size());
  return {f32({n, 4}, c.boxes), f32({n}, c.scores), i64({n}, c.labels)};
}

TEST(IfDynamicShape, TorchvisionsBatchedNmsIfGivesTheKeptIndicesOrAnEmptyTensorWithOneCompile) {
  Session s(score_filter_then_batched_nms().graph(), "batched_nms", "", no_cache());
  for (const NmsCase &c : nms_cases()) {
    auto out = s.run(nms_inputs(c));
    ASSERT_EQ(out.at(0).dtype, DType::I64) << c.what;
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{static_cast<int64_t>(c.keep.size())})) << c.what;
    EXPECT_EQ(out[0].to_int64(), c.keep) << c.what;
  }
  EXPECT_TRUE(s.value_inputs().empty()) << "an input was compiled in";
  EXPECT_EQ(s.compiles(), 1);
}

TEST(IfDynamicShape, TheKeptExtentFlowsIntoTheGatherAndConcatAfterTheIf) {
  Session s(score_filter_then_batched_nms().graph(), "batched_nms", "", no_cache());
  for (const NmsCase &c : nms_cases()) {
    auto out = s.run(nms_inputs(c));
    ASSERT_EQ(out.at(1).shape, (std::vector<int64_t>{static_cast<int64_t>(c.keep.size()), 5})) << c.what;
    const std::vector<double> got = floats(out[1]);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], c.detections[i]) << c.what << ", element " << i;
  }
  EXPECT_EQ(s.compiles(), 1);
}

}  // namespace
}  // namespace disco
