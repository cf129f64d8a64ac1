// The oneDNN backend's Conv steps (strides, pads, dilations, groups, bias,
// 1-D and run-time SAME pads) against scalar references at several run-time
// shapes of one compile.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "frontend/graph_builder.h"
#include "driver/session.h"
#include "tests/support/conv_step_check.h"
#include "tests/support/jit_eval.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/partitioned.h"
#include "tests/support/tensors.h"
#include "targets/onednn/conv_regions.h"
#include "targets/onednn/onednn_layout.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

// ---- Conv ---------------------------------------------------------------------

TEST(OnednnConv, StridesPadsDilationsGroupsAndBiasMatchTheReference) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 4, sym("h"), sym("w")});
  TensorData w = tensor({6, 2, 3, 2}, 0.25f, 1), bias = tensor({6}, 0.5f, 2);
  auto y = b.op("Conv", {x, b.constant("w", w), b.constant("bias", bias)},
                testing::attrs({{"group", attr_int(2)},
                                {"strides", attr_ints({2, 1})},
                                {"pads", attr_ints({1, 0, 2, 1})},
                                {"dilations", attr_ints({1, 2})}}));
  b.output(b.op("Relu", {y}));
  Session s(b.build(), "conv_geom", "", onednn_first());
  for (Dims xs : {Dims{1, 4, 5, 6}, Dims{2, 4, 8, 3}, Dims{3, 4, 1, 4}}) {
    TensorData tx = tensor(xs);
    auto out = s.run({tx});
    Dims os;
    auto want = ref_conv2d(values(tx), xs, values(w), w.shape, values(bias), {2, 1}, {1, 2}, {1, 0, 2, 1}, 2, &os);
    for (auto &v : want) v = std::max(v, 0.0f);
    expect_near_all(
        out[0], os, want,
        "X [" + std::to_string(xs[0]) + ", 4, " + std::to_string(xs[2]) + ", " + std::to_string(xs[3]) + "]");
  }
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 1);
  EXPECT_EQ(c.other, 0);
}

// Dilated windows on maps smaller than the dilation (DeepLab's ASPP): taps
// that read only padding are cropped from W at the shapes where they do, the
// output is computed in boxes that read no padding where the taps that read X
// change along it (conv_regions.h), and the result is the full window's.
TEST(OnednnConv, TapsThatReadOnlyPaddingAreCroppedWithoutChangingTheResult) {
  struct Case {
    Dims strides, dilations, pads;
    std::vector<Dims> shapes;
  };
  const std::vector<Case> cases = {
      // [1,8,3,2] and [1,8,2,9]: only the middle tap of a dim reads X; [2,8,6,5]: every tap does somewhere.
      {{1, 1}, {4, 3}, {4, 3, 4, 3}, {{1, 8, 3, 2}, {2, 8, 6, 5}, {1, 8, 2, 9}}},
      // Strided: at h 4 the first and last row taps read only padding; uneven pads keep a tap at one end.
      {{2, 2}, {5, 1}, {5, 1, 5, 0}, {{1, 8, 4, 7}, {1, 8, 12, 3}}},
      // One output row whose cropped window would end inside X: left uncropped. Uneven taps live per dim.
      {{1, 1}, {6, 6}, {6, 0, 2, 6}, {{1, 8, 5, 8}, {2, 8, 9, 7}}},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case &k = cases[c];
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), 8, sym("h"), sym("w")});
    TensorData w = tensor({8, 4, 3, 3}, 0.25f, 11), bias = tensor({8}, 0.5f, 12);
    auto y = b.op("Conv", {x, b.constant("w", w), b.constant("bias", bias)},
                  testing::attrs({{"group", attr_int(2)},
                                  {"strides", attr_ints(k.strides)},
                                  {"pads", attr_ints(k.pads)},
                                  {"dilations", attr_ints(k.dilations)}}));
    b.output(b.op("Relu", {y}));
    Session s(b.build(), "conv_crop" + std::to_string(c), "", onednn_first());
    for (const Dims &xs : k.shapes) {
      TensorData tx = tensor(xs, 1.0f, 13);
      auto out = s.run({tx});
      Dims os;
      auto want = ref_conv2d(values(tx), xs, values(w), w.shape, values(bias), k.strides, k.dilations, k.pads, 2, &os);
      for (auto &v : want) v = std::max(v, 0.0f);
      expect_near_all(out[0], os, want,
                      "case " + std::to_string(c) + ", X [" + std::to_string(xs[0]) + ", 8, " + std::to_string(xs[2]) +
                          ", " + std::to_string(xs[3]) + "]");
    }
    EXPECT_EQ(count_steps(s.last_compile().plan).onednn, 1);
  }
}

