// Tensors the oneDNN steps hand each other blocked with the last block
// zero-padded (targets/onednn/onednn_layout.h): an MBConv-like chain whose
// 24- and 40-channel results only convolutions read, as X and as a residual,
// against plain-loop convolutions at several run-time shapes and on one and
// two threads; the plan holds those results padded, in buffers allocated with
// the channels rounded up to 16, and the residual's result in the residual's
// own bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "runtime/memory_plan.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

struct Layer {
  TensorData w, bias;
  std::vector<int64_t> strides, pads;
  int64_t group = 1;
};

// A Conv node of `l` on `x`.
std::string conv(GraphBuilder &b, const std::string &x, const Layer &l, const std::string &name) {
  return b.op("Conv", {x, b.constant(name + "_w", l.w), b.constant(name + "_b", l.bias)},
              testing::attrs(
                  {{"group", attr_int(l.group)}, {"strides", attr_ints(l.strides)}, {"pads", attr_ints(l.pads)}}));
}

std::vector<float> ref(const std::vector<float> &x, const Dims &xs, const Layer &l, Dims *os) {
  return ref_conv2d(x, xs, values(l.w), l.w.shape, values(l.bias), l.strides, {1, 1}, l.pads, l.group, os);
}

void relu(std::vector<float> &v) {
  for (float &f : v) f = std::max(f, 0.0f);
}

TEST(OnednnPaddedHeld, AnMbconvChainOfTwentyFourAndFortyChannelsMatchesTheReference) {
  auto layer = [](Dims ws, int64_t stride, int64_t pad, int64_t group, int seed) {
    return Layer{tensor(ws, 0.01f, seed), tensor({ws[0]}, 0.05f, seed + 1), {stride, stride}, {pad, pad, pad, pad},
                 group};
  };
  const Layer stem = layer({32, 8, 3, 3}, 1, 1, 1, 1), narrow = layer({24, 32, 1, 1}, 1, 0, 1, 2),
              expand = layer({48, 24, 1, 1}, 1, 0, 1, 3), depthwise = layer({48, 1, 3, 3}, 1, 1, 48, 4),
              project = layer({24, 48, 1, 1}, 1, 0, 1, 5), down = layer({40, 24, 3, 3}, 2, 1, 1, 6),
              wide = layer({32, 40, 1, 1}, 1, 0, 1, 7);
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 8, sym("h"), sym("w")});
  auto s = b.op("Relu", {conv(b, x, stem, "stem")});
  auto y1 = conv(b, s, narrow, "narrow");                               // 24: padded
  auto y2 = b.op("Relu", {conv(b, y1, expand, "expand")});              // 48
  auto y3 = b.op("Relu", {conv(b, y2, depthwise, "depthwise")});        // 48
  auto y4 = b.op("Add", {conv(b, y3, project, "project"), y1});         // 24: padded, y1 its residual
  auto y5 = b.op("Sigmoid", {conv(b, y4, down, "down")});               // 40: padded
  auto y6 = b.op("Relu", {conv(b, y5, wide, "wide")});                  // 32
  b.output(b.op("GlobalAveragePool", {y6}));
  Session session(b.build(), "padded_held_chain", "", onednn_first());

  for (int threads : {1, 2}) {
    session.set_num_threads(threads);
    for (Dims xs : {Dims{1, 8, 6, 6}, Dims{2, 8, 5, 7}, Dims{3, 8, 1, 1}}) {
      const std::string what = std::to_string(threads) + " thread(s), X [" + std::to_string(xs[0]) + ", 8, " +
                               std::to_string(xs[2]) + ", " + std::to_string(xs[3]) + "]";
      TensorData tx = tensor(xs, 0.05f, 0);
      auto out = session.run({tx});
      Dims ss, s1, s2, s3, s4, s5, s6;
      std::vector<float> r = ref(values(tx), xs, stem, &ss);
      relu(r);
      const std::vector<float> r1 = ref(r, ss, narrow, &s1);
      std::vector<float> r2 = ref(r1, s1, expand, &s2);
      relu(r2);
      std::vector<float> r3 = ref(r2, s2, depthwise, &s3);
      relu(r3);
      std::vector<float> r4 = ref(r3, s3, project, &s4);
      for (size_t i = 0; i < r4.size(); ++i) r4[i] += r1[i];
      std::vector<float> r5 = ref(r4, s4, down, &s5);
      for (float &f : r5) f = 1 / (1 + std::exp(-f));
      std::vector<float> r6 = ref(r5, s5, wide, &s6);
      relu(r6);
      const int64_t n = s6[0], c = s6[1], hw = s6[2] * s6[3];
      std::vector<float> want(static_cast<size_t>(n * c), 0.0f);
      for (int64_t i = 0; i < n * c; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < hw; ++p) sum += r6[static_cast<size_t>(i * hw + p)];
        want[static_cast<size_t>(i)] = static_cast<float>(sum / static_cast<double>(hw));
      }
      expect_near_all(out[0], Dims{n, c, 1, 1}, want, what);
    }
  }

  const Plan &plan = session.last_compile().plan;
  int padded_steps = 0, padded_buffers = 0;
  for (const PlanStep &st : plan.steps) {
    EXPECT_EQ(st.extern_call.rfind("onednn.", 0), 0u) << st.label << " is not a oneDNN step";
    if (st.params.count("padded_output") && st.params.at("padded_output") == "1") ++padded_steps;
  }
  for (const PlanBuffer &buf : plan.buffers)
    if (buf.channel_multiple == 16) {
      ++padded_buffers;
      EXPECT_TRUE(buf.shape[1].is_const() && buf.shape[1].as_const() % 16 != 0) << buf.name;
    }
  EXPECT_EQ(padded_steps, 3) << "y1, y4 and y5 are held padded";
  EXPECT_EQ(padded_buffers, 3);
  // y4 starts from its residual y1, which nothing after reads: it takes y1's bytes.
  const std::vector<int> shared = shared_buffers(plan);
  int sharing = 0;
  for (const PlanStep &st : plan.steps) {
    if (!st.params.count(kOutputReusesInput)) continue;
    const int r = st.inputs.at(std::stoul(st.params.at(kOutputReusesInput)));
    EXPECT_EQ(shared.at(st.outputs.at(0)), shared.at(r)) << st.label;
    EXPECT_EQ(plan.buffers.at(r).channel_multiple, 16) << st.label << ": the residual y1, held padded";
    ++sharing;
  }
  EXPECT_EQ(sharing, 1) << "the project conv's step";
}

}  // namespace
}  // namespace disco
