// The vitis_ai int8 reference executor, on each of its engines (int8_engine.h:
// the portable loops AOT libraries run, the Halide pipelines disco run
// installs), equals a plain scalar int8 implementation written here, with exact integer equality, on random conv,
// depthwise conv, gemm, pool, add, concat and resize layers, strides,
// paddings, dilations and activations included. The scalar code follows the
// DPU's recipe from first principles: integer multiply-accumulate, the bias
// shifted into the accumulator, round half up ((v + 2^(s-1)) >> s), saturate.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "targets/vitis_ai/int8_engine.h"
#include "targets/vitis_ai/int8_ops.h"

namespace disco::vitis_ai {
namespace {

using Ints = std::vector<int64_t>;

Int8Tensor random_tensor(std::mt19937 &rng, Ints shape, int fix) {
  Int8Tensor t = Int8Tensor::zeros(std::move(shape), fix);
  std::uniform_int_distribution<int> d(-128, 127);
  for (auto &v : t.data) v = static_cast<int8_t>(d(rng));
  return t;
}

// The scalar definition, written independently of the library's helper.
int8_t shift_round_saturate(int64_t v, int s) {
  int64_t r;
  if (s > 0) {
    const int64_t half = int64_t{1} << (s - 1);
    r = v + half;
    r = r >= 0 ? r >> s : -((-r + (int64_t{1} << s) - 1) >> s);  // floor division by 2^s
  } else {
    r = v * (int64_t{1} << (-s));
  }
  return static_cast<int8_t>(std::clamp<int64_t>(r, -128, 127));
}

int8_t activate(int64_t acc, Activation act, int shift, int out_fix) {
  switch (act.kind) {
    case ActKind::None: return shift_round_saturate(acc, shift);
    case ActKind::Relu: return shift_round_saturate(std::max<int64_t>(acc, 0), shift);
    case ActKind::Relu6: {
      const int64_t six = static_cast<int64_t>(std::min(127.0, std::floor(6.0 * std::pow(2.0, out_fix))));
      return static_cast<int8_t>(std::min<int64_t>(shift_round_saturate(std::max<int64_t>(acc, 0), shift), six));
    }
    case ActKind::Leaky: return shift_round_saturate(acc < 0 ? acc * act.leaky_num : acc * 256, shift + 8);
  }
  return 0;
}

Int8Tensor scalar_conv(const Int8Tensor &x, const Int8Tensor &w, const Int8Tensor &b, const ConvGeometry &g,
                       Activation act, int out_fix) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t M = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = (H + g.pad_top + g.pad_bottom - g.dilation_h * (KH - 1) - 1) / g.stride_h + 1;
  const int64_t OW = (W + g.pad_left + g.pad_right - g.dilation_w * (KW - 1) - 1) / g.stride_w + 1;
  Int8Tensor y = Int8Tensor::zeros({N, M, OH, OW}, out_fix);
  const int acc_fix = x.fix + w.fix;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = static_cast<int64_t>(b.data[m]) * (int64_t{1} << (acc_fix - b.fix));  // not <<: b may be negative
          for (int64_t cg = 0; cg < Cg; ++cg) {
            const int64_t c = (m / (M / g.group)) * Cg + cg;
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * g.stride_h + kh * g.dilation_h - g.pad_top;
                const int64_t iw = ow * g.stride_w + kw * g.dilation_w - g.pad_left;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += int64_t{x.data[((n * C + c) * H + ih) * W + iw]} * w.data[((m * Cg + cg) * KH + kh) * KW + kw];
              }
          }
          y.data[((n * M + m) * OH + oh) * OW + ow] = activate(acc, act, acc_fix - out_fix, out_fix);
        }
  return y;
}

Int8Tensor scalar_pool(const Int8Tensor &x, bool is_max, int64_t KH, int64_t KW, const ConvGeometry &g, int out_fix) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = (H + g.pad_top + g.pad_bottom - KH) / g.stride_h + 1;
  const int64_t OW = (W + g.pad_left + g.pad_right - KW) / g.stride_w + 1;
  Int8Tensor y = Int8Tensor::zeros({N, C, OH, OW}, is_max ? x.fix : out_fix);
  const int64_t count = KH * KW;
  const int64_t mul = ((int64_t{1} << 24) + count / 2) / count;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t best = -128, sum = 0;  // pads: -128 for max, 0 for the sum
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t ih = oh * g.stride_h + kh - g.pad_top, iw = ow * g.stride_w + kw - g.pad_left;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const int64_t v = x.data[(nc * H + ih) * W + iw];
            best = std::max(best, v), sum += v;
          }
        y.data[(nc * OH + oh) * OW + ow] = is_max ? static_cast<int8_t>(best) : shift_round_saturate(sum * mul, 24 + x.fix - out_fix);
      }
  return y;
}

