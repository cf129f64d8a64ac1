// The oneDNN backend's pooling steps and its channels-last hand-over
// (targets/onednn/onednn_layout.h): MaxPool, AveragePool and their Global
// forms against plain scalar references at several run-time shapes of one
// compile, what the rules leave to the host, and chains of convolutions and
// poolings whose intermediate values stay channels last.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/graph_builder.h"
#include "driver/session.h"
#include "targets/onednn/onednn_layout.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using testing::find_step;
using testing::numel;
using testing::onednn_first;
using testing::tensor;
using testing::values;
using testing::ramp;
using testing::sym;
using testing::Dims;
using testing::expect_near_all;

// ---- pooling ---------------------------------------------------------------------

struct Pool2d {
  bool max = true, include_pad = false, ceil = false;
  Dims kernel{2, 2}, strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};  // pads: top, left, bottom, right
};

int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil) {
  const int64_t span = d * (k - 1) + 1, room = in + pb + pe - span;
  int64_t out = (ceil ? (room + s - 1) / s : room / s) + 1;
  if (ceil && (out - 1) * s >= in + pb) --out;  // no window may start in the end padding
  return out;
}

// ONNX pooling over NCHW in plain loops.
std::vector<float> ref_pool(const TensorData &x, const Pool2d &p, Dims *out) {
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t oh = pooled(h, p.kernel[0], p.strides[0], p.dilations[0], p.pads[0], p.pads[2], p.ceil);
  const int64_t ow = pooled(w, p.kernel[1], p.strides[1], p.dilations[1], p.pads[1], p.pads[3], p.ceil);
  *out = {n, c, oh, ow};
  std::vector<float> y(numel(*out));
  for (int64_t b = 0; b < n * c; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = p.max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t count = 0, padded = 0;
        for (int64_t u = 0; u < p.kernel[0]; ++u)
          for (int64_t v = 0; v < p.kernel[1]; ++v) {
            const int64_t yy = i * p.strides[0] - p.pads[0] + u * p.dilations[0];
            const int64_t xx = j * p.strides[1] - p.pads[1] + v * p.dilations[1];
            const bool inside_pads = yy >= -p.pads[0] && yy < h + p.pads[2] && xx >= -p.pads[1] && xx < w + p.pads[3];
            padded += inside_pads;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
            const double val = x.as<float>()[(b * h + yy) * w + xx];
            acc = p.max ? std::max(acc, val) : acc + val;
            ++count;
          }
        y[(b * oh + i) * ow + j] = static_cast<float>(p.max ? acc : acc / (p.include_pad ? padded : count));
      }
  return y;
}

Attributes pool_attrs(const Pool2d &p) {
  Attributes a = testing::attrs({{"kernel_shape", attr_ints(p.kernel)},
                                 {"strides", attr_ints(p.strides)},
                                 {"pads", attr_ints(p.pads)},
                                 {"ceil_mode", attr_int(p.ceil)}});
  if (p.max) a["dilations"] = attr_ints(p.dilations);
  if (!p.max) a["count_include_pad"] = attr_int(p.include_pad);
  return a;
}

TEST(OnednnPool, MaxAndAveragePoolingWithPadsStridesDilationsAndCeilModeMatchTheReference) {
  std::vector<Pool2d> cases(6);
  cases[0].strides = {2, 2};
  cases[1].kernel = {3, 2}, cases[1].strides = {2, 1}, cases[1].pads = {1, 0, 1, 1}, cases[1].ceil = true;
  cases[2].kernel = {2, 3}, cases[2].dilations = {2, 1}, cases[2].pads = {1, 1, 0, 2};
  cases[3].max = false, cases[3].kernel = {3, 3}, cases[3].strides = {2, 2}, cases[3].pads = {1, 1, 1, 1};
  cases[4] = cases[3], cases[4].include_pad = true;
  cases[5] = cases[3], cases[5].ceil = true;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Pool2d &pc = cases[ci];
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
    b.output(b.op(pc.max ? "MaxPool" : "AveragePool", {x}, pool_attrs(pc)));
    Session s(b.build(), "pool", "", onednn_first());
    ASSERT_EQ(s.last_compile().plan.steps.size(), 1u) << ci;
    EXPECT_EQ(s.last_compile().plan.steps[0].extern_call, "onednn.pool") << ci;
    for (Dims xs : {Dims{1, 3, 7, 6}, Dims{2, 3, 8, 9}, Dims{1, 3, 5, 11}}) {
      TensorData tx = tensor(xs, 0.5f, static_cast<int>(ci));
      auto out = s.run({tx});
      Dims os;
      auto want = ref_pool(tx, pc, &os);
      expect_near_all(out[0], os, want,
                      "case " + std::to_string(ci) + " at " + std::to_string(xs[2]) + "x" + std::to_string(xs[3]));
    }
    EXPECT_EQ(s.compiles(), 1);
  }
}

