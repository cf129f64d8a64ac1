// Issue #21: no product of the oneDNN backend runs oneDNN's reference code
// ("ref:any", 100x to 1000x slower than its JIT kernels). Each test compiles
// one dot form once (the t5 and convnext forms from the model zoo, transposed
// and strided operands, batched MatMul with broadcast, Gemm with transposes,
// a Linear followed by a Transpose, post-op operands broadcast every way),
// runs it at several shapes, batch > 1 among them, and checks every oneDNN
// step's implementation (the kernels' implementation(), which names the
// primitive oneDNN chose and any staging around it) and the numbers against
// plain loops written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "runtime/extern_kernel.h"
#include "targets/onednn/onednn_kernels.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/plan_steps.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

// ---- what the oneDNN steps ran -------------------------------------------------

// Every run of a oneDNN step since the last take(): "label (call): implementation".
std::vector<std::string> &ran_log() {
  static std::vector<std::string> log;
  return log;
}

// A oneDNN kernel that logs its implementation after each run.
class LoggedKernel : public OnednnKernel {
 public:
  LoggedKernel(std::unique_ptr<ExternKernel> inner, std::string what)
      : inner_(dynamic_cast<OnednnKernel *>(inner.get())), what_(std::move(what)) {
    if (inner_) inner.release();
    EXPECT_TRUE(inner_) << what_ << " is not a oneDNN kernel";
  }
  void run(const ExternCall &call) override {
    inner_->run(call);
    ran_log().push_back(what_ + ": " + inner_->implementation());
  }
  void set_num_threads(int n) override { inner_->set_num_threads(n); }
  size_t cached_shapes() const override { return inner_->cached_shapes(); }
  int64_t primitives_created() const override { return inner_->primitives_created(); }
  std::string implementation() const override { return inner_->implementation(); }

 private:
  std::unique_ptr<OnednnKernel> inner_;
  std::string what_;
};

// Wraps the oneDNN kernels' factories (once: install_onednn_runtime adds them once per process).
void log_onednn_runs() {
  static const bool done = [] {
    install_onednn_runtime();
    auto &registry = ExternKernelRegistry::global();
    for (const char *call : {"onednn.matmul", "onednn.conv", "onednn.pool"}) {
      ExternKernelFactory make = *registry.find(call);
      registry.add(call, [make](const PlanStep &step) -> std::unique_ptr<ExternKernel> {
        return std::make_unique<LoggedKernel>(make(step), step.label + " (" + step.extern_call + ")");
      });
    }
    return true;
  }();
  (void)done;
}

// The steps' implementations since the last call: at least one, none of them oneDNN's reference code.
void expect_no_reference_code(const std::string &what) {
  std::vector<std::string> ran;
  ran.swap(ran_log());
  EXPECT_FALSE(ran.empty()) << what << ": no oneDNN step ran";
  for (const auto &r : ran) EXPECT_EQ(r.find("ref"), std::string::npos) << what << ": " << r;
}

Session compile(const Graph &g, const std::string &name) {
  log_onednn_runs();
  Session s(g, name, "", onednn_first());
  EXPECT_GE(count_steps(s.last_compile().plan).onednn, 1) << name;
  return s;
}

// ---- plain references -----------------------------------------------------------

// `v` of `dims` transposed by `perm` (ONNX Transpose).
std::vector<float> transposed(const std::vector<float> &v, const Dims &dims, const Dims &perm, Dims *out) {
  out->clear();
  for (int64_t p : perm) out->push_back(dims[p]);
  const size_t rank = dims.size();
  Dims from(rank);  // from[d]: the output dim that input dim d became
  for (size_t j = 0; j < rank; ++j) from[static_cast<size_t>(perm[j])] = static_cast<int64_t>(j);
  std::vector<float> r(v.size());
  Dims idx(rank, 0);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), off = 0;
    for (size_t d = rank; d-- > 0;) idx[d] = rest % (*out)[d], rest /= (*out)[d];
    for (size_t d = 0; d < rank; ++d) off = off * dims[d] + idx[static_cast<size_t>(from[d])];
    r[i] = v[off];
  }
  return r;
}

