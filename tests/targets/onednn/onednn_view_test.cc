// The oneDNN backend's views (targets/onednn/onednn_view.h): the Reshape and
// Transpose nodes around a MatMul that its step reads and writes in place
// with strides, as in attention. Which nodes the rules take, the numbers
// against plain scalar references at several run-time shapes of one compile,
// and the run-time errors of a view that does not fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "frontend/graph_builder.h"
#include "runtime/extern_kernel.h"
#include "targets/onednn/onednn_kernels.h"
#include "targets/onednn/onednn_view.h"
#include "targets/onednn/panel_gemm.h"
#include "driver/session.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::count_steps;
using testing::numel;
using testing::onednn_first;
using testing::tensor;
using testing::ramp;
using testing::sym;
using testing::Dims;

// ---- the layouts ------------------------------------------------------------------

TEST(OnednnView, AReshapeThenTransposeIsAStridedReadOfTheDenseInput) {
  // [2, 3, 12] as [2, 3, 4, 3], transposed (0, 2, 1, 3): dims [2, 4, 3, 3].
  OperandView v{{"in0", "in1", "4", "rest"}, {0, 2, 1, 3}};
  const StridedDims s = v.apply({2, 3, 12}, "A");
  EXPECT_EQ(s.dims, (Dims{2, 4, 3, 3}));
  EXPECT_EQ(s.strides, (Dims{36, 3, 12, 1}));
  testing::expect_error_naming([&] { v.apply({2, 3, 10}, "A"); }, "A [2, 3, 10]", "cannot be viewed as");
}

TEST(OnednnView, AResultWrittenThroughATransposeLandsWhereTheTransposePutsIt) {
  // A result [2, 4, 3] written transposed (1, 0, 2) into a dense [4, 2, 3].
  const StridedDims s = scattered_layout({2, 4, 3}, {1, 0, 2});
  EXPECT_EQ(s.strides, (Dims{3, 6, 1}));
  std::vector<float> dense(24), out(24, -1.0f);
  for (int i = 0; i < 24; ++i) dense[i] = static_cast<float>(i);
  copy_to_layout(dense.data(), out.data(), s);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(out[(b * 2 + a) * 3 + c], dense[(a * 4 + b) * 3 + c]) << a << b << c;
}

// ---- attention ------------------------------------------------------------------

// q, k, v [b, s, H * D] split into H heads, softmax(q k^T / 2) v, heads merged back.
struct Attention {
  int64_t heads, depth;
  Graph graph(bool symbolic_channels) const {
    GraphBuilder b;
    const Dim c = symbolic_channels ? sym("c") : Dim(heads * depth);
    auto q = b.input("q", DType::F32, {sym("b"), sym("s"), c});
    auto k = b.input("k", DType::F32, {sym("b"), sym("s"), c});
    auto v = b.input("v", DType::F32, {sym("b"), sym("s"), c});
    // With symbolic channels the head count is what is left: [0, 0, -1, depth].
    auto split = b.constant("split", testing::i64({4}, {0, 0, symbolic_channels ? -1 : heads, depth}));
    auto merge = b.constant("merge", testing::i64({3}, {0, 0, -1}));
    auto heads_of = [&](const std::string &x, std::vector<int64_t> perm) {
      return b.op("Transpose", {b.op("Reshape", {x, split})}, testing::attrs({{"perm", attr_ints(perm)}}));
    };
    auto scores = b.op("Div", {b.op("MatMul", {heads_of(q, {0, 2, 1, 3}), heads_of(k, {0, 2, 3, 1})}),
                               b.constant("two", testing::f32({}, {2.0f}))});
    auto p = b.op("Softmax", {scores}, testing::attrs({{"axis", attr_int(-1)}}));
    auto o = b.op("MatMul", {p, heads_of(v, {0, 2, 1, 3})});
    b.output(b.op("Reshape", {b.op("Transpose", {o}, testing::attrs({{"perm", attr_ints({0, 2, 1, 3})}})), merge}));
    return b.build();
  }
  std::vector<float> reference(const TensorData &q, const TensorData &k, const TensorData &v) const {
    const int64_t nb = q.shape[0], ns = q.shape[1], c = heads * depth;
    auto at = [&](const TensorData &t, int64_t b, int64_t s, int64_t h, int64_t d) {
      return static_cast<double>(t.as<float>()[(b * ns + s) * c + h * depth + d]);
    };
    std::vector<float> y(nb * ns * c);
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < ns; ++i) {
          std::vector<double> p(ns);
          double mx = -1e300, sum = 0;
          for (int64_t j = 0; j < ns; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < depth; ++d) dot += at(q, b, i, h, d) * at(k, b, j, h, d);
            p[j] = dot / 2;
            mx = std::max(mx, p[j]);
          }
          for (auto &x : p) sum += (x = std::exp(x - mx));
          for (int64_t d = 0; d < depth; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < ns; ++j) acc += p[j] / sum * at(v, b, j, h, d);
            y[(b * ns + i) * c + h * depth + d] = static_cast<float>(acc);
          }
        }
    return y;
  }
};