// Runs pooling kernel `k` on `x` into a new Y of shape `os`.
TensorData run_pool_kernel(ExternKernel &k, TensorData &x, const Dims &os) {
  TensorData y(DType::F32, os);
  std::vector<ExternTensor> ins{testing::view(x)}, outs{testing::view(y)};
  SymbolValues syms;
  k.run(ExternCall{ins, outs, syms});
  return y;
}

// Max pooling of maps blocked by 8 or 16 channels (16, 24 and 8 channels
// here; 16 and 32 blocked on AVX-512) runs max_pool_avx2.h's loop on AVX2 CPUs: windows with pads, strides, ceil mode
// and clipped edges, batches of planes, on one and two threads, against the
// reference, exactly (max is exact).
TEST(OnednnPool, BlockedMaxPoolingRunsDiscosLoopAndMatchesTheReferenceExactly) {
  std::vector<Pool2d> cases(4);
  cases[0].kernel = {3, 3}, cases[0].strides = {2, 2}, cases[0].ceil = true;
  cases[1].kernel = {3, 3}, cases[1].strides = {2, 2}, cases[1].pads = {1, 1, 1, 1};
  cases[2].kernel = {3, 2}, cases[2].strides = {2, 1}, cases[2].pads = {1, 0, 1, 1}, cases[2].ceil = true;
  cases[3].kernel = {5, 5}, cases[3].strides = {1, 3}, cases[3].pads = {2, 0, 2, 4};
  for (size_t ci = 0; ci < cases.size(); ++ci)
    for (Dims xs : {Dims{1, 16, 7, 6}, Dims{2, 24, 13, 17}, Dims{3, 8, 5, 11}, Dims{2, 32, 9, 10}})
      for (int threads : {1, 2}) {
        const Pool2d &pc = cases[ci];
        auto text = [](const Dims &d) {
          std::string t;
          for (int64_t v : d) t += (t.empty() ? "" : ",") + std::to_string(v);
          return t;
        };
        auto k = testing::make_kernel("onednn.pool", {{"algorithm", "max"},
                                                      {"global", "0"},
                                                      {"kernel_shape", text(pc.kernel)},
                                                      {"strides", text(pc.strides)},
                                                      {"dilations", "1,1"},
                                                      {"pads", text(pc.pads)},
                                                      {"auto_pad", "NOTSET"},
                                                      {"post_ops", ""}});
        k->set_num_threads(threads);
        TensorData tx = tensor(xs, 0.5f, static_cast<int>(ci));
        Dims os;
        const auto want = ref_pool(tx, pc, &os);
        const TensorData y = run_pool_kernel(*k, tx, os);
        const std::string what = "case " + std::to_string(ci) + " X " + text(xs) + " on " + std::to_string(threads) +
                                 ": " + k->implementation();
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(y.as<float>()[i], want[i]) << what << " element " << i;
        // Blocked: channels a multiple of the machine's block (8, or 16 on AVX-512).
        const bool held_blocked = xs[1] % channel_block() == 0;
        if (__builtin_cpu_supports("avx2") && held_blocked) {
          EXPECT_EQ(k->implementation(), "max pooling blocked avx2") << what;
        }
      }
}

// Global average pooling of maps blocked by 8 or 16 channels runs
// max_pool_avx2.h's sum on AVX2 CPUs (1x1 to 57x57 maps: fewer pixels than
// its four chains, and a remainder; batches of planes; one and two
// threads), against the double-precision reference within float rounding.
TEST(OnednnPool, BlockedGlobalAveragePoolingRunsDiscosSumAndMatchesTheReference) {
  for (Dims xs : {Dims{1, 16, 7, 7}, Dims{2, 32, 57, 57}, Dims{3, 8, 1, 1}, Dims{1, 48, 2, 3}, Dims{2, 24, 14, 14}})
    for (int threads : {1, 2}) {
      auto k = testing::make_kernel("onednn.pool", {{"algorithm", "avg_exclude"},
                                                    {"global", "1"},
                                                    {"kernel_shape", ""},
                                                    {"strides", ""},
                                                    {"dilations", ""},
                                                    {"pads", ""},
                                                    {"auto_pad", "NOTSET"},
                                                    {"post_ops", ""}});
      k->set_num_threads(threads);
      TensorData tx = tensor(xs, 0.5f, 7);
      Pool2d pc;
      pc.max = false;
      pc.kernel = {xs[2], xs[3]};
      Dims os;
      const auto want = ref_pool(tx, pc, &os);
      const TensorData y = run_pool_kernel(*k, tx, os);
      const std::string what = std::to_string(xs[0]) + "x" + std::to_string(xs[1]) + "x" + std::to_string(xs[2]) + "x" +
                               std::to_string(xs[3]) + " on " + std::to_string(threads) + ": " + k->implementation();
      expect_near_all(y, os, want, what);
      const bool held_blocked = xs[1] % channel_block() == 0;
      if (__builtin_cpu_supports("avx2") && held_blocked) {
        EXPECT_EQ(k->implementation(), "global average pooling blocked avx2") << what;
      }
    }
}