// a + b (or a * b), numpy broadcasting of b into a's `dims`.
std::vector<float> combined(std::vector<float> a, const Dims &dims, const std::vector<float> &b, const Dims &bd,
                            bool mul) {
  const auto eb = expand(b, bd, dims);
  for (size_t i = 0; i < a.size(); ++i) a[i] = mul ? a[i] * eb[i] : a[i] + eb[i];
  return a;
}

std::vector<float> vals(const TensorData &t) { return values(t); }

constexpr double kRtol = 1e-4, kAtol = 1e-4;

// ---- the forms ------------------------------------------------------------------

TEST(OnednnNoReferenceCode, T5AttentionScoresWithAPositionBiasOverABatch) {
  // t5_block: q and k [b, s, H * D] split into heads as strided operands, the
  // scores plus a position bias [1, H, s, s] that broadcasts over the batch
  // (at batch 2 and 4 oneDNN's matmul picked ref:any for this); then the
  // context P V with the heads merged back through a Transpose and Reshape.
  const int64_t heads = 4, depth = 8;
  GraphBuilder b;
  auto q = b.input("q", DType::F32, {sym("b"), sym("s"), heads * depth});
  auto k = b.input("k", DType::F32, {sym("b"), sym("s"), heads * depth});
  auto v = b.input("v", DType::F32, {sym("b"), sym("s"), heads * depth});
  auto bias = b.input("bias", DType::F32, {1, heads, sym("s"), sym("s")});
  auto p = b.input("p", DType::F32, {sym("b"), heads, sym("s"), sym("s")});
  auto split = b.constant("split", i64({4}, {0, 0, heads, depth}));
  auto heads_of = [&](const std::string &x, Dims perm) {
    return b.op("Transpose", {b.op("Reshape", {x, split})}, attrs({{"perm", attr_ints(perm)}}));
  };
  b.output(b.op("Add", {b.op("MatMul", {heads_of(q, {0, 2, 1, 3}), heads_of(k, {0, 2, 3, 1})}), bias}));
  auto ctx = b.op("MatMul", {p, heads_of(v, {0, 2, 1, 3})});
  b.output(b.op("Reshape", {b.op("Transpose", {ctx}, attrs({{"perm", attr_ints({0, 2, 1, 3})}})),
                            b.constant("merge", i64({3}, {0, 0, -1}))}));
  Session s = compile(b.build(), "t5_scores");
  for (Dims bs : {Dims{1, 7}, Dims{2, 7}, Dims{4, 16}, Dims{2, 1}}) {
    const int64_t n = bs[0], sq = bs[1];
    const Dims sx{n, sq, heads * depth}, sb{1, heads, sq, sq}, sp{n, heads, sq, sq};
    TensorData tq = random_f32(sx, 1), tk = random_f32(sx, 2), tv = random_f32(sx, 3), tb = random_f32(sb, 4),
               tp = random_f32(sp, 5);
    auto out = s.run({tq, tk, tv, tb, tp});
    const std::string what = "b " + std::to_string(n) + " s " + std::to_string(sq);
    // Heads: [n, s, H, D] -> [n, H, s, D]; keys -> [n, H, D, s].
    const Dims split_dims{n, sq, heads, depth};
    Dims hq, hk, hv, os, oc;
    auto qh = transposed(vals(tq), split_dims, {0, 2, 1, 3}, &hq);
    auto kh = transposed(vals(tk), split_dims, {0, 2, 3, 1}, &hk);
    auto vh = transposed(vals(tv), split_dims, {0, 2, 1, 3}, &hv);
    auto scores = combined(ref_matmul(qh, hq, kh, hk, &os), os, vals(tb), sb, false);
    expect_near_all(out[0], os, scores, what + " scores", kRtol, kAtol);
    Dims om;
    auto merged = transposed(ref_matmul(vals(tp), sp, vh, hv, &oc), oc, {0, 2, 1, 3}, &om);
    expect_near_all(out[1], {n, sq, heads * depth}, merged, what + " context", kRtol, kAtol);
    expect_no_reference_code(what);
  }
  EXPECT_EQ(s.compiles(), 1);
}

