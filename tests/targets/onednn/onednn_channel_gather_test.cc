// The oneDNN backend's channel gather (onednn.channel_gather): ShuffleNet v2's
// channel shuffle, with the Concat before it and the channel Slices after
// it, is one step that reads and writes the layouts the convolutions around
// it hold (blocked, channels last, plain), and the network's result matches
// plain-loop references at several batch sizes.
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

constexpr int64_t kH = 5, kW = 6;

std::vector<float> relu(std::vector<float> v) {
  for (auto &x : v) x = std::max(x, 0.0f);
  return v;
}

// Channels [first, first + count) of the NCHW tensors, one after the other: ONNX Concat and Slice.
std::vector<float> channels(const std::vector<std::pair<const std::vector<float> *, int64_t>> &parts, int64_t n,
                            int64_t first, int64_t count) {
  const int64_t hw = kH * kW;
  std::vector<float> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = first; c < first + count; ++c) {
      int64_t at = c;
      for (const auto &p : parts) {
        if (at < p.second) {
          const float *src = p.first->data() + (b * p.second + at) * hw;
          y.insert(y.end(), src, src + hw);
          break;
        }
        at -= p.second;
      }
    }
  return y;
}

// ShuffleNet's channel shuffle of NCHW x with `groups` groups, in plain loops:
// Reshape [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4), Reshape [N, C, H, W].
std::vector<float> shuffle(const std::vector<float> &x, int64_t n, int64_t c, int64_t groups) {
  const int64_t hw = kH * kW, per = c / groups;
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t j = 0; j < per; ++j)
      for (int64_t k = 0; k < groups; ++k)
        std::copy_n(x.data() + (b * c + k * per + j) * hw, hw, y.data() + (b * c + j * groups + k) * hw);
  return y;
}

struct Case {
  int64_t half;              // channels of each branch; the shuffle is of 2 * half
  bool host_branch = false;  // the first branch ends in Abs on the host: the gather reads a plain input
  bool slices = true;        // the shuffle's result split in halves by Slices (else read whole by a conv)
  bool host_reader = false;  // the shuffle's result is also a graph output: written plain
};

