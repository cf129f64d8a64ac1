#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "frontend/errors.h"
#include "frontend/graph_builder.h"
#include "lowering/infer_context.h"
#include "tests/support/jit_eval.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

// Naive batched matmul on [B, M, K] x [B, K, N] (batch already broadcast).
std::vector<float> naive_bmm(const std::vector<float> &a, const std::vector<float> &b, int64_t batch, int64_t m,
                             int64_t k, int64_t n) {
  std::vector<float> out(batch * m * n, 0.0f);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += a[(p * m + i) * k + q] * b[(p * k + q) * n + j];
        out[(p * m + i) * n + j] = static_cast<float>(s);
      }
  return out;
}

Graph inferred(Graph g) {
  ShapeStore store;
  infer_shapes(g, store);
  return g;
}

const Shape &output_shape(const Graph &g) { return *g.value(g.outputs[0]).shape; }

TEST(MatMulInference, TransformerProjectionKeepsSymbolicBatchAndSeq) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("b"), Dim::symbol("s"), 768});
  auto w = b.input("w", DType::F32, {768, 3072});
  b.output(b.op("MatMul", {x, w}));
  Graph g = inferred(b.build());
  EXPECT_EQ(output_shape(g), (Shape{Dim::symbol("b"), Dim::symbol("s"), 3072}));
}

TEST(MatMulInference, BatchDimsBroadcastAndOneDimOperandsAreDropped) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("p"), 1, 5, 4});
  auto y = b.input("y", DType::F32, {Dim::symbol("q"), 4, 6});
  auto v = b.input("v", DType::F32, {4});
  b.output(b.op("MatMul", {x, y}));
  b.output(b.op("MatMul", {v, y}));
  b.output(b.op("MatMul", {x, v}));
  Graph g = inferred(b.build());
  Dim p = Dim::symbol("p"), q = Dim::symbol("q");
  EXPECT_EQ(*g.value(g.outputs[0]).shape, (Shape{p, q, 5, 6}));
  EXPECT_EQ(*g.value(g.outputs[1]).shape, (Shape{q, 6}));
  EXPECT_EQ(*g.value(g.outputs[2]).shape, (Shape{p, 1, 5}));
}

TEST(MatMulInference, ConstantKMismatchNamesTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("b"), 3, 4});
  auto w = b.input("w", DType::F32, {5, 6});
  b.output(b.op("MatMul", {x, w}));
  expect_error_naming([&] { inferred(b.build()); }, "MatMul_0", "inner dims");
}

TEST(MatMulInference, SymbolicKMismatchFailsAtRunTimeNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("m"), Dim::symbol("k1")});
  auto y = b.input("y", DType::F32, {Dim::symbol("k2"), 2});
  b.output(b.op("MatMul", {x, y}));
  Graph g = b.build();
  expect_error_naming([&] { testing::jit_eval(g, {f32({2, 3}, ramp(6)), f32({4, 2}, ramp(8))}); }, "MatMul_0");
}

TEST(MatMulInference, ScalarOperandIsRejected) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {});
  auto y = b.input("y", DType::F32, {3});
  b.output(b.op("MatMul", {x, y}));
  expect_error_naming([&] { inferred(b.build()); }, "MatMul_0", "rank");
}

TEST(MatMul, BatchedTimesSharedWeight) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("batch"), Dim::symbol("seq"), 3});
  auto w = b.constant("w", f32({3, 4}, ramp(12, 0.5f, 3)));
  b.output(b.op("MatMul", {x, w}));
  auto a = ramp(2 * 5 * 3);
  auto out = testing::jit_eval(b.build(), {f32({2, 5, 3}, a)});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 5, 4}));
  // The shared weight is the batch-1 case of the naive reference.
  auto ref = naive_bmm(a, ramp(12, 0.5f, 3), 1, 10, 3, 4);
  EXPECT_LE(testing::closeness(out[0], f32({2, 5, 4}, ref)), 1.0);
}

