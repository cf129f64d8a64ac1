// What the ONNX node tests leave out for Det, Einsum and Hardmax: pivoting
// and permutation signs on larger matrices, `...` broadcasting across inputs,
// implicit outputs, and Hardmax's pre-13 coercion to 2-D.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/graph_builder.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// Laplace expansion along the first row: slow, but independent of pivoting.
double cofactor_det(const std::vector<double> &m, int n) {
  if (n == 1) return m[0];
  double det = 0;
  for (int c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int i = 1; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (j != c) minor.push_back(m[i * n + j]);
    det += (c % 2 ? -1 : 1) * m[c] * cofactor_det(minor, n - 1);
  }
  return det;
}

TEST(Det, PivotsAndTracksTheSignOnSymbolicMatrices) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("batch"), sym("n"), sym("n")});
  b.output(b.op("Det", {x}));
  Graph g = b.build();
  // Batch 0 has a zero leading pivot, batch 1 is singular, batch 2 is generic.
  std::vector<float> v = {0, 2, 1, 3,  1, 0, 4, 1,  2, 1, 0, 5,  1, 1, 1, 0,
                          1, 2, 3, 4,  2, 4, 6, 8,  0, 1, 0, 1,  5, 3, 2, 1};
  std::vector<float> r = ramp(16, 0.5f, 3);
  v.insert(v.end(), r.begin(), r.end());
  auto out = floats(jit_eval(g, {f32({3, 4, 4}, v)})[0]);
  ASSERT_EQ(out.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    std::vector<double> m(v.begin() + 16 * k, v.begin() + 16 * (k + 1));
    double want = cofactor_det(m, 4);
    EXPECT_NEAR(out[k], want, 1e-4 * std::max(1.0, std::fabs(want))) << "batch " << k;
  }
  // The same compiled kernel at another n.
  auto one = floats(jit_eval(g, {f32({1, 3, 3}, {0, 0, 1, 0, 1, 0, 1, 0, 0})})[0]);
  EXPECT_NEAR(one[0], -1.0, 1e-6);
}

TEST(Einsum, EllipsisBroadcastsAcrossInputs) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {2, 1, 3, 4});
  auto y = b.input("y", DType::F32, {5, 4, 2});
  b.output(b.op("Einsum", {x, y}, attrs({{"equation", attr_string("...ij,...jk->...ik")}})));
  Graph g = b.build();
  auto xs = ramp(24), ys = ramp(40, 0.5f, 1);
  auto out = jit_eval(g, {f32({2, 1, 3, 4}, xs), f32({5, 4, 2}, ys)})[0];
  ASSERT_EQ(out.shape, (std::vector<int64_t>{2, 5, 3, 2}));
  auto got = floats(out);
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 5; ++q)
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 2; ++k) {
          double s = 0;
          for (int j = 0; j < 4; ++j) s += xs[(p * 3 + i) * 4 + j] * ys[(q * 4 + j) * 2 + k];
          EXPECT_NEAR(got[((p * 5 + q) * 3 + i) * 2 + k], s, 1e-5);
        }
}

TEST(Einsum, ImplicitOutputSortsTheLettersAndTraceSumsTheDiagonal) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), sym("n")});
  auto y = b.input("y", DType::F32, {sym("n"), 2});
  b.output(b.op("Einsum", {x, y}, attrs({{"equation", attr_string("ba,bc")}})));  // -> "ac"
  b.output(b.op("Einsum", {x}, attrs({{"equation", attr_string("ii")}})));
  Graph g = b.build();
  auto xs = ramp(9), ys = ramp(6, 1.0f, 2);
  auto outs = jit_eval(g, {f32({3, 3}, xs), f32({3, 2}, ys)});
  auto ac = floats(outs[0]);
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 2; ++c) {
      double s = 0;
      for (int bb = 0; bb < 3; ++bb) s += xs[bb * 3 + a] * ys[bb * 2 + c];
      EXPECT_NEAR(ac[a * 2 + c], s, 1e-5);
    }
  EXPECT_TRUE(outs[1].shape.empty());
  EXPECT_NEAR(floats(outs[1])[0], xs[0] + xs[4] + xs[8], 1e-6);
}

TEST(Hardmax, BeforeOpset13TheOneHotSpansTheTrailingBlock) {
  GraphBuilder b(11);
  auto x = b.input("x", DType::F32, {2, sym("m"), 3});
  b.output(b.op("Hardmax", {x}, attrs({{"axis", attr_int(1)}})));
  Graph g = b.build();
  std::vector<float> v = {1, 5, 2, 9, 0, 9,   // first 9 of the block wins
                          -1, -2, -3, -4, -5, -6};
  auto got = floats(jit_eval(g, {f32({2, 2, 3}, v)})[0]);
  EXPECT_EQ(got, (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace disco