TEST(OnednnPool, GlobalPoolingFollowsTheRunTimeExtent) {
  for (const char *op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
    b.output(b.op(op, {x}));
    Session s(b.build(), "gpool", "", onednn_first());
    EXPECT_EQ(s.last_compile().plan.steps.at(0).extern_call, "onednn.pool");
    for (Dims xs : {Dims{1, 4, 1, 1}, Dims{3, 4, 5, 7}}) {
      TensorData tx = tensor(xs, 0.5f, 3);
      auto out = s.run({tx});
      Pool2d pc;
      pc.max = std::string(op) == "GlobalMaxPool";
      pc.kernel = {xs[2], xs[3]};
      Dims os;
      auto want = ref_pool(tx, pc, &os);
      expect_near_all(out[0], os, want, std::string(op) + " over " + std::to_string(xs[2] * xs[3]));
    }
  }
}

TEST(OnednnPool, IndicesAndPaddingCountedWithCeilModeGoToTheHostWithAReason) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 2, sym("h"), sym("w")});
  auto mp = b.op_n("MaxPool", {x}, 2, testing::attrs({{"kernel_shape", attr_ints({2, 2})}}));
  b.output(mp[0]);
  b.output(mp[1]);
  Pool2d avg;
  avg.max = false, avg.include_pad = true, avg.ceil = true, avg.pads = {1, 1, 1, 1};
  b.output(b.op("AveragePool", {x}, pool_attrs(avg)));
  auto p = testing::partition_for(b.build(), {"onednn", "host"});
  EXPECT_EQ(p.backend_of("MaxPool"), "host");
  EXPECT_EQ(p.backend_of("AveragePool"), "host");
  EXPECT_TRUE(p.has_note("Indices output")) << p.notes();
  EXPECT_TRUE(p.has_note("count_include_pad with ceil_mode")) << p.notes();
}

// ---- channels last between steps ------------------------------------------------------

// A 3x3 convolution with pads 1 and a bias, NCHW, in plain loops.
std::vector<float> ref_conv3x3(const std::vector<float> &x, const Dims &xs, const TensorData &w, const TensorData &bias) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], m = w.shape[0];
  std::vector<float> y(n * m * h * wd);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j) {
          double acc = bias.as<float>()[o];
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t u = 0; u < 3; ++u)
              for (int64_t v = 0; v < 3; ++v) {
                const int64_t yy = i + u - 1, xx = j + v - 1;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                acc += double(x[((b * c + ci) * h + yy) * wd + xx]) * w.as<float>()[((o * c + ci) * 3 + u) * 3 + v];
              }
          y[((b * m + o) * h + i) * wd + j] = static_cast<float>(acc);
        }
  return y;
}

