// Numeric tests of Trilu (lowering/ops/mask_ops.cc) with its diagonal offset
// from shapes, compared with values worked out by hand from the ONNX spec.
#include <gtest/gtest.h>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const Dim t = Dim::symbol("t"), s = Dim::symbol("s");

// A causal mask over a KV cache: q has t rows, k has s columns, and row i sees
// the columns up to i + s - t (torch.ones(t, s).tril(s - t)). The offset was
// needed at compile time, so each (t, s) compiled its values in.
TEST(MaskOps, TriluWithAnOffsetFromShapesIsACausalMaskOverACache) {
  GraphBuilder b(14);
  auto q = b.input("q", DType::F32, {t, 2});
  auto k = b.input("k", DType::F32, {s, 2});
  auto zero = b.constant("zero", i64({1}, {0}));
  auto dim = [&](const std::string &x) { return b.op("Gather", {b.op("Shape", {x}), zero}); };
  auto ones = b.op("ConstantOfShape", {b.op("Concat", {dim(q), dim(k)}, attrs({{"axis", attr_int(0)}}))},
                   attrs({{"value", attr_tensor(f32({1}, {1.f}))}}));
  auto offset = b.op("Squeeze", {b.op("Sub", {dim(k), dim(q)}), zero});
  b.output(b.op("Trilu", {ones, offset}, attrs({{"upper", attr_int(0)}})));
  auto g = b.build();
  // t = 2, s = 4: rows see columns 0..2 and 0..3.
  auto out = jit_eval(g, {iota_f32({2, 2}), iota_f32({4, 2})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 1, 1, 0, 1, 1, 1, 1}));
  // t = 3, s = 3: the plain lower triangle.
  out = jit_eval(g, {iota_f32({3, 2}), iota_f32({3, 2})});
  EXPECT_EQ(floats(out[0]), (std::vector<double>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
}

}  // namespace
}  // namespace disco