TEST(ConvRegions, AsppWindowOnAFourteenSquareMapIsNineBoxesReadingAFifthOfTheWork) {
  // 3x3, dilation 12, pads 12, 14x14: rows (and columns) 0-1 read taps 1-2,
  // 2-11 tap 1, 12-13 taps 0-1; (14 + 2 * 2 * 2 taps) / (14 * 3) per dim.
  ConvWindow w{{14, 14}, {14, 14}, {3, 3}, {1, 1}, {12, 12}, {12, 12}};
  const std::vector<ConvBox> boxes = padding_free_boxes(w);
  ASSERT_EQ(boxes.size(), 9u);
  EXPECT_EQ(boxes[0].out_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(boxes[0].out_end, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(boxes[0].tap_begin, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(boxes[0].tap_end, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(boxes[0].in_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(boxes[4].out_begin, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(boxes[4].tap_begin, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(boxes[4].tap_end, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(boxes[8].tap_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(boxes[8].in_begin, (std::vector<int64_t>{0, 0}));  // row 12, tap 0: 12 - 12 + 0
  const double per_dim = (2 * 2 + 10 * 1 + 2 * 2) / 42.0;
  EXPECT_NEAR(boxes_work_fraction(w, boxes), per_dim * per_dim, 1e-12);
  // An output whose window reads padding only: no boxes.
  EXPECT_TRUE(padding_free_boxes(ConvWindow{{2}, {6}, {1}, {1}, {1}, {2}}).empty());
}

TEST(ConvRegions, AsppWindowByTapIsNineOneByOneBoxesReadingEachTapOfWOnce) {
  ConvWindow w{{14, 14}, {14, 14}, {3, 3}, {1, 1}, {12, 12}, {12, 12}};
  const std::vector<ConvBox> taps = tap_boxes(w);
  ASSERT_EQ(taps.size(), 9u);
  // Tap 0 of a dim reads X at o - 12: rows 12-13; tap 1 everywhere; tap 2 at o + 12: rows 0-1.
  EXPECT_EQ(taps[0].tap_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(taps[0].out_begin, (std::vector<int64_t>{12, 12}));
  EXPECT_EQ(taps[0].out_end, (std::vector<int64_t>{14, 14}));
  EXPECT_EQ(taps[0].in_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(taps[4].tap_begin, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(taps[4].tap_end, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(taps[4].out_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(taps[4].out_end, (std::vector<int64_t>{14, 14}));
  EXPECT_EQ(taps[5].out_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(taps[5].out_end, (std::vector<int64_t>{14, 2}));
  EXPECT_EQ(taps[5].in_begin, (std::vector<int64_t>{0, 12}));
  // The same multiply-adds as the padding-free boxes, a third of the W they stream.
  EXPECT_NEAR(boxes_work_fraction(w, taps), boxes_work_fraction(w, padding_free_boxes(w)), 1e-12);
  EXPECT_EQ(boxes_weight_taps(taps), 9);
  EXPECT_EQ(boxes_weight_taps(padding_free_boxes(w)), 25);
  // Strided: tap 2 of a 3-tap window, dilation 4, pad 4, stride 2 over 9 inputs reads X at 2o + 4 < 9: o 0-2.
  const std::vector<ConvBox> strided = tap_boxes(ConvWindow{{9}, {5}, {3}, {2}, {4}, {4}});
  ASSERT_EQ(strided.size(), 3u);
  EXPECT_EQ(strided[2].out_end, (std::vector<int64_t>{3}));
  EXPECT_EQ(strided[0].out_begin, (std::vector<int64_t>{2}));  // 2o - 4 >= 0
  EXPECT_EQ(strided[0].in_begin, (std::vector<int64_t>{0}));
  // Outputs whose window reads padding only are in no box (outputs 0-1 and 4-5 here).
  const std::vector<ConvBox> inner = tap_boxes(ConvWindow{{2}, {6}, {1}, {1}, {1}, {2}});
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].out_begin, (std::vector<int64_t>{2}));
  EXPECT_EQ(inner[0].out_end, (std::vector<int64_t>{4}));
}

// DeepLab's ASPP window (3x3, dilation 12; and a 1-D one) on maps where its outer taps read
// X only near the borders: by tap (each tap of W read once, the tap that
// covers Y last with the bias and the ReLU over the others' sums), and in
// padding-free boxes with DISCO_TAP_BOXES=0, both against a plain loop.
TEST(OnednnConv, AsppWindowsRunByTapAndMatchTheReference) {
  // X [N, C, (H,) W], dilation 12 and pads 12 on every spatial dim, 32 outputs; a 1-D X is checked
  // against the 2-D reference on one row (H = 1, no dilation or pad along it).
  auto check = [](const Dims &xs, const std::string &rule) {
    const bool one_d = xs.size() == 3;
    auto k = make_kernel("onednn.conv", {{"strides", one_d ? "1" : "1,1"},
                                         {"dilations", one_d ? "12" : "12,12"},
                                         {"pads", one_d ? "12,12" : "12,12,12,12"},
                                         {"group", "1"},
                                         {"auto_pad", "NOTSET"},
                                         {"post_ops", "relu:0"}});
    const Dims ws = one_d ? Dims{32, xs[1], 3} : Dims{32, xs[1], 3, 3};
    const Dims xs2 = one_d ? Dims{xs[0], xs[1], 1, xs[2]} : xs, ws2 = one_d ? Dims{32, xs[1], 1, 3} : ws;
    TensorData x = tensor(xs, 0.5f, 1), w = tensor(ws, 0.05f, 3), bias = tensor({ws[0]}, 0.5f, 5);
    Dims os;
    auto want = ref_conv2d(values(x), xs2, values(w), ws2, values(bias), {1, 1}, {one_d ? 1 : 12, 12},
                           {one_d ? 0 : 12, 12, one_d ? 0 : 12, 12}, 1, &os);
    for (auto &v : want) v = std::max(v, 0.0f);
    if (one_d) os.erase(os.begin() + 2);
    TensorData y(DType::F32, os);
    SymbolValues syms;
    k->run(ExternCall{{view(x), view(w, true), view(bias)}, {view(y)}, syms});
    std::string what = "DISCO_TAP_BOXES=" + rule + ", X [";
    for (size_t i = 0; i < xs.size(); ++i) what += (i ? ", " : "") + std::to_string(xs[i]);
    what += "]: " + k->implementation();
    expect_near_all(y, os, want, what);
    EXPECT_NE(k->implementation().find("boxes"), std::string::npos) << what;
    EXPECT_EQ(k->implementation().find("by tap") != std::string::npos, rule == "1") << what;
  };
  for (const std::string rule : {"1", "0"}) {
    ::setenv("DISCO_TAP_BOXES", rule.c_str(), 1);
    // The 1-D one: a dilated temporal conv on a short sequence.
    for (const Dims &xs : {Dims{1, 32, 14, 14}, Dims{2, 16, 15, 13}, Dims{1, 16, 14}}) check(xs, rule);
  }
  ::unsetenv("DISCO_TAP_BOXES");
}

TEST(OnednnConv, DepthwiseSameUpperPadsFollowTheRunTimeShape) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {1, 3, sym("h"), sym("w")});
  TensorData w = tensor({3, 1, 3, 3}, 0.5f, 4);
  b.output(
      b.op("Conv", {x, b.constant("w", w)},
           testing::attrs(
               {{"group", attr_int(3)}, {"strides", attr_ints({2, 2})}, {"auto_pad", attr_string("SAME_UPPER")}})));
  Session s(b.build(), "conv_dw", "", onednn_first());
  for (Dims xs : {Dims{1, 3, 7, 6}, Dims{1, 3, 4, 9}}) {
    TensorData tx = tensor(xs);
    auto out = s.run({tx});
    // SAME_UPPER: out = ceil(in / 2), the odd pad goes at the end.
    Dims pads(4);
    for (int d = 0; d < 2; ++d) {
      const int64_t in = xs[2 + d], o = (in + 1) / 2, total = std::max<int64_t>(0, (o - 1) * 2 + 3 - in);
      pads[d] = total / 2;
      pads[d + 2] = total - total / 2;
    }
    Dims os;
    auto want = ref_conv2d(values(tx), xs, values(w), w.shape, {}, {2, 2}, {1, 1}, pads, 3, &os);
    expect_near_all(out[0], os, want, "h " + std::to_string(xs[2]) + " w " + std::to_string(xs[3]));
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).onednn, 1);
}

TEST(OnednnConv, OneDimensionalConvWithInputWeightsAndResidualMatchesTheReference) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 2, sym("l")});
  auto w = b.input("w", DType::F32, {3, 2, 3});
  auto r = b.input("r", DType::F32, {sym("n"), 3, sym("l")});
  auto y = b.op("Conv", {x, w}, testing::attrs({{"pads", attr_ints({1, 1})}}));
  b.output(b.op("Add", {y, r}));
  Session s(b.build(), "conv1d", "", onednn_first());
  for (Dims xs : {Dims{1, 2, 5}, Dims{2, 2, 11}}) {
    TensorData tx = tensor(xs), tw = tensor({3, 2, 3}, 0.5f, 5), tr = tensor({xs[0], 3, xs[2]}, 0.25f, 9);
    auto out = s.run({tx, tw, tr});
    // A 1-D conv is a 2-D conv of height 1.
    Dims os;
    auto want = ref_conv2d(values(tx), {xs[0], 2, 1, xs[2]}, values(tw), {3, 2, 1, 3}, {}, {1, 1}, {1, 1}, {0, 1, 0, 1},
                           1, &os);
    for (size_t i = 0; i < want.size(); ++i) want[i] += tr.as<float>()[i];
    expect_near_all(out[0], {xs[0], 3, xs[2]}, want, "l = " + std::to_string(xs[2]));
  }
  const StepCount c = count_steps(s.last_compile().plan);
  EXPECT_EQ(c.onednn, 1);
  EXPECT_EQ(c.other, 0);
}

// Depthwise windows with pads over 4, where 2.6's AVX2 JIT depthwise kernel
// refuses them (and any 1-D depthwise conv, which 2.6 runs on its im2col
// gemm): a 1-D conv runs as a 2-D one of height 1, and X is copied into a
// zero-bordered buffer so the JIT kernel runs it without pads. Conformer's
// depthwise conv1d (31 taps, pads 15, SiLU after) and a 13x13 one, at lengths
// shorter than the window too, against the scalar reference.
TEST(OnednnConv, WideDepthwiseWindowsRunTheJitKernelOnAPaddedCopyOfX) {
  struct Case {
    Dims xs, ws, pads;  // pads {top, left, bottom, right}; a 1-D case has xs and ws of rank 3
  };
  const std::vector<Case> cases = {{{2, 16, 77}, {16, 1, 31}, {0, 15, 0, 15}},
                                   {{1, 16, 5}, {16, 1, 31}, {0, 15, 0, 15}},
                                   {{1, 24, 9, 20}, {24, 1, 13, 13}, {6, 6, 6, 6}},
                                   {{2, 8, 30}, {8, 1, 15}, {0, 7, 0, 5}}};
  for (const Case &c : cases) {
    const bool one_d = c.xs.size() == 3;
    const int64_t ch = c.xs[1];
    auto k = make_kernel(
        "onednn.conv",
        {{"strides", one_d ? "1" : "1,1"},
         {"dilations", one_d ? "1" : "1,1"},
         {"pads", one_d ? std::to_string(c.pads[1]) + "," + std::to_string(c.pads[3])
                        : "6,6,6,6"},
         {"group", std::to_string(ch)},
         {"auto_pad", "NOTSET"},
         {"post_ops", "swish:1"}});
    TensorData x = tensor(c.xs), w = tensor(c.ws, 0.25f, 3), bias = tensor({ch}, 0.5f, 5);
    const Dims xs4 = one_d ? Dims{c.xs[0], ch, 1, c.xs[2]} : c.xs, ws4 = one_d ? Dims{ch, 1, 1, c.ws[2]} : c.ws;
    Dims os4;
    auto want = ref_conv2d(values(x), xs4, values(w), ws4, values(bias), {1, 1}, {1, 1}, c.pads, ch, &os4);
    for (auto &v : want) v = static_cast<float>(v / (1 + std::exp(-double(v))));
    const Dims os = one_d ? Dims{os4[0], os4[1], os4[3]} : os4;
    TensorData y(DType::F32, os);
    std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
    SymbolValues syms;
    k->run(ExternCall{ins, outs, syms});
    auto text = [](const Dims &d) {
      std::string t;
      for (int64_t v : d) t += (t.empty() ? "[" : ", ") + std::to_string(v);
      return t + "]";
    };
    const std::string what = "X " + text(c.xs) + " W " + text(c.ws) + ": " + k->implementation();
    expect_near_all(y, os, want, what);
    // A JIT depthwise kernel: jit_dw (AVX2) or brdgmm_dw (AVX-512); not the
    // reference or im2col gemm path.
    EXPECT_NE(k->implementation().find("_dw:"), std::string::npos) << what;
  }
}

TEST(OnednnConv, OneChannelInAndOnePositionOutNeedNoLayoutCopies) {
  // X with one channel and Y with one position read the same in NCHW and NHWC.
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 1, 5, 5});
  auto r = b.input("r", DType::F32, {sym("n"), 3, 1, 1});
  TensorData w = tensor({3, 1, 5, 5}, 0.25f, 2);
  b.output(b.op("Sigmoid", {b.op("Add", {b.op("Conv", {x, b.constant("w", w)}), r})}));
  Session s(b.build(), "conv_1x1_out", "", onednn_first());
  for (int64_t n : {1, 4}) {
    TensorData tx = tensor({n, 1, 5, 5}), tr = tensor({n, 3, 1, 1}, 0.5f, 3);
    auto out = s.run({tx, tr});
    Dims os;
    auto want = ref_conv2d(values(tx), tx.shape, values(w), w.shape, {}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &os);
    for (size_t i = 0; i < want.size(); ++i) want[i] = 1 / (1 + std::exp(-(want[i] + tr.as<float>()[i])));
    expect_near_all(out[0], os, want, "n = " + std::to_string(n));
  }
  EXPECT_EQ(count_steps(s.last_compile().plan).other, 0);
}

// convnext's block: a depthwise conv, then a Transpose to channels last that
// a host op reads. The conv step writes its result as the Transpose's (out_perm
// 0,2,3,1), from the blocked layout (16 channels) and from nhwc (12), with a
// bias and a residual Add in its epilogue; the Softmax over the channels,
// left to the host, reads it. Against a plain-loop conv, transpose and softmax.
TEST(OnednnConv, AResultTransposedToChannelsLastIsWrittenInPlaceOfTheTranspose) {
  for (int64_t ch : {16, 12}) {
    GraphBuilder b;
    auto x = b.input("x", DType::F32, {sym("n"), ch, sym("h"), sym("w")});
    TensorData w = tensor({ch, 1, 3, 3}, 0.25f, 1), bias = tensor({ch}, 0.5f, 2);
    auto conv = b.op("Conv", {x, b.constant("w", w), b.constant("bias", bias)},
                     testing::attrs({{"group", attr_int(ch)}, {"pads", attr_ints({1, 1, 1, 1})}}));
    auto t = b.op("Transpose", {b.op("Add", {conv, x})}, testing::attrs({{"perm", attr_ints({0, 2, 3, 1})}}));
    b.output(b.op("Softmax", {t}, testing::attrs({{"axis", attr_int(-1)}})));
    Session s(b.build(), "conv_to_nhwc_" + std::to_string(ch), "", onednn_first());
    for (Dims xs : {Dims{1, ch, 5, 7}, Dims{2, ch, 4, 3}}) {
      TensorData tx = tensor(xs);
      auto out = s.run({tx});
      Dims cs;
      auto conv_ref = ref_conv2d(values(tx), xs, values(w), w.shape, values(bias), {1, 1}, {1, 1}, {1, 1, 1, 1}, ch, &cs);
      const int64_t n = xs[0], hw = xs[2] * xs[3];
      std::vector<float> want(conv_ref.size());
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < hw; ++p) {
          double sum = 0;
          for (int64_t c = 0; c < ch; ++c) {
            const int64_t at = (i * ch + c) * hw + p;
            sum += std::exp(double(conv_ref[at]) + tx.as<float>()[at]);
          }
          for (int64_t c = 0; c < ch; ++c) {
            const int64_t at = (i * ch + c) * hw + p;
            want[(i * hw + p) * ch + c] = static_cast<float>(std::exp(double(conv_ref[at]) + tx.as<float>()[at]) / sum);
          }
        }
      expect_near_all(out[0], Dims{n, xs[2], xs[3], ch}, want, std::to_string(ch) + " channels at n = " + std::to_string(xs[0]));
    }
    const PlanStep *step = find_step(s.last_compile().plan, "onednn.conv");
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->params.count("out_perm") ? step->params.at("out_perm") : "", "0,2,3,1") << ch << " channels";
  }
}

}  // namespace
}  // namespace disco

namespace disco {
namespace {

using namespace testing;

// A conv with one side of a whole number of channel blocks and the other not
// (24 or 40 channels beside 48 or 64) runs on one thread with both sides
// blocked, the narrow one zero-padded (onednn_conv.cc); with a residual Add
// (a sum post-op over the padded result) and without, against a plain-loop
// convolution, with the padded staging on and off (DISCO_PADDED_BLOCKS=0).
TEST(OnednnConv, NarrowChannelSidesPaddedToABlockMatchTheReference) {
  const std::vector<ConvReluCase> cases = {{{1, 24, 14, 14}, {48, 24, 1, 1}, 1, 0, false, 1},
                                           {{1, 48, 14, 14}, {24, 48, 1, 1}, 1, 0, true, 1},
                                           {{2, 40, 9, 9}, {64, 40, 3, 3}, 1, 1, true, 1}};
  for (const char *padded : {"1", "0"}) {
    ::setenv("DISCO_PADDED_BLOCKS", padded, 1);
    for (const ConvReluCase &c : cases) {
      const std::string what = std::string("DISCO_PADDED_BLOCKS=") + padded + ", X [" + std::to_string(c.xs[1]) +
                               " channels] W [" + std::to_string(c.ws[0]) + ", ...]";
      const std::string impl = check_conv_relu_step(c, what);
      EXPECT_EQ(impl.find("ref"), std::string::npos) << what << ": " << impl;
    }
  }
  ::unsetenv("DISCO_PADDED_BLOCKS");
}

// A conv over non-overlapping windows (kernel = stride: ConvNeXt's 2x2
// stride-2 downsampling, a 4x4 stride-4 stem) between whole channel blocks
// runs channels last, where oneDNN 2.6 has brgconv on AVX-512 (its blocked
// kernel ran 1.2-1.35x slower), against a plain-loop convolution, with a
// residual and without, at one and two images and with the rule off
// (DISCO_PATCH_NHWC=0, the blocked kernel).
TEST(OnednnConv, NonOverlappingWindowsBetweenWholeBlocksRunChannelsLastAndMatchTheReference) {
  const std::vector<ConvReluCase> cases = {{{1, 32, 8, 8}, {48, 32, 2, 2}, 2, 0, false, 1},
                                           {{2, 16, 12, 12}, {32, 16, 4, 4}, 4, 0, true, 2},
                                           {{1, 48, 10, 10}, {64, 48, 2, 2}, 2, 0, true, 1}};
  const bool avx512 = __builtin_cpu_supports("avx512f") && channel_block() == 16;
  for (const char *rule : {"1", "0"}) {
    ::setenv("DISCO_PATCH_NHWC", rule, 1);
    for (const ConvReluCase &c : cases) {
      const std::string what = std::string("DISCO_PATCH_NHWC=") + rule + ", X [" + std::to_string(c.xs[0]) + ", " +
                               std::to_string(c.xs[1]) + ", ...] W [" + std::to_string(c.ws[0]) + ", ..., " +
                               std::to_string(c.ws[2]) + "]";
      const std::string impl = check_conv_relu_step(c, what);
      EXPECT_EQ(impl.find("ref"), std::string::npos) << what << ": " << impl;
      if (avx512) {
        EXPECT_EQ(impl.find("brgconv") != std::string::npos, rule[0] == '1') << what << ": " << impl;
      }
    }
  }
  ::unsetenv("DISCO_PATCH_NHWC");
}

}  // namespace
}  // namespace disco