TEST(OnednnPool, ConvolutionsAndPoolingsHandTheirResultsOverChannelsLast) {
  // p = maxpool(relu(conv1(x))); r = relu(conv2(p) + p); y = gap(r); also z = sigmoid(p) on the host.
  for (bool host_reader : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
    TensorData w1 = tensor({4, 3, 3, 3}, 0.125f, 1), b1 = tensor({4}, 0.5f, 2);
    TensorData w2 = tensor({4, 4, 3, 3}, 0.0625f, 3), b2 = tensor({4}, 0.25f, 4);
    const Attributes pad1 = testing::attrs({{"pads", attr_ints({1, 1, 1, 1})}});
    auto c1 = b.op("Relu", {b.op("Conv", {x, b.constant("w1", w1), b.constant("b1", b1)}, pad1)});
    auto p = b.op("MaxPool", {c1}, testing::attrs({{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}));
    auto r = b.op("Relu", {b.op("Add", {b.op("Conv", {p, b.constant("w2", w2), b.constant("b2", b2)}, pad1), p})});
    b.output(b.op("GlobalAveragePool", {r}));
    if (host_reader) b.output(b.op("Sigmoid", {p}));
    Session s(b.build(), "cl_chain", "", onednn_first());
    const Plan &plan = s.last_compile().plan;
    const PlanStep *conv1 = find_step(plan, "onednn.conv"), *pool = find_step(plan, "onednn.pool");
    ASSERT_TRUE(conv1 && pool);
    EXPECT_EQ(conv1->params.at("channels_last_output"), "1") << "conv1's only reader is the MaxPool";
    EXPECT_EQ(pool->params.at("channels_last_inputs"), "0");
    EXPECT_EQ(pool->params.at("channels_last_output"), host_reader ? "0" : "1")
        << (host_reader ? "the host reads p: plain" : "p's readers are conv2 (X and residual)");
    for (Dims xs : {Dims{1, 3, 4, 6}, Dims{2, 3, 7, 5}}) {
      TensorData tx = tensor(xs, 0.25f, 5);
      auto out = s.run({tx});
      auto y1 = ref_conv3x3(values(tx), xs, w1, b1);
      for (auto &v : y1) v = std::max(v, 0.0f);
      TensorData t1 = testing::f32({xs[0], 4, xs[2], xs[3]}, y1);
      Pool2d mp;
      mp.strides = {2, 2};
      Dims ps;
      auto pv = ref_pool(t1, mp, &ps);
      auto y2 = ref_conv3x3(pv, ps, w2, b2);
      for (size_t i = 0; i < y2.size(); ++i) y2[i] = std::max(y2[i] + pv[i], 0.0f);
      TensorData t2 = testing::f32(ps, y2);
      Pool2d gap;
      gap.max = false;
      gap.kernel = {ps[2], ps[3]};
      Dims gs;
      auto want = ref_pool(t2, gap, &gs);
      const std::string what = std::string(host_reader ? "with" : "without") + " a host reader at " +
                               std::to_string(xs[2]) + "x" + std::to_string(xs[3]);
      expect_near_all(out[0], gs, want, what);
      if (host_reader) {
        for (auto &v : pv) v = 1 / (1 + std::exp(-v));
        expect_near_all(out[1], ps, pv, what + ", the host's sigmoid");
      }
    }
  }
}

TEST(OnednnPool, AMeanOverTheSpatialDimsAfterAConvIsAGlobalPoolOnItsBlockedResult) {
  // y = ReduceMean(relu(conv(x)), axes) with 8 channels: the conv hands its blocked result to the pool.
  struct Case {
    int opset;
    std::vector<int64_t> axes;
    int64_t keepdims;
  };
  for (const Case &k : {Case{17, {2, 3}, 0}, Case{17, {-1, -2}, 1}, Case{18, {3, 2}, 0}}) {
    GraphBuilder b(k.opset);
    auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
    TensorData w = tensor({8, 3, 3, 3}, 0.125f, 1), bias = tensor({8}, 0.5f, 2);
    auto c = b.op("Relu", {b.op("Conv", {x, b.constant("w", w), b.constant("b", bias)},
                                testing::attrs({{"pads", attr_ints({1, 1, 1, 1})}}))});
    Attributes a = testing::attrs({{"keepdims", attr_int(k.keepdims)}});
    std::vector<std::string> ins = {c};
    if (k.opset >= 18) ins.push_back(b.constant("axes", testing::i64({2}, k.axes)));
    else a = testing::attrs({{"keepdims", attr_int(k.keepdims)}, {"axes", attr_ints(k.axes)}});
    b.output(b.op("ReduceMean", ins, a));
    Session s(b.build(), "mean", "", onednn_first());
    const Plan &plan = s.last_compile().plan;
    const PlanStep *conv = find_step(plan, "onednn.conv"), *pool = find_step(plan, "onednn.pool");
    ASSERT_TRUE(conv && pool) << "the ReduceMean is not a oneDNN global pool";
    EXPECT_EQ(conv->params.at("channels_last_output"), "1") << "the conv's only reader is the pool";
    for (Dims xs : {Dims{1, 3, 4, 6}, Dims{2, 3, 7, 5}}) {
      TensorData tx = tensor(xs, 0.25f, 5);
      auto out = s.run({tx});
      auto y = ref_conv3x3(values(tx), xs, w, bias);
      for (auto &v : y) v = std::max(v, 0.0f);
      std::vector<float> want;
      const int64_t hw = xs[2] * xs[3];
      for (int64_t i = 0; i < xs[0] * 8; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < hw; ++p) sum += y[i * hw + p];
        want.push_back(static_cast<float>(sum / hw));
      }
      const Dims ys = k.keepdims ? Dims{xs[0], 8, 1, 1} : Dims{xs[0], 8};
      expect_near_all(out[0], ys, want, "opset " + std::to_string(k.opset) + " at " + std::to_string(xs[2]) + "x" +
                                            std::to_string(xs[3]));
    }
  }
}

TEST(OnednnPool, AMeanOverTheLastDimOfA3DTensorStaysWithItsNeighboursOnTheHost) {
  // RMSNorm's mean of squares over [B, S, E]: fused on the host, not a pool.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("b"), sym("s"), 16});
  b.output(b.op("ReduceMean", {b.op("Mul", {x, x})},
                testing::attrs({{"axes", attr_ints({-1})}, {"keepdims", attr_int(1)}})));
  auto p = testing::partition_for(b.build(), {"onednn", "host"});
  EXPECT_EQ(p.backend_of("ReduceMean"), "host");
}

}  // namespace
}  // namespace disco