TEST(MatMul, BroadcastsBatchDimsOfBothSides) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {Dim::symbol("p"), 1, Dim::symbol("m"), 3});
  auto y = b.input("y", DType::F32, {Dim::symbol("q"), 3, 2});
  b.output(b.op("MatMul", {x, y}));
  auto a = ramp(2 * 4 * 3), bb = ramp(3 * 3 * 2, 0.5f, 1);
  auto out = testing::jit_eval(b.build(), {f32({2, 1, 4, 3}, a), f32({3, 3, 2}, bb)});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 3, 4, 2}));
  std::vector<float> ref;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q) {
      std::vector<float> ap(a.begin() + p * 12, a.begin() + (p + 1) * 12);
      std::vector<float> bq(bb.begin() + q * 6, bb.begin() + (q + 1) * 6);
      auto r = naive_bmm(ap, bq, 1, 4, 3, 2);
      ref.insert(ref.end(), r.begin(), r.end());
    }
  EXPECT_LE(testing::closeness(out[0], f32({2, 3, 4, 2}, ref)), 1.0);
}

TEST(MatMul, OneDimOperands) {
  GraphBuilder b;
  auto v = b.input("v", DType::F32, {Dim::symbol("k")});
  auto m = b.input("m", DType::F32, {Dim::symbol("b"), Dim::symbol("k"), 2});
  auto mt = b.input("mt", DType::F32, {Dim::symbol("b"), 2, Dim::symbol("k")});
  b.output(b.op("MatMul", {v, m}));   // [b, 2]
  b.output(b.op("MatMul", {mt, v}));  // [b, 2]
  b.output(b.op("MatMul", {v, v}));   // []
  std::vector<float> vv{1, 2, 3};
  std::vector<float> mm{1, 0, 0, 1, 1, 1, 2, -1, 0.5f, 0, 3, 3};         // [2, 3, 2]
  std::vector<float> mtt{1, 2, 3, 4, 5, 6, -1, 0, 1, 0.5f, 0.5f, 0.5f};  // [2, 2, 3]
  auto out = testing::jit_eval(b.build(), {f32({3}, vv), f32({2, 3, 2}, mm), f32({2, 2, 3}, mtt)});
  // v @ m[p]: sum_k v[k] * m[p][k][j]
  EXPECT_LE(testing::closeness(out[0], f32({2, 2}, {1 + 0 + 3, 0 + 2 + 3, 2 + 1 + 9, -1 + 0 + 9})), 1.0);
  // mt[p] @ v: sum_k mt[p][i][k] * v[k]
  EXPECT_LE(testing::closeness(out[1], f32({2, 2}, {1 + 4 + 9, 4 + 10 + 18, -1 + 0 + 3, 0.5f + 1 + 1.5f})), 1.0);
  ASSERT_TRUE(out[2].shape.empty());
  EXPECT_FLOAT_EQ(static_cast<float>(out[2].float_at(0)), 14.0f);
}

TEST(MatMul, HalfInputsAccumulateInFloat) {
  GraphBuilder b;
  auto x = b.input("x", DType::F16, {Dim::symbol("m"), Dim::symbol("k")});
  auto y = b.input("y", DType::F16, {Dim::symbol("k"), 1});
  b.output(b.op("MatMul", {x, y}));
  // 2048 + 1 + 1 + ... : in half, 2048 + 1 rounds back to 2048 every time.
  const int k = 65;
  TensorData a(DType::F16, {1, k}), w(DType::F16, {k, 1});
  for (int i = 0; i < k; ++i) {
    a.mutable_as<uint16_t>()[i] = float_to_half(i == 0 ? 2048.0f : 1.0f);
    w.mutable_as<uint16_t>()[i] = float_to_half(1.0f);
  }
  auto out = testing::jit_eval(b.build(), {a, w});
  ASSERT_EQ(out[0].dtype, DType::F16);
  EXPECT_EQ(out[0].float_at(0), 2112.0);  // exactly representable in half
}

// ---- Gemm ------------------------------------------------------------------

struct GemmCase {
  bool ta, tb;
  float alpha, beta;
  std::vector<int64_t> c_shape;  // empty vector with has_c = false: no C
  bool has_c;
};