TEST(OnednnNoReferenceCode, ConvNextLinearsBetweenChannelsLastPermutes) {
  // convnext_tiny's block after its depthwise conv: NCHW permuted channels
  // last, Linear, Relu (GELU there), Linear, a layer scale, permuted back
  // (the result transposed so that its rows are not contiguous: ref:any when
  // the product wrote it in place), plus the residual.
  const int64_t c = 8;
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), c, sym("h"), sym("w")});
  TensorData w1 = random_f32({c, 4 * c}, 11, 0.5f), b1 = random_f32({4 * c}, 12), w2 = random_f32({4 * c, c}, 13, 0.5f),
             b2 = random_f32({c}, 14), gamma = random_f32({c}, 15);
  auto y = b.op("Transpose", {x}, attrs({{"perm", attr_ints({0, 2, 3, 1})}}));
  y = b.op("Relu", {b.op("Add", {b.op("MatMul", {y, b.constant("w1", w1)}), b.constant("b1", b1)})});
  y = b.op("Add", {b.op("MatMul", {y, b.constant("w2", w2)}), b.constant("b2", b2)});
  y = b.op("Mul", {y, b.constant("gamma", gamma)});
  y = b.op("Transpose", {y}, attrs({{"perm", attr_ints({0, 3, 1, 2})}}));
  b.output(b.op("Add", {x, y}));
  Session s = compile(b.build(), "convnext_block");
  for (Dims hw : {Dims{1, 3, 3}, Dims{2, 5, 4}, Dims{3, 7, 7}}) {
    const Dims sx{hw[0], c, hw[1], hw[2]};
    TensorData tx = random_f32(sx, 21);
    auto out = s.run({tx});
    Dims cl, o1, o2, back;
    auto h = transposed(vals(tx), sx, {0, 2, 3, 1}, &cl);
    h = combined(ref_matmul(h, cl, vals(w1), {c, 4 * c}, &o1), o1, vals(b1), {4 * c}, false);
    for (auto &e : h) e = std::max(e, 0.0f);
    h = combined(ref_matmul(h, o1, vals(w2), {4 * c, c}, &o2), o2, vals(b2), {c}, false);
    h = combined(h, o2, vals(gamma), {c}, true);
    h = transposed(h, o2, {0, 3, 1, 2}, &back);
    const std::string what =
        "n " + std::to_string(hw[0]) + " h " + std::to_string(hw[1]) + " w " + std::to_string(hw[2]);
    expect_near_all(out[0], sx, combined(vals(tx), sx, h, back, false), what, kRtol, kAtol);
    expect_no_reference_code(what);
  }
}

TEST(OnednnNoReferenceCode, MatMulOfTransposedOperands) {
  // A^T B^T with both transposes read in place as strided operands, batched
  // and 2-D, and a constant B^T.
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {sym("b"), 5, sym("m")});
  auto w = b.input("w", DType::F32, {sym("b"), 7, 5});
  auto a2 = b.input("a2", DType::F32, {5, sym("m")});
  TensorData wc = random_f32({7, 5}, 31);
  auto t = [&](const std::string &x, Dims perm) { return b.op("Transpose", {x}, attrs({{"perm", attr_ints(perm)}})); };
  b.output(b.op("MatMul", {t(a, {0, 2, 1}), t(w, {0, 2, 1})}));
  b.output(b.op("MatMul", {t(a2, {1, 0}), t(b.constant("wc", wc), {1, 0})}));
  Session s = compile(b.build(), "mm_transposed");
  for (Dims bm : {Dims{1, 1}, Dims{3, 6}, Dims{2, 40}}) {
    const int64_t n = bm[0], m = bm[1];
    TensorData ta = random_f32({n, 5, m}, 32), tw = random_f32({n, 7, 5}, 33), ta2 = random_f32({5, m}, 34);
    auto out = s.run({ta, tw, ta2});
    Dims sa, sw, sa2, swc, o1, o2;
    auto at = transposed(vals(ta), {n, 5, m}, {0, 2, 1}, &sa);
    auto wt = transposed(vals(tw), {n, 7, 5}, {0, 2, 1}, &sw);
    const std::string what = "b " + std::to_string(n) + " m " + std::to_string(m);
    expect_near_all(out[0], {n, m, 7}, ref_matmul(at, sa, wt, sw, &o1), what + " batched", kRtol, kAtol);
    auto a2t = transposed(vals(ta2), {5, m}, {1, 0}, &sa2);
    auto wct = transposed(vals(wc), {7, 5}, {1, 0}, &swc);
    expect_near_all(out[1], {m, 7}, ref_matmul(a2t, sa2, wct, swc, &o2), what + " 2-D", kRtol, kAtol);
    expect_no_reference_code(what);
  }
}