TEST(OnednnView, AttentionHeadSplitsAndMergeAreReadAndWrittenInPlace) {
  for (bool symbolic : {false, true}) {
    const Attention att{3, 4};
    auto p = testing::partition_for(att.graph(symbolic), {"onednn", "host"});
    for (const char *op : {"Reshape", "Transpose"})
      for (int nth = 0; nth < 4; ++nth) EXPECT_EQ(p.backend_of(op, nth), "onednn") << op << " " << nth;
    EXPECT_EQ(p.backend_of("Softmax"), "host");

    Session s(att.graph(symbolic), "attention_views", "", onednn_first());
    const auto steps = count_steps(s.last_compile().plan);
    EXPECT_EQ(steps.onednn, 2);
    EXPECT_EQ(steps.other, 1) << "the softmax alone runs on the host";
    for (Dims bs : {Dims{1, 1}, Dims{2, 5}, Dims{3, 17}}) {
      const Dims shape{bs[0], bs[1], 12};
      TensorData q = tensor(shape, 0.125f), k = tensor(shape, 0.25f, 3), v = tensor(shape, 0.5f, 7);
      auto out = s.run({q, k, v});
      const auto want = att.reference(q, k, v);
      ASSERT_EQ(out[0].shape, shape);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(out[0].as<float>()[i], want[i], 1e-5 + 1e-4 * std::fabs(want[i]))
            << (symbolic ? "symbolic" : "constant") << " channels, b " << bs[0] << " s " << bs[1] << " element " << i;
    }
    EXPECT_EQ(s.compiles(), 1);
  }
}