// Reference: alpha * op(A) @ op(B) + beta * C broadcast, with A [M,K] / [K,M].
std::vector<float> naive_gemm(const GemmCase &g, const std::vector<float> &a, const std::vector<float> &b,
                              const std::vector<float> &cc, int64_t m, int64_t k, int64_t n) {
  std::vector<float> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) s += a[g.ta ? q * m + i : i * k + q] * b[g.tb ? j * k + q : q * n + j];
      double cv = 0;
      if (g.has_c) {
        int64_t ci = 0;
        if (g.c_shape.size() == 2) ci = (g.c_shape[0] == 1 ? 0 : i) * g.c_shape[1] + (g.c_shape[1] == 1 ? 0 : j);
        if (g.c_shape.size() == 1) ci = g.c_shape[0] == 1 ? 0 : j;
        cv = cc[ci];
      }
      out[i * n + j] = static_cast<float>(g.alpha * s + g.beta * cv);
    }
  return out;
}

void run_gemm(const GemmCase &g, int opset = 13) {
  const int64_t m = 3, k = 4, n = 5;
  GraphBuilder b(opset);
  Dim M = Dim::symbol("M"), K = Dim::symbol("K");
  auto x = b.input("a", DType::F32, g.ta ? Shape{K, M} : Shape{M, K});
  auto y = b.input("b", DType::F32, g.tb ? Shape{n, K} : Shape{K, n});
  std::vector<std::string> ins{x, y};
  int64_t c_elems = 1;
  if (g.has_c) {
    Shape cs;
    for (auto d : g.c_shape) {
      cs.push_back(d == m ? Dim(M) : Dim(d));
      c_elems *= d;
    }
    ins.push_back(b.input("c", DType::F32, cs));
  }
  Attributes at{{"transA", attr_int(g.ta)},
                {"transB", attr_int(g.tb)},
                {"alpha", attr_float(g.alpha)},
                {"beta", attr_float(g.beta)}};
  b.output(b.op("Gemm", ins, at));
  auto a = ramp(m * k), bb = ramp(k * n, 0.5f, 2), cc = ramp(c_elems, 1.0f, 5);
  std::vector<TensorData> inputs{f32(g.ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, a),
                                 f32(g.tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, bb)};
  if (g.has_c) inputs.push_back(f32(g.c_shape, cc));
  auto out = testing::jit_eval(b.build(), inputs);
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{m, n}));
  EXPECT_LE(testing::closeness(out[0], f32({m, n}, naive_gemm(g, a, bb, cc, m, k, n))), 1.0);
}

TEST(Gemm, PlainWithFullC) { run_gemm({false, false, 1.0f, 1.0f, {3, 5}, true}); }
TEST(Gemm, TransposedWithScalesAndRowBias) { run_gemm({true, true, 0.5f, 2.0f, {5}, true}); }
TEST(Gemm, TransBWithColumnC) { run_gemm({false, true, 1.0f, -1.0f, {3, 1}, true}); }
TEST(Gemm, ScalarCAtOpset9) { run_gemm({true, false, 2.0f, 1.0f, {1}, true}, 9); }
TEST(Gemm, NoCFromOpset11) { run_gemm({false, true, 1.5f, 1.0f, {}, false}, 11); }

// Inferring Gemm over inputs of these shapes (and attributes, opset) fails,
// naming Gemm_0 and, when given, saying `why`.
void expect_gemm_inference_fails(Shape a, Shape b_shape, Shape c, Attributes attrs, const std::string &why,
                                 int opset = 17) {
  GraphBuilder b(opset);
  std::vector<std::string> ins = {b.input("a", DType::F32, a), b.input("b", DType::F32, b_shape)};
  if (!c.empty()) ins.push_back(b.input("c", DType::F32, c));
  b.output(b.op("Gemm", ins, attrs));
  expect_error_naming([&] { inferred(b.build()); }, "Gemm_0", why);
}

TEST(GemmInference, MissingCBeforeOpset11IsAnError) {
  expect_gemm_inference_fails({2, 3}, {3, 4}, {}, {}, "opset 11", 9);
}

TEST(GemmInference, KMismatchAndBadRankAreErrors) {
  expect_gemm_inference_fails({Dim::symbol("m"), 3}, {4, 3}, {}, {{"transB", attr_int(0)}}, "inner dims");
  expect_gemm_inference_fails({2, 2, 3}, {3, 4}, {}, {}, "2-D");
}

TEST(GemmInference, CThatCannotBroadcastIsAnError) {
  expect_gemm_inference_fails({Dim::symbol("m"), 3}, {3, 4}, {2}, {}, "");
}

}  // namespace
}  // namespace disco