TEST(OnednnNoReferenceCode, BatchedMatMulWithBroadcastAndBroadcastPostOpOperands) {
  // A [p, 1, m, 4] x B [1, q, 4, 3], then operands that broadcast into the
  // result [p, q, m, 3] in patterns that oneDNN's JIT gemm reads (per column)
  // and ones it does not ([1, 1, m, 3], [p, 1, m, 1], [q, 1, 1]).
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {sym("p"), 1, sym("m"), 4});
  auto w = b.input("w", DType::F32, {1, sym("q"), 4, 3});
  auto e1 = b.input("e1", DType::F32, {1, 1, sym("m"), 3});
  auto e2 = b.input("e2", DType::F32, {sym("p"), 1, sym("m"), 1});
  auto e3 = b.input("e3", DType::F32, {sym("q"), 1, 1});
  TensorData col = random_f32({3}, 41);
  auto y = b.op("MatMul", {a, w});
  y = b.op("Add", {y, b.constant("col", col)});
  y = b.op("Add", {y, e1});
  y = b.op("Mul", {y, e2});
  y = b.op("Sub", {y, e3});
  b.output(y);
  Session s = compile(b.build(), "mm_broadcast");
  for (Dims pqm : {Dims{1, 1, 5}, Dims{2, 3, 5}, Dims{3, 2, 1}, Dims{4, 2, 17}}) {
    const int64_t p = pqm[0], q = pqm[1], m = pqm[2];
    const Dims sa{p, 1, m, 4}, sw{1, q, 4, 3}, s1{1, 1, m, 3}, s2{p, 1, m, 1}, s3{q, 1, 1};
    TensorData ta = random_f32(sa, 42), tw = random_f32(sw, 43), t1 = random_f32(s1, 44), t2 = random_f32(s2, 45),
               t3 = random_f32(s3, 46);
    auto out = s.run({ta, tw, t1, t2, t3});
    Dims os;
    auto want = ref_matmul(vals(ta), sa, vals(tw), sw, &os);
    want = combined(combined(want, os, vals(col), {3}, false), os, vals(t1), s1, false);
    want = combined(want, os, vals(t2), s2, true);
    const auto e3v = expand(vals(t3), s3, os);
    for (size_t i = 0; i < want.size(); ++i) want[i] -= e3v[i];
    const std::string what = "p " + std::to_string(p) + " q " + std::to_string(q) + " m " + std::to_string(m);
    expect_near_all(out[0], os, want, what, kRtol, kAtol);
    expect_no_reference_code(what);
  }
}