void expect_same(const Int8Tensor &got, const Int8Tensor &want, const std::string &what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  EXPECT_EQ(got.fix, want.fix) << what;
  int64_t diffs = 0, first = -1;
  for (size_t i = 0; i < want.data.size(); ++i)
    if (got.data[i] != want.data[i]) diffs += 1, first = first < 0 ? static_cast<int64_t>(i) : first;
  EXPECT_EQ(diffs, 0) << what << ": first difference at " << first << ": " << int(got.data[std::max<int64_t>(first, 0)])
                      << " vs " << int(want.data[std::max<int64_t>(first, 0)]);
}

// Each op test runs once per engine, the engine installed as disco run or an AOT library would.
class VitisAiInt8Ops : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    set_int8_engine(GetParam() == "halide" ? &halide_int8_engine() : &portable_int8_engine());
    ASSERT_EQ(std::string(int8_engine().name), GetParam());
  }
  void TearDown() override { set_int8_engine(nullptr); }
};
INSTANTIATE_TEST_SUITE_P(Engines, VitisAiInt8Ops, ::testing::Values("portable", "halide"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST(VitisAiInt8Scalar, RoundShiftRoundsHalfUpAndSaturates) {
  EXPECT_EQ(round_shift_saturate(5, 1), 3);     // 2.5 -> 3
  EXPECT_EQ(round_shift_saturate(-5, 1), -2);   // -2.5 -> -2 (half up)
  EXPECT_EQ(round_shift_saturate(-7, 2), -2);   // -1.75 -> -2
  EXPECT_EQ(round_shift_saturate(1000, 2), 127);
  EXPECT_EQ(round_shift_saturate(-1000, 0), -128);
  EXPECT_EQ(round_shift_saturate(3, -2), 12);
  EXPECT_EQ(quantize_value(0.75f, 2), 3);
  EXPECT_EQ(quantize_value(-0.625f, 2), -2);   // -2.5 -> -2
  EXPECT_EQ(quantize_value(100.0f, 4), 127);
}

TEST_P(VitisAiInt8Ops, ConvMatchesScalarCodeOverStridesPadsGroupsAndActivations) {
  std::mt19937 rng(7);
  struct Case {
    Ints x, w;
    ConvGeometry g;
    Activation act;
  };
  std::vector<Case> cases = {
      {{1, 3, 9, 11}, {8, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {ActKind::Relu}},
      {{2, 5, 10, 7}, {20, 5, 3, 3}, {2, 2, 1, 1, 1, 1, 1, 1, 1}, {ActKind::None}},
      {{1, 4, 8, 8}, {6, 4, 1, 1}, {1, 1, 0, 0, 0, 0, 1, 1, 1}, {ActKind::Relu6}},
      {{1, 6, 12, 9}, {6, 1, 3, 3}, {2, 1, 1, 0, 2, 1, 1, 1, 6}, {ActKind::Leaky, 26}},  // depthwise
      {{1, 3, 13, 13}, {17, 3, 5, 4}, {3, 2, 2, 1, 0, 3, 1, 1, 1}, {ActKind::None}},
      {{1, 4, 11, 11}, {5, 4, 3, 3}, {1, 1, 2, 2, 2, 2, 2, 2, 1}, {ActKind::Relu}},  // dilated
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    const int fx = 5, fw = 7, fb = 4 + static_cast<int>(i % 3), fo = 3 + static_cast<int>(i % 4);
    Int8Tensor x = random_tensor(rng, c.x, fx), w = random_tensor(rng, c.w, fw);
    Int8Tensor b = random_tensor(rng, {c.w[0]}, fb);
    expect_same(conv2d(x, w, b, c.g, c.act, fo), scalar_conv(x, w, b, c.g, c.act, fo), "conv case " + std::to_string(i));
  }
}

TEST_P(VitisAiInt8Ops, GemmMatchesScalarCode) {
  std::mt19937 rng(8);
  Int8Tensor a = random_tensor(rng, {7, 37}, 6), w = random_tensor(rng, {10, 37}, 8), b = random_tensor(rng, {10}, 5);
  Int8Tensor got = gemm(a, w, b, {ActKind::None}, 4);
  ASSERT_EQ(got.shape, (Ints{7, 10}));
  for (int64_t m = 0; m < 7; ++m)
    for (int64_t n = 0; n < 10; ++n) {
      int64_t acc = int64_t{b.data[n]} * (int64_t{1} << (6 + 8 - 5));
      for (int64_t k = 0; k < 37; ++k) acc += int64_t{a.data[m * 37 + k]} * w.data[n * 37 + k];
      EXPECT_EQ(got.data[m * 10 + n], shift_round_saturate(acc, 6 + 8 - 4)) << m << "," << n;
    }
}

TEST_P(VitisAiInt8Ops, PoolsMatchScalarCode) {
  std::mt19937 rng(9);
  Int8Tensor x = random_tensor(rng, {2, 3, 11, 10}, 4);
  ConvGeometry g{2, 2, 1, 1, 1, 0, 1, 1, 1};
  expect_same(pool2d(x, PoolKind::Max, 3, 3, g, 0), scalar_pool(x, true, 3, 3, g, 0), "max pool 3x3 s2 padded");
  expect_same(pool2d(x, PoolKind::Average, 3, 3, g, 4), scalar_pool(x, false, 3, 3, g, 4), "average pool 3x3 s2");
  ConvGeometry s1;
  expect_same(pool2d(x, PoolKind::Average, 2, 2, s1, 6), scalar_pool(x, false, 2, 2, s1, 6), "average pool 2x2 s1");
  expect_same(global_average_pool(x, 7), scalar_pool(x, false, 11, 10, s1, 7), "global average pool");
  expect_same(global_average_pool(x, 2), scalar_pool(x, false, 11, 10, s1, 2), "global average pool to fix 2");
}

TEST_P(VitisAiInt8Ops, AddAlignsFixPositionsLikeScalarCode) {
  std::mt19937 rng(10);
  for (int relu = 0; relu < 2; ++relu) {
    Int8Tensor a = random_tensor(rng, {2, 4, 5, 6}, 3), b = random_tensor(rng, {2, 4, 5, 6}, 6);
    const int fo = 4;
    Int8Tensor got = add(a, b, {relu ? ActKind::Relu : ActKind::None}, fo);
    Int8Tensor want = Int8Tensor::zeros(a.shape, fo);
    for (size_t i = 0; i < want.data.size(); ++i) {
      int64_t s = int64_t{a.data[i]} * 8 + b.data[i];  // both at fix 6 (a times 2^3)
      if (relu) s = std::max<int64_t>(s, 0);
      want.data[i] = shift_round_saturate(s, 6 - fo);
    }
    expect_same(got, want, relu ? "add+relu" : "add");
  }
}

TEST_P(VitisAiInt8Ops, ConcatRequantizesEachInputLikeScalarCode) {
  std::mt19937 rng(11);
  Int8Tensor a = random_tensor(rng, {2, 3, 4, 5}, 2), b = random_tensor(rng, {2, 5, 4, 5}, 6),
             c = random_tensor(rng, {2, 1, 4, 5}, 4);
  const int fo = 4;
  Int8Tensor got = concat({&a, &b, &c}, 1, fo);
  Int8Tensor want = Int8Tensor::zeros({2, 9, 4, 5}, fo);
  for (int64_t n = 0; n < 2; ++n) {
    int64_t off = 0;
    for (const Int8Tensor *t : {&a, &b, &c}) {
      for (int64_t i = 0; i < t->shape[1] * 20; ++i)
        want.data[(n * 9 + off) * 20 + i] = shift_round_saturate(t->data[n * t->shape[1] * 20 + i], t->fix - fo);
      off += t->shape[1];
    }
  }
  expect_same(got, want, "concat");
}

TEST_P(VitisAiInt8Ops, ResizeNearestRepeatsPixels) {
  std::mt19937 rng(12);
  Int8Tensor x = random_tensor(rng, {1, 2, 3, 4}, 5);
  Int8Tensor got = resize_nearest(x, 2, 3);
  ASSERT_EQ(got.shape, (Ints{1, 2, 6, 12}));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t w = 0; w < 12; ++w)
        EXPECT_EQ(got.data[(c * 6 + h) * 12 + w], x.data[(c * 3 + h / 2) * 4 + w / 3]);
}

}  // namespace
}  // namespace disco::vitis_ai
