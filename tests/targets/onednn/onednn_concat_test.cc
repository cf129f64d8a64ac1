// The oneDNN backend's channel Concat (onednn.concat): branches of
// convolutions meet in it without leaving oneDNN's layout, and the result
// matches plain-loop references at several run-time shapes, whatever mix of
// blocked, channels-last and plain inputs the plan hands it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"
#include "tests/support/plan_steps.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

// ONNX Concat along axis 1 of NCHW tensors, in plain loops.
std::vector<float> ref_concat1(const std::vector<std::vector<float>> &parts, const std::vector<Dims> &shapes) {
  const int64_t n = shapes[0][0], spatial = shapes[0][2] * shapes[0][3];
  std::vector<float> y;
  for (int64_t b = 0; b < n; ++b)
    for (size_t i = 0; i < parts.size(); ++i) {
      const int64_t run = shapes[i][1] * spatial;
      y.insert(y.end(), parts[i].begin() + b * run, parts[i].begin() + (b + 1) * run);
    }
  return y;
}

std::vector<float> relu(std::vector<float> v) {
  for (auto &x : v) x = std::max(x, 0.0f);
  return v;
}

struct Branch {
  int64_t channels, k;  // a k x k conv (pads k / 2) with bias and Relu, from x
  bool host = false;    // then Abs, which the host computes: the Concat reads a plain tensor
};

// x -> branches -> Concat(axis) -> a 3x3 conv with 8 outputs (and, with
// host_reader, Sigmoid of the Concat as a second output, which the host
// computes: the Concat then stays on the host, want_output_layout null).
// With bn_relu, a BatchNormalization and a Relu after the Concat (DenseNet's)
// are between it and both readers, and the Concat's step applies them.
void check_concat(const std::vector<Branch> &branches, int64_t axis, bool host_reader, const char *want_output_layout,
                  const std::string &want_inputs_layout, bool bn_relu = false) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
  std::vector<TensorData> ws, bs;
  std::vector<std::string> outs;
  for (size_t i = 0; i < branches.size(); ++i) {
    const Branch &br = branches[i];
    ws.push_back(tensor({br.channels, 3, br.k, br.k}, 0.25f, static_cast<int>(3 * i + 1)));
    bs.push_back(tensor({br.channels}, 0.5f, static_cast<int>(3 * i + 2)));
    const int64_t p = br.k / 2;
    auto conv = b.op("Conv", {x, b.constant("w" + std::to_string(i), ws.back()), b.constant("b" + std::to_string(i), bs.back())},
                     testing::attrs({{"pads", attr_ints({p, p, p, p})}}));
    outs.push_back(b.op("Relu", {conv}));
    if (br.host) outs.back() = b.op("Abs", {outs.back()});
  }
  auto cat = b.op("Concat", outs, testing::attrs({{"axis", attr_int(axis)}}));
  int64_t total = 0;
  for (const Branch &br : branches) total += br.channels;
  // BatchNormalization's scale, B, mean and var (positive), all different per channel.
  std::vector<float> bn[4];
  for (int64_t c = 0; c < total; ++c) {
    bn[0].push_back(0.5f + 0.03f * static_cast<float>(c % 7));
    bn[1].push_back(0.1f * static_cast<float>(c % 5) - 0.2f);
    bn[2].push_back(0.05f * static_cast<float>(c % 9) - 0.1f);
    bn[3].push_back(0.6f + 0.1f * static_cast<float>(c % 4));
  }
  if (bn_relu) {
    std::vector<std::string> in{cat};
    for (int i = 0; i < 4; ++i) in.push_back(b.constant("bn" + std::to_string(i), f32({total}, bn[i])));
    cat = b.op("Relu", {b.op("BatchNormalization", in, testing::attrs({{"epsilon", attr_float(1e-3f)}}))});
  }
  TensorData wc = tensor({8, total, 3, 3}, 0.0625f, 7), bc = tensor({8}, 0.25f, 8);
  b.output(b.op("Conv", {cat, b.constant("wc", wc), b.constant("bc", bc)}, testing::attrs({{"pads", attr_ints({1, 1, 1, 1})}})));
  if (host_reader) b.output(b.op("Sigmoid", {cat}));
  Session s(b.build(), "concat", "", onednn_first());
  const Plan &plan = s.last_compile().plan;
  const PlanStep *step = find_step(plan, "onednn.concat");
  if (!want_output_layout) {
    EXPECT_FALSE(step) << "a Concat the host reads is a oneDNN step";
  } else {
    ASSERT_TRUE(step) << "the Concat is not a oneDNN step";
    EXPECT_EQ(step->params.at("channels_last_output"), want_output_layout);
    EXPECT_EQ(step->params.at("channels_last_inputs"), want_inputs_layout);
    if (bn_relu) EXPECT_EQ(step->params.at("post_ops").substr(0, 9), "batchnorm") << step->params.at("post_ops");
    if (bn_relu) EXPECT_NE(step->params.at("post_ops").find("relu"), std::string::npos) << step->params.at("post_ops");
  }
  // The last shape's result is large enough to be copied by two threads, each its share of every run.
  s.set_num_threads(2);
  for (Dims xs : {Dims{1, 3, 5, 6}, Dims{2, 3, 4, 3}, Dims{2, 3, 131, 127}}) {
    TensorData tx = tensor(xs, 0.5f, 9);
    auto out = s.run({tx});
    std::vector<std::vector<float>> parts;
    std::vector<Dims> shapes;
    for (size_t i = 0; i < branches.size(); ++i) {
      const int64_t p = branches[i].k / 2;
      Dims os;
      parts.push_back(relu(ref_conv2d(values(tx), xs, values(ws[i]), ws[i].shape, values(bs[i]), {1, 1}, {1, 1},
                                      {p, p, p, p}, 1, &os)));
      shapes.push_back(os);
    }
    std::vector<float> c = ref_concat1(parts, shapes);
    const Dims cs = {xs[0], total, xs[2], xs[3]};
    const int64_t spatial = xs[2] * xs[3];
    if (bn_relu)
      for (size_t k = 0; k < c.size(); ++k) {
        const size_t ch = (k / spatial) % total;
        c[k] = std::max((c[k] - bn[2][ch]) / std::sqrt(bn[3][ch] + 1e-3f) * bn[0][ch] + bn[1][ch], 0.0f);
      }
    Dims ys;
    auto want = ref_conv2d(c, cs, values(wc), wc.shape, values(bc), {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, &ys);
    const std::string at = "X [" + std::to_string(xs[0]) + ", 3, " + std::to_string(xs[2]) + ", " +
                           std::to_string(xs[3]) + "]";
    expect_near_all(out[0], ys, want, "the conv after the Concat, " + at);
    if (host_reader) {
      std::vector<float> sig = c;
      for (auto &v : sig) v = 1.0f / (1.0f + std::exp(-v));
      expect_near_all(out[1], cs, sig, "the Concat read by the host, " + at);
    }
  }
}