TEST(OnednnNoReferenceCode, GemmWithTransposes) {
  // Y = 0.5 A^T B^T + 2 C with A [6, m] and B a constant [5, 6] (an inner
  // product, or the panel product), and with a variable B [6, 5] transposed
  // too (the matmul), C [5] and [m, 1].
  GraphBuilder b;
  auto a = b.input("a", DType::F32, {6, sym("m")});
  auto bv = b.input("bv", DType::F32, {5, 6});
  auto c2 = b.input("c2", DType::F32, {sym("m"), 1});
  TensorData bc = random_f32({5, 6}, 51), c = random_f32({5}, 52);
  auto gemm_attrs = attrs(
      {{"transA", attr_int(1)}, {"transB", attr_int(1)}, {"alpha", attr_float(0.5f)}, {"beta", attr_float(2.0f)}});
  b.output(b.op("Gemm", {a, b.constant("b", bc), b.constant("c", c)}, gemm_attrs));
  b.output(b.op("Gemm", {a, bv, c2}, gemm_attrs));
  Session s = compile(b.build(), "gemm_transposes");
  for (int64_t m : {1, 5, 33, 130}) {
    TensorData ta = random_f32({6, m}, 53), tbv = random_f32({5, 6}, 54), tc2 = random_f32({m, 1}, 55);
    auto out = s.run({ta, tbv, tc2});
    auto gemm = [&](const TensorData &w, const std::vector<float> &cv, const Dims &cd) {
      std::vector<float> y(m * 5);
      const auto ec = expand(cv, cd, {m, 5});
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < 6; ++k) acc += double(ta.as<float>()[k * m + i]) * w.as<float>()[j * 6 + k];
          y[i * 5 + j] = static_cast<float>(0.5 * acc + 2.0 * ec[i * 5 + j]);
        }
      return y;
    };
    const std::string what = "m " + std::to_string(m);
    expect_near_all(out[0], {m, 5}, gemm(bc, vals(c), {5}), what + " constant B", kRtol, kAtol);
    expect_near_all(out[1], {m, 5}, gemm(tbv, vals(tc2), {m, 1}), what + " variable B", kRtol, kAtol);
    expect_no_reference_code(what);
  }
}

TEST(OnednnNoReferenceCode, LinearFollowedByATranspose) {
  // x [b, s, 6] W [6, 9] + bias, transposed to [b, 9, s] (the last dim moves),
  // to [s, b, 9] (it does not: written in place), and a 2-D one to [9, m].
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("b"), sym("s"), 6});
  auto x2 = b.input("x2", DType::F32, {sym("m"), 6});
  TensorData w = random_f32({6, 9}, 61), bias = random_f32({9}, 62);
  auto wc = b.constant("w", w), bc = b.constant("bias", bias);
  auto linear = [&](const std::string &v) { return b.op("Add", {b.op("MatMul", {v, wc}), bc}); };
  auto t = [&](const std::string &v, Dims perm) { return b.op("Transpose", {v}, attrs({{"perm", attr_ints(perm)}})); };
  b.output(t(linear(x), {0, 2, 1}));
  b.output(t(b.op("Relu", {linear(x)}), {1, 0, 2}));
  b.output(t(linear(x2), {1, 0}));
  Session s = compile(b.build(), "linear_transpose");
  for (Dims bs : {Dims{1, 1}, Dims{2, 5}, Dims{4, 40}}) {
    const int64_t n = bs[0], sq = bs[1], m = n * sq + 1;
    TensorData tx = random_f32({n, sq, 6}, 63), tx2 = random_f32({m, 6}, 64);
    auto out = s.run({tx, tx2});
    Dims os, os2, o0, o1, o2;
    auto y = combined(ref_matmul(vals(tx), {n, sq, 6}, vals(w), {6, 9}, &os), os, vals(bias), {9}, false);
    auto y2 = combined(ref_matmul(vals(tx2), {m, 6}, vals(w), {6, 9}, &os2), os2, vals(bias), {9}, false);
    const std::string what = "b " + std::to_string(n) + " s " + std::to_string(sq);
    expect_near_all(out[0], {n, 9, sq}, transposed(y, os, {0, 2, 1}, &o0), what + " to [b, 9, s]", kRtol, kAtol);
    for (auto &e : y) e = std::max(e, 0.0f);
    expect_near_all(out[1], {sq, n, 9}, transposed(y, os, {1, 0, 2}, &o1), what + " to [s, b, 9]", kRtol, kAtol);
    expect_near_all(out[2], {9, m}, transposed(y2, os2, {1, 0}, &o2), what + " 2-D", kRtol, kAtol);
    expect_no_reference_code(what);
  }
}

// The glue on its own, given a transposed result that moves the last dim
// (what the rules now leave to the next backend, but a plan may still hold):
// it stages the product through a dense result and a reorder.
// MaxPool 2x2 stride 2 over [n, c, h, w] (h, w even).
std::vector<float> max_pooled(const std::vector<float> &x, const Dims &xs, Dims *out) {
  *out = {xs[0], xs[1], xs[2] / 2, xs[3] / 2};
  std::vector<float> y(numel(*out), -INFINITY);
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p)
    for (int64_t i = 0; i < xs[2] / 2 * 2; ++i)
      for (int64_t j = 0; j < xs[3] / 2 * 2; ++j) {
        float &m = y[(p * (*out)[2] + i / 2) * (*out)[3] + j / 2];
        m = std::max(m, x[(p * xs[2] + i) * xs[3] + j]);
      }
  return y;
}