TEST(OnednnView, ATransposeBetweenTwoMatMulsGoesToTheReaderAndNoNodeIsTakenTwice) {
  // y = (x W1)^T x2, and z = (reshape((x W2)^T))^T W3: each view node has one owner.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, 4});
  auto x2 = b.input("x2", DType::F32, {sym("n"), 3, 10});
  TensorData w1 = tensor({4, 5}, 0.5f, 1), w2 = tensor({4, 6}, 0.25f, 2);
  auto t = b.op("Transpose", {b.op("MatMul", {x, b.constant("w1", w1)})},
                testing::attrs({{"perm", attr_ints({0, 2, 1})}}));  // [n, 5, 3]
  b.output(b.op("MatMul", {t, x2}));  // [n, 5, 10]
  // A Transpose of a Reshape of a transposed result: the first Transpose is the
  // producer's, the Reshape and the second Transpose the reader's.
  auto u = b.op("Transpose", {b.op("MatMul", {x, b.constant("w2", w2)})},
                testing::attrs({{"perm", attr_ints({0, 2, 1})}}));  // [n, 6, 3]
  auto r = b.op("Reshape", {u, b.constant("s2", testing::i64({4}, {0, 2, 3, 3}))});
  auto v = b.op("Transpose", {r}, testing::attrs({{"perm", attr_ints({0, 1, 3, 2})}}));  // [n, 2, 3, 3]
  b.output(b.op("MatMul", {v, b.constant("w3", tensor({3, 2}, 0.5f, 4))}));  // [n, 2, 3, 2]
  const Graph g = b.build();
  auto p = testing::partition_for(g, {"onednn", "host"});
  for (int nth = 0; nth < 3; ++nth) EXPECT_EQ(p.backend_of("Transpose", nth), "onednn") << nth;
  EXPECT_EQ(p.backend_of("Reshape"), "onednn");

  Session s(g, "view_owners", "", onednn_first());
  const auto steps = count_steps(s.last_compile().plan);
  EXPECT_EQ(steps.onednn, 4);
  EXPECT_EQ(steps.other, 0);
  for (int64_t n : {1, 3}) {
    TensorData tx = tensor({n, 3, 4}), tx2 = tensor({n, 3, 10}, 0.5f, 5);
    auto out = s.run({tx, tx2});
    // Plain loops: xw1[n,3,5], y[n,5,10] = sum_i xw1[n,i,a] * x2r[n,i,c] over i < 3.
    std::vector<float> y(n * 50), z(n * 12);
    for (int64_t bb = 0; bb < n; ++bb) {
      auto xw = [&](const TensorData &w, int64_t cols, int64_t i, int64_t j) {
        double acc = 0;
        for (int64_t q = 0; q < 4; ++q) acc += double(tx.as<float>()[(bb * 3 + i) * 4 + q]) * w.as<float>()[q * cols + j];
        return acc;
      };
      for (int64_t a = 0; a < 5; ++a)
        for (int64_t c = 0; c < 10; ++c) {
          double acc = 0;
          for (int64_t i = 0; i < 3; ++i) acc += xw(w1, 5, i, a) * tx2.as<float>()[bb * 30 + i * 10 + c];
          y[(bb * 5 + a) * 10 + c] = static_cast<float>(acc);
        }
      // u[n,6,3] = (x w2)^T, r = u as [n,2,3,3], v = r with its last two dims swapped.
      std::vector<double> uu(18);
      for (int64_t j = 0; j < 6; ++j)
        for (int64_t i = 0; i < 3; ++i) uu[j * 3 + i] = xw(w2, 6, i, j);
      const TensorData w3 = tensor({3, 2}, 0.5f, 4);
      for (int64_t g2 = 0; g2 < 2; ++g2)
        for (int64_t e = 0; e < 3; ++e)
          for (int64_t o = 0; o < 2; ++o) {
            double acc = 0;
            for (int64_t f = 0; f < 3; ++f) acc += uu[g2 * 9 + f * 3 + e] * w3.as<float>()[f * 2 + o];
            z[((bb * 2 + g2) * 3 + e) * 2 + o] = static_cast<float>(acc);
          }
    }
    ASSERT_EQ(out[0].shape, (Dims{n, 5, 10}));
    ASSERT_EQ(out[1].shape, (Dims{n, 2, 3, 2}));
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(out[0].as<float>()[i], y[i], 1e-4 + 1e-4 * std::fabs(y[i])) << i;
    for (size_t i = 0; i < z.size(); ++i) ASSERT_NEAR(out[1].as<float>()[i], z[i], 1e-4 + 1e-4 * std::fabs(z[i])) << i;
  }
}

// ---- the glue -----------------------------------------------------------------------

std::unique_ptr<OnednnKernel> make_matmul(std::map<std::string, std::string> params) {
  install_onednn_runtime();
  PlanStep step;
  step.extern_call = "onednn.matmul";
  step.label = "view_step";
  step.params = std::move(params);
  step.params["trans_a"] = "0";
  step.params["trans_b"] = "0";
  auto k = (*ExternKernelRegistry::global().find("onednn.matmul"))(step);
  return std::unique_ptr<OnednnKernel>(dynamic_cast<OnednnKernel *>(k.release()));
}

using testing::view;  // an ExternTensor over a TensorData