TEST(OnednnConcat, BlockedBranchesMeetWithoutLeavingTheBlockedLayout) {
  // 8 + 16 channels: both branches and the result whole blocks of 8.
  check_concat({{8, 1}, {16, 3}}, 1, false, "1", "0,1");
}

TEST(OnednnConcat, AConcatTheHostAlsoReadsStaysOnTheHost) {
  check_concat({{8, 1}, {16, 3}}, -3, true, nullptr, "");
}

TEST(OnednnConcat, AConcatOfManyInputsTheHostReadsIsCopiedIntoAPlainResult) {
  // DenseNet's Concat of every earlier layer's result, read by a BatchNormalization: from 4
  // inputs on, a plain copy rather than a select per input in the host's kernel.
  check_concat({{8, 1}, {16, 3}, {16, 1}, {32, 3}}, 1, true, "0", "0,1,2,3");
}

TEST(OnednnConcat, PlainBranchesIntoAPlainResultAreCopiedAsTheyAre) {
  // The host's 4 + 4 channels: plain inputs, and a result that would be blocked but gets no whole block.
  check_concat({{4, 3, true}, {4, 1, true}}, 1, false, "0", "");
}

TEST(OnednnConcat, BranchesOfPartBlocksGiveAPlainResult) {
  // 4 + 4 = 8 channels: the result would be blocked, but neither input fills a block.
  check_concat({{4, 3}, {4, 1}}, 1, false, "0", "0,1");
}

