// Shape values computed through float arithmetic, bound at run time
// (lowering/ops/run_time_dims.h): torchvision's detection transform in
// miniature, exported by torch.onnx at opsets 11 and 17 with dynamic H and W
// (tests/references/make_run_time_dims_references.py). Its Resize sizes are
// floor([H, W] * scale) and its Pad pads ceil(size / 16) * 16 - size, both in
// float32. One compile must serve every input shape, with no input's values
// compiled in, and give PyTorch's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "frontend/onnx_importer.h"
#include "runtime/npy.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

const std::string kDir = std::string(DISCO_SOURCE_DIR) + "/tests/references/run_time_dims/";
const char *kShapes[] = {"1x3x20x30", "1x3x10x37", "1x3x24x50"};

CompileOptions options() {
  CompileOptions o;
  o.use_cache = false;  // compiles() counts compiles, not cache hits
  return o;
}

void expect_close(const TensorData &got, const TensorData &want, const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  double worst = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i)
    worst = std::max(worst, std::fabs(got.float_at(i) - want.float_at(i)));
  EXPECT_LE(worst, 1e-5) << what << ": largest |disco - torch|";
}

void run_all_shapes(int opset) {
  const std::string model = kDir + "resize_pad.opset" + std::to_string(opset) + ".onnx";
  Session s(load_onnx_file(model), "resize_pad_" + std::to_string(opset), "", options());
  int compiles = -1;
  for (const char *shape : kShapes) {
    const std::string base = kDir + "resize_pad." + shape;
    auto out = s.run({read_npy(base + ".input.npy")});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], read_npy(base + ".output.npy"), std::string("opset ") + std::to_string(opset) + " " + shape);
    EXPECT_TRUE(s.value_inputs().empty()) << "x's values were compiled in at " << shape;
    if (compiles < 0) compiles = s.compiles();
    EXPECT_EQ(s.compiles(), compiles) << "a new compile for " << shape;
  }
  EXPECT_LE(compiles, 1);
}

TEST(RunTimeDims, TorchvisionResizeAndPadOpset11OneCompile) { run_all_shapes(11); }
TEST(RunTimeDims, TorchvisionResizeAndPadOpset17OneCompile) { run_all_shapes(17); }

// The decision's other side: sizes computed in float from a graph input's
// data (not its shape) are compiled in, one compile per value, as before.
TEST(RunTimeDims, SizesFromAGraphInputsDataAreCompiledIn) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 1, 2, 2});
  auto f = b.input("factor", DType::F32, {2});
  auto hw = b.op("Cast", {b.op("Floor", {b.op("Mul", {f, b.constant("two", testing::f32({2}, {2.f, 2.f}))})})},
                 testing::attrs({{"to", attr_int(7)}}));
  auto sizes = b.op("Concat", {b.constant("nc", testing::i64({2}, {1, 1})), hw}, testing::attrs({{"axis", attr_int(0)}}));
  auto empty = b.constant("empty", testing::f32({0}, {}));
  b.output(b.op("Resize", {x, empty, empty, sizes}, testing::attrs({{"mode", attr_string("nearest")}})));
  Session s(b.build(), "sizes_from_data", "", options());
  auto out = s.run({testing::f32({1, 1, 2, 2}, {1, 2, 3, 4}), testing::f32({2}, {1.5f, 1.f})});
  // sizes [1, 1, 3, 2]; nearest, half_pixel: output rows at x rows -1/6, 1/2, 7/6, rounded
  // prefer-floor to 0, 0, 1.
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 1, 3, 2}));
  EXPECT_EQ(testing::floats(out[0]), (std::vector<double>{1, 2, 1, 2, 3, 4}));
  EXPECT_EQ(s.value_inputs(), (std::set<size_t>{1}));
}

// The host op refuses what cannot be an extent, naming itself.
TEST(RunTimeDims, ANegativeValueIsAnError) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("n")});
  // n - 5 in float, cast back: negative for n < 5; Range reads it as a dim.
  auto nf = b.op("Cast", {b.op("Shape", {x})}, testing::attrs({{"to", attr_int(1)}}));
  auto m = b.op("Cast", {b.op("Sub", {nf, b.constant("five", testing::f32({1}, {5.f}))})},
                testing::attrs({{"to", attr_int(7)}}));
  b.output(b.op("ConstantOfShape", {m}));
  Session s(b.build(), "negative_run_time_dim", "", options());
  auto out = s.run({testing::f32({7}, 1.f, 0)});
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2}));
  EXPECT_TRUE(s.value_inputs().empty());
  try {
    s.run({testing::f32({3}, 1.f, 0)});
    FAIL() << "no error for a negative extent";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("RunTimeDims"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace disco