TEST(OnednnView, ARunTimeShapeThatDoesNotFitTheViewIsAnErrorNamingTheStep) {
  auto k = make_matmul({{"post_ops", ""}, {"a_perm", "0,2,1,3"}, {"a_reshape", "in0,in1,2,3"}});
  TensorData a = tensor({1, 4, 7}), w = tensor({3, 5}), y(DType::F32, {1, 2, 4, 5});
  std::vector<ExternTensor> ins{view(a), view(w)}, outs{view(y)};
  SymbolValues syms;
  testing::expect_error_naming([&] { k->run(ExternCall{ins, outs, syms}); }, "view_step", "cannot be viewed as");
  testing::expect_error_naming([&] { make_matmul({{"post_ops", ""}, {"a_perm", "0,0,1"}}); }, "view_step",
                               "not a permutation");
}

TEST(OnednnView, ATransposedInputOfAnUnbatchedLinearIsOneProductOverAllItsRows) {
  // torch's MultiheadAttention: x [B, L, E] read as [L, B, E] by its fused qkv
  // Linear, with constant weights [E, N] and a bias. The product runs over the
  // L * B rows at once: in place at B = 1, else from a reorder into dense rows;
  // at 200 rows and N = 512 on AVX2 CPUs that is the panel product.
  struct Case {
    int64_t batch, len, e, n;
  };
  for (const Case c : {Case{1, 5, 8, 6}, Case{3, 5, 8, 6}, Case{1, 100, 512, 512}, Case{2, 100, 512, 512}}) {
    auto k = make_matmul({{"post_ops", "add"}, {"a_perm", "1,0,2"}});
    TensorData x = tensor({c.batch, c.len, c.e}, 0.25f, 3), w = tensor({c.e, c.n}, 0.125f, 5);
    TensorData bias = tensor({c.n}, 0.5f, 7), y(DType::F32, {c.len, c.batch, c.n});
    std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    const std::string what = "x [" + std::to_string(c.batch) + ", " + std::to_string(c.len) + ", " +
                             std::to_string(c.e) + "], " + k->implementation();
    double worst = 0;
    for (int64_t l = 0; l < c.len; ++l)
      for (int64_t bb = 0; bb < c.batch; ++bb)
        for (int64_t j = 0; j < c.n; ++j) {
          double acc = bias.as<float>()[j], mag = std::fabs(acc);
          for (int64_t q = 0; q < c.e; ++q) {
            const double t = double(x.as<float>()[(bb * c.len + l) * c.e + q]) * w.as<float>()[q * c.n + j];
            acc += t, mag += std::fabs(t);
          }
          const double got = y.as<float>()[(l * c.batch + bb) * c.n + j];
          worst = std::max(worst, std::fabs(got - acc) / (1e-6 + 2 * c.e * 0x1p-24 * mag));
        }
    EXPECT_LE(worst, 1.0) << what;
    EXPECT_EQ(k->implementation().find("A's rows by reorder") != std::string::npos, c.batch > 1) << what;
    EXPECT_EQ(k->implementation().find("ref"), std::string::npos) << what;
    if (c.n == 512 && panel_gemm_avx2_cpu() && !panel_gemm_cpu()) {
      EXPECT_EQ(k->implementation().rfind("panel_gemm avx2", 0), 0u) << what;
    }
  }
}

TEST(OnednnView, AnEmptyReductionWritesTheEpilogueThroughTheResultView) {
  // K == 0: the result [2, 3] is the bias broadcast; written transposed as [3, 2].
  auto k = make_matmul({{"post_ops", "add"}, {"out_perm", "1,0"}, {"out_reshaped", "0"}});
  TensorData a(DType::F32, {2, 0}), w(DType::F32, {0, 3}), bias = testing::f32({3}, {1.0f, 2.0f, 3.0f});
  TensorData y(DType::F32, {3, 2});
  std::vector<ExternTensor> ins{view(a), view(w), view(bias)}, outs{view(y)};
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(y.as<float>()[j * 2 + i], bias.as<float>()[j]) << j << i;
}

}  // namespace
}  // namespace disco