TEST(OnednnConcat, AnUnblockedResultIsHeldChannelsLast) {
  // 8 + 5 + 4 = 17 channels: channels last unblocked; the 8-channel branch arrives blocked.
  check_concat({{8, 3}, {5, 1}, {4, 3}}, 1, false, "1", "0,1,2");
}

TEST(OnednnConcat, ABatchNormalizationAndReluAfterAConcatAreAppliedByItsCopies) {
  // DenseNet's: 4 branches of whole blocks, the result blocked, read by a conv.
  check_concat({{16, 1}, {16, 3}, {16, 1}, {32, 3}}, 1, false, "1", "0,1,2,3", true);
  // The same read by the host too: a plain result.
  check_concat({{16, 1}, {16, 3}, {16, 1}, {32, 3}}, 1, true, "0", "0,1,2,3", true);
  // Two plain branches (the host's Abs) reordered into the blocked result, then given the post-ops in place.
  check_concat({{16, 1, true}, {16, 3}, {16, 1, true}, {32, 3}}, 1, false, "1", "1,3", true);
  // A Concat of 2 (DenseNet's second layer): taken too, so its inputs need not leave the blocked layout.
  check_concat({{16, 1}, {16, 3}}, 1, false, "1", "0,1", true);
  // 8 + 5 + 4 + 3 channels: held channels last unblocked (nhwc), the post-ops one pass at the end.
  check_concat({{8, 1}, {5, 1}, {4, 3}, {3, 1}}, 1, false, "1", "0,1,2,3", true);
}

// A BatchNormalization whose scale is a graph input is no epilogue for the
// step (its parameters are folded when the plan is built), so a Concat of 2
// that only it reads is judged as any Concat the host reads: it stays there.
TEST(OnednnConcat, AFewInputsConcatBeforeABatchNormalizationItCannotApplyStaysOnTheHost) {
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, sym("h"), sym("w")});
  auto scale = b.input("scale", DType::F32, {16});
  const TensorData w0 = tensor({8, 3, 1, 1}, 0.25f, 1), w1 = tensor({8, 3, 1, 1}, 0.25f, 2);
  auto c0 = b.op("Relu", {b.op("Conv", {x, b.constant("w0", w0)})});
  auto c1 = b.op("Relu", {b.op("Conv", {x, b.constant("w1", w1)})});
  auto cat = b.op("Concat", {c0, c1}, testing::attrs({{"axis", attr_int(1)}}));
  const TensorData zeros = f32({16}, std::vector<float>(16, 0.0f)), ones = f32({16}, std::vector<float>(16, 1.0f));
  b.output(b.op("BatchNormalization",
                {cat, scale, b.constant("b", zeros), b.constant("m", zeros), b.constant("v", ones)},
                testing::attrs({{"epsilon", attr_float(0.0f)}})));
  Session s(b.build(), "concat_bn_input", "", onednn_first());
  EXPECT_FALSE(find_step(s.last_compile().plan, "onednn.concat")) << "a Concat of 2 that the host reads is a step";
  const Dims xs{1, 3, 4, 5};
  const TensorData tx = tensor(xs, 0.5f, 3);
  std::vector<float> sv(16);
  for (int c = 0; c < 16; ++c) sv[c] = 0.5f + 0.125f * static_cast<float>(c);
  auto out = s.run({tx, f32({16}, sv)});
  Dims os;
  std::vector<std::vector<float>> parts;
  std::vector<Dims> shapes;
  for (const TensorData *w : {&w0, &w1}) {
    parts.push_back(relu(ref_conv2d(values(tx), xs, values(*w), w->shape, std::vector<float>(8, 0.0f), {1, 1}, {1, 1},
                                    {0, 0, 0, 0}, 1, &os)));
    shapes.push_back(os);
  }
  std::vector<float> want = ref_concat1(parts, shapes);
  for (size_t k = 0; k < want.size(); ++k) want[k] *= sv[(k / 20) % 16];
  expect_near_all(out[0], {1, 16, 4, 5}, want, "the BatchNormalization of the Concat");
}

}  // namespace
}  // namespace disco