// x -> two 1x1 conv branches (+ Relu) -> Concat -> shuffle -> [Slices -> a
// 1x1 conv of each, Add] or [a 1x1 conv]. ShuffleNet v2's unit, cut down.
void check_shuffle(const Case &k) {
  const int64_t c = 2 * k.half;
  GraphBuilder b;
  auto x = b.input("x", DType::F32, {sym("n"), 3, kH, kW});
  TensorData w0 = tensor({k.half, 3, 1, 1}, 0.25f, 1), w1 = tensor({k.half, 3, 1, 1}, 0.125f, 2);
  TensorData b0 = tensor({k.half}, 0.5f, 3), b1 = tensor({k.half}, 0.25f, 4);
  auto a = b.op("Relu", {b.op("Conv", {x, b.constant("w0", w0), b.constant("b0", b0)})});
  if (k.host_branch) a = b.op("Abs", {a});
  auto bb = b.op("Relu", {b.op("Conv", {x, b.constant("w1", w1), b.constant("b1", b1)})});
  auto cat = b.op("Concat", {a, bb}, testing::attrs({{"axis", attr_int(1)}}));
  auto split = b.op("Reshape", {cat, b.constant("s5", i64({5}, {0, 2, k.half, kH, kW}))});
  auto tr = b.op("Transpose", {split}, testing::attrs({{"perm", attr_ints({0, 2, 1, 3, 4})}}));
  auto sh = b.op("Reshape", {tr, b.constant("s4", i64({4}, {0, c, kH, kW}))});
  TensorData wl = tensor({8, k.half, 1, 1}, 0.0625f, 5), wr = tensor({8, k.half, 1, 1}, 0.03125f, 6);
  TensorData wa = tensor({8, c, 1, 1}, 0.0625f, 7);
  if (k.slices) {
    auto ax = b.constant("axes", i64({1}, {1}));
    auto s0 = b.op("Slice", {sh, b.constant("st0", i64({1}, {0})), b.constant("en0", i64({1}, {k.half})), ax});
    auto s1 = b.op("Slice", {sh, b.constant("st1", i64({1}, {k.half})), b.constant("en1", i64({1}, {c})), ax});
    auto l = b.op("Conv", {s0, b.constant("wl", wl)});
    auto r = b.op("Conv", {s1, b.constant("wr", wr)});
    b.output(b.op("Add", {l, r}));
  } else {
    b.output(b.op("Conv", {sh, b.constant("wa", wa)}));
  }
  if (k.host_reader) b.output(sh);
  Session s(b.build(), "shuffle", "", onednn_first());
  const Plan &plan = s.last_compile().plan;
  const PlanStep *step = find_step(plan, "onednn.channel_gather");
  ASSERT_TRUE(step) << "the channel shuffle is not one oneDNN step";
  EXPECT_EQ(step->outputs.size(), k.slices ? 2u : 1u);
  EXPECT_EQ(count_steps(plan, "onednn.concat"), 0);
  // Inputs from convolutions arrive channels last; an Abs on the host hands a plain one.
  EXPECT_EQ(step->params.at("channels_last_inputs"), k.host_branch ? "1" : "0,1");
  // A graph output is plain.
  EXPECT_EQ(step->params.at("channels_last_outputs"), k.host_reader ? "" : k.slices ? "0,1" : "0");
  for (int64_t n : {1, 3}) {
    const Dims xs = {n, 3, kH, kW};
    TensorData tx = tensor(xs, 0.5f, 9);
    Dims os;
    std::vector<float> pa = relu(ref_conv2d(values(tx), xs, values(w0), w0.shape, values(b0), {1, 1}, {1, 1},
                                            {0, 0, 0, 0}, 1, &os));
    if (k.host_branch)
      for (auto &v : pa) v = std::fabs(v);
    const std::vector<float> pb = relu(ref_conv2d(values(tx), xs, values(w1), w1.shape, values(b1), {1, 1}, {1, 1},
                                                  {0, 0, 0, 0}, 1, &os));
    const std::vector<float> shuffled = shuffle(channels({{&pa, k.half}, {&pb, k.half}}, n, 0, c), n, c, 2);
    std::vector<float> want;
    Dims ys;
    if (k.slices) {
      const std::vector<float> s0 = channels({{&shuffled, c}}, n, 0, k.half);
      const std::vector<float> s1 = channels({{&shuffled, c}}, n, k.half, k.half);
      const Dims hs = {n, k.half, kH, kW};
      want = ref_conv2d(s0, hs, values(wl), wl.shape, {}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &ys);
      const std::vector<float> r = ref_conv2d(s1, hs, values(wr), wr.shape, {}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &ys);
      for (size_t i = 0; i < want.size(); ++i) want[i] += r[i];
    } else {
      want = ref_conv2d(shuffled, {n, c, kH, kW}, values(wa), wa.shape, {}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, &ys);
    }
    auto out = s.run({tx});
    const std::string at = "batch " + std::to_string(n);
    expect_near_all(out[0], ys, want, "the convs after the shuffle, " + at);
    if (k.host_reader) expect_near_all(out[1], {n, c, kH, kW}, shuffled, "the shuffle's result, " + at);
  }
}

TEST(OnednnChannelGather, BlockedHalvesShuffleAndSplitInOneStep) {
  // 8 + 8 channels: branches, shuffle and halves all whole blocks of 8.
  check_shuffle({8});
}

TEST(OnednnChannelGather, ChannelsLastHalvesOfPartBlocks) {
  // 10 + 10 channels (ShuffleNet's 58 and 116 are no multiples of 8 either):
  // channels last, unblocked; 8 of each half's channels unpacked, 2 one at a time.
  check_shuffle({10});
  check_shuffle({6});
}

TEST(OnednnChannelGather, APlainInputFromTheHostMixesWithBlockedOnes) {
  check_shuffle({8, true});
}

TEST(OnednnChannelGather, AShuffleReadWholeIsOneResult) {
  check_shuffle({12, false, false});
}

TEST(OnednnChannelGather, AShuffleTheGraphReturnsIsWrittenPlain) {
  check_shuffle({8, false, false, true});
}

}  // namespace
}  // namespace disco