// GlobalAveragePool over [n, c, h, w].
TEST(OnednnNoReferenceCode, ConvolutionsAndPoolingsOnTheBlockedLayout) {
  // Values of 8k channels (16k on AVX-512) pass between oneDNN steps blocked (nChw8c, nChw16c): the
  // first convolution's 3 plain channels in and 16 blocked out, a pooling, a
  // residual sum post-op, a grouped and a depthwise convolution, two readers
  // of one blocked value, and a squeeze-excitation's 16 -> 4 -> 16 at one
  // position (blocked into unblocked and back, reference code in 2.6 unless
  // the glue picks other layouts for them).
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
  TensorData w1 = random_f32({16, 3, 3, 3}, 31, 0.5f), w2 = random_f32({16, 16, 3, 3}, 32, 0.25f),
             w3 = random_f32({16, 8, 3, 3}, 33, 0.25f), w4 = random_f32({16, 1, 3, 3}, 34, 0.5f),
             w5 = random_f32({4, 16, 1, 1}, 35, 0.5f), w6 = random_f32({16, 4, 1, 1}, 36, 0.5f),
             w7 = random_f32({8, 16, 1, 1}, 37, 0.5f);
  auto conv = [&](auto in, const char *name, const TensorData &w, int64_t group, bool pad) {
    auto a = pad ? attrs({{"pads", attr_ints({1, 1, 1, 1})}, {"group", attr_int(group)}})
                 : attrs({{"group", attr_int(group)}});
    return b.op("Conv", {in, b.constant(name, w)}, a);
  };
  auto c1 = b.op("Relu", {conv(x, "w1", w1, 1, true)});
  auto p = b.op("MaxPool", {c1}, attrs({{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}));
  auto c2 = b.op("Relu", {b.op("Add", {conv(p, "w2", w2, 1, true), p})});
  auto g = b.op("Relu", {conv(c2, "w3", w3, 2, true)});
  auto d = conv(g, "w4", w4, 16, true);
  auto se = b.op("Relu", {conv(b.op("GlobalAveragePool", {d}), "w5", w5, 1, false)});
  b.output(conv(se, "w6", w6, 1, false));
  b.output(conv(d, "w7", w7, 1, false));
  Session s = compile(b.build(), "blocked_cnn");
  for (Dims xs : {Dims{1, 3, 8, 8}, Dims{2, 3, 6, 10}, Dims{3, 3, 2, 2}}) {
    TensorData tx = random_f32(xs, 41);
    auto out = s.run({tx});
    const Dims none{0, 0, 0, 0}, same{1, 1, 1, 1}, one{1, 1};
    auto relu = [](std::vector<float> v) {
      for (auto &e : v) e = std::max(e, 0.0f);
      return v;
    };
    Dims s1, sp, s2, sg, sd, sa, s5, s6, s7;
    auto h = relu(ref_conv2d(vals(tx), xs, vals(w1), w1.shape, {}, one, one, same, 1, &s1));
    h = max_pooled(h, s1, &sp);
    h = relu(combined(ref_conv2d(h, sp, vals(w2), w2.shape, {}, one, one, same, 1, &s2), s2, h, sp, false));
    h = relu(ref_conv2d(h, s2, vals(w3), w3.shape, {}, one, one, same, 2, &sg));
    const auto dw = ref_conv2d(h, sg, vals(w4), w4.shape, {}, one, one, same, 16, &sd);
    h = relu(ref_conv2d(ref_global_average(dw, sd, &sa), sa, vals(w5), w5.shape, {}, one, one, none, 1, &s5));
    const auto want_se = ref_conv2d(h, s5, vals(w6), w6.shape, {}, one, one, none, 1, &s6);
    const auto want_map = ref_conv2d(dw, sd, vals(w7), w7.shape, {}, one, one, none, 1, &s7);
    const std::string what =
        "n " + std::to_string(xs[0]) + " h " + std::to_string(xs[2]) + " w " + std::to_string(xs[3]);
    expect_near_all(out[0], s6, want_se, what + " (squeeze-excitation)", kRtol, kAtol);
    expect_near_all(out[1], s7, want_map, what + " (map)", kRtol, kAtol);
    expect_no_reference_code(what);
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).other, 0);
}

