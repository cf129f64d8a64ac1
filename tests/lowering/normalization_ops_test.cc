// Normalizations the ONNX backend node tests do not cover: GroupNormalization
// (opsets 18 and 21) and LpNormalization, each at symbolic input shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// x: [1, 4, 2] holding ramp values; 2 groups of 2 channels each.
std::vector<float> group_norm_ref(const std::vector<float> &x, const std::vector<float> &scale,
                                  const std::vector<float> &bias, bool per_channel) {
  std::vector<float> y(x.size());
  for (int g = 0; g < 2; ++g) {
    double mean = 0, var = 0;
    for (int i = 0; i < 4; ++i) mean += x[g * 4 + i];
    mean /= 4;
    for (int i = 0; i < 4; ++i) var += (x[g * 4 + i] - mean) * (x[g * 4 + i] - mean);
    var /= 4;
    for (int i = 0; i < 4; ++i) {
      int p = per_channel ? (g * 4 + i) / 2 : g;
      y[g * 4 + i] = static_cast<float>((x[g * 4 + i] - mean) / std::sqrt(var + 1e-5) * scale[p] + bias[p]);
    }
  }
  return y;
}

TEST(GroupNormalization, PerGroupAtOpset18AndPerChannelAt21) {
  for (int opset : {18, 21}) {
    bool per_channel = opset >= 21;
    GraphBuilder b(opset);
    auto x = b.input("x", DType::F32, {sym("n"), sym("c"), sym("w")});
    std::vector<float> scale = per_channel ? std::vector<float>{1, 2, 0.5f, -1} : std::vector<float>{2, 0.5f};
    std::vector<float> bias = per_channel ? std::vector<float>{0, 1, -1, 3} : std::vector<float>{1, -1};
    int64_t len = static_cast<int64_t>(scale.size());
    auto s = b.input("s", DType::F32, {len});
    auto bi = b.input("b", DType::F32, {len});
    b.output(b.op("GroupNormalization", {x, s, bi}, {{"num_groups", attr_int(2)}}));
    auto xv = ramp(8);
    auto out = jit_eval(b.build(), {f32({1, 4, 2}, xv), f32({len}, scale), f32({len}, bias)});
    EXPECT_LE(closeness(out[0], f32({1, 4, 2}, group_norm_ref(xv, scale, bias, per_channel))), 1.0)
        << "opset " << opset;
  }
}

TEST(LpNormalization, L1AndL2AlongAnAxis) {
  for (int64_t p : {1, 2}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("a"), sym("b")});
    b.output(b.op("LpNormalization", {x}, {{"axis", attr_int(0)}, {"p", attr_int(p)}}));
    std::vector<float> xv{3, 0, -4, 0};  // [2, 2]: column 1 is all zeros and stays so
    auto out = jit_eval(b.build(), {f32({2, 2}, xv)});
    std::vector<float> ref = p == 1 ? std::vector<float>{3.f / 7, 0, -4.f / 7, 0} : std::vector<float>{0.6f, 0, -0.8f, 0};
    EXPECT_LE(closeness(out[0], f32({2, 2}, ref)), 1.0) << "p " << p;
  }
}

}  // namespace
}  // namespace disco