TEST(OnednnNoReferenceCode, TheGlueStagesAResultTransposedAcrossItsRows) {
  auto k = make_kernel(
      "onednn.matmul",
      {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add"}, {"out_perm", "0,2,1"}, {"out_reshaped", "0"}});
  for (Dims bs : {Dims{1, 1}, Dims{1, 3}, Dims{2, 17}}) {
    const int64_t n = bs[0], sq = bs[1];
    TensorData a = random_f32({n, sq, 4}, 71), w = random_f32({4, 5}, 72), bias = random_f32({n, sq, 5}, 73);
    TensorData y(DType::F32, {n, 5, sq});
    std::vector<ExternTensor> ins{view(a), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    Dims os, ot;
    auto want = combined(ref_matmul(vals(a), {n, sq, 4}, vals(w), {4, 5}, &os), os, vals(bias), os, false);
    const std::string what = "b " + std::to_string(n) + " s " + std::to_string(sq);
    expect_near_all(y, {n, 5, sq}, transposed(want, os, {0, 2, 1}, &ot), what, kRtol, kAtol);
    EXPECT_EQ(k->implementation().find("ref"), std::string::npos) << what << ": " << k->implementation();
  }
}

TEST(OnednnNoReferenceCode, AResultTransposedAcrossItsRowsFoldsItsRowsIntoOneProduct) {
  // convnext's second Linear: [n, h, w, K] x constant [K, N] + bias, the
  // result permuted back to [n, N, h, w]. B has no batch, so the n*h*w rows
  // fold into one product on packed weights (the panel product, the inner
  // product or the matmul, by rows and weight size), whose dense rows one
  // reorder scatters; unfolded, it was a batched matmul on unpacked weights.
  struct Case {
    int64_t k, n;
    std::vector<Dims> shapes;  // n, h, w
  };
  for (const Case &c : {Case{24, 64, {{1, 1, 1}, {1, 4, 4}, {2, 12, 12}}}, Case{768, 768, {{1, 10, 15}}}}) {
    auto k = make_kernel(
        "onednn.matmul",
        {{"trans_a", "0"}, {"trans_b", "0"}, {"post_ops", "add"}, {"out_perm", "0,3,1,2"}, {"out_reshaped", "0"}});
    TensorData w = random_f32({c.k, c.n}, 81, 0.2f), bias = random_f32({c.n}, 82);
    for (const Dims &hw : c.shapes) {
      const Dims sa{hw[0], hw[1], hw[2], c.k};
      TensorData a = random_f32(sa, 83), y(DType::F32, {hw[0], c.n, hw[1], hw[2]});
      std::vector<ExternTensor> ins{view(a), view(w, true), view(bias)}, outs{view(y)};
      SymbolValues syms;
      k->run(ExternCall{ins, outs, syms});
      Dims os, ot;
      auto want = combined(ref_matmul(vals(a), sa, vals(w), {c.k, c.n}, &os), os, vals(bias), {c.n}, false);
      const std::string what = "K " + std::to_string(c.k) + " N " + std::to_string(c.n) + " rows " +
                               std::to_string(hw[0] * hw[1] * hw[2]);
      expect_near_all(y, y.shape, transposed(want, os, {0, 3, 1, 2}, &ot), what, kRtol, kAtol);
      const std::string impl = k->implementation();
      if (hw[1] * hw[2] > 1)  // else the permuted result is dense: no reorder
        EXPECT_NE(impl.find("result's rows by reorder"), std::string::npos) << what << ": " << impl;
      EXPECT_EQ(impl.find("ref"), std::string::npos) << what << ": " << impl;
    }
  }
}

}  // namespace
}  // namespace disco
