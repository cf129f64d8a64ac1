// oneDNN conv steps as Winograd (targets/onednn/conv_winograd.h): the rule
// that picks it, and conv steps it picks (with a ReLU, with a residual Add and
// a ReLU, at one and two images) against a plain-loop convolution in double
// precision; steps the rule leaves direct, and DISCO_WINOGRAD=0.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "targets/onednn/conv_winograd.h"
#include "targets/onednn/onednn_layout.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"

namespace disco {
namespace {

using namespace testing;  // disco::testing: the tests' shared helpers

// oneDNN 2.6 has Winograd kernels for AVX-512 only; the layout's 16-channel block says the same.
bool winograd_cpu() { return channel_block() == 16; }

WinogradCase conv3x3(int64_t in, int64_t out, int64_t h, int64_t w) {
  WinogradCase c;
  c.in_channels = in, c.out_channels = out, c.kernel_h = c.kernel_w = 3, c.stride_h = c.stride_w = 1;
  c.out_h = h, c.out_w = w;
  return c;
}

TEST(ConvWinograd, RulePicksLargeMapsAndWideSmallOnesOfOneImage) {
  EXPECT_TRUE(winograd_pays(conv3x3(64, 64, 56, 56)));
  EXPECT_TRUE(winograd_pays(conv3x3(16, 64, 16, 40)));
  EXPECT_TRUE(winograd_pays(conv3x3(512, 512, 7, 7)));
  EXPECT_TRUE(winograd_pays(conv3x3(256, 256, 10, 10)));
  // Measured slower: a 5x5 map, and 9x9 to 14x14 maps of under 256 channels.
  EXPECT_FALSE(winograd_pays(conv3x3(512, 512, 5, 5)));
  EXPECT_FALSE(winograd_pays(conv3x3(128, 128, 14, 14)));
  EXPECT_FALSE(winograd_pays(conv3x3(64, 256, 13, 13)));
  WinogradCase two = conv3x3(256, 256, 10, 10);
  EXPECT_TRUE(winograd_pays(two));
  two.batch = 2;  // oneDNN's 4x3 tiles: no sure win on small maps
  EXPECT_FALSE(winograd_pays(two));
  two = conv3x3(64, 64, 20, 20);
  two.batch = 2;
  EXPECT_TRUE(winograd_pays(two));
  // Windows without a Winograd kernel.
  WinogradCase c = conv3x3(64, 64, 56, 56);
  c.stride_h = c.stride_w = 2;
  EXPECT_FALSE(winograd_pays(c));
  c = conv3x3(64, 64, 56, 56);
  c.groups = 64;
  EXPECT_FALSE(winograd_pays(c));
  c = conv3x3(64, 64, 56, 56);
  c.dilated = true;
  EXPECT_FALSE(winograd_pays(c));
  c = conv3x3(64, 64, 56, 56);
  c.kernel_h = c.kernel_w = 5;
  EXPECT_FALSE(winograd_pays(c));
  ::setenv("DISCO_WINOGRAD", "0", 1);
  EXPECT_FALSE(winograd_pays(conv3x3(64, 64, 56, 56)));
  ::unsetenv("DISCO_WINOGRAD");
}

struct Case {
  Dims xs, ws;
  int64_t stride;
  bool residual;
  bool winograd;  // what the rule says
};

void run_case(const Case &c, const std::string &label) {
  const std::string s = std::to_string(c.stride);
  auto k = make_kernel("onednn.conv", {{"strides", s + "," + s},
                                       {"dilations", "1,1"},
                                       {"pads", "1,1,1,1"},
                                       {"group", "1"},
                                       {"auto_pad", "NOTSET"},
                                       {"post_ops", c.residual ? "add,relu:0" : "relu:0"}});
  TensorData x = tensor(c.xs, 0.5f, 1), w = tensor(c.ws, 0.05f, 3), bias = tensor({c.ws[0]}, 0.5f, 5);
  Dims os;
  auto want = ref_conv2d(values(x), c.xs, values(w), c.ws, values(bias), {c.stride, c.stride}, {1, 1}, {1, 1, 1, 1},
                         1, &os);
  TensorData res = tensor(os, 0.5f, 7);
  for (size_t i = 0; i < want.size(); ++i) {
    const float v = want[i] + (c.residual ? res.as<float>()[i] : 0.0f);
    want[i] = v > 0 ? v : 0.0f;
  }
  TensorData y(DType::F32, os);
  std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
  if (c.residual) ins.push_back(view(res));
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  const std::string what = label + ": " + k->implementation();
  // Winograd's transforms round differently from a direct sum: measured within 3e-6 of the largest output.
  expect_near_all(y, os, want, what, 1e-4, 1e-4);
  const bool wino = k->implementation().find("wino") != std::string::npos;
  EXPECT_EQ(wino, c.winograd && winograd_cpu()) << what;
}

std::string text(const Dims &d) {
  std::string t;
  for (int64_t v : d) t += (t.empty() ? "[" : ", ") + std::to_string(v);
  return t + "]";
}

TEST(ConvWinograd, ConvStepsMatchThePlainConvolution) {
  const std::vector<Case> cases = {
      {{1, 32, 18, 18}, {32, 32, 3, 3}, 1, false, true},
      {{2, 16, 20, 17}, {48, 16, 3, 3}, 1, true, true},    // a ResNet block's second conv: residual, then ReLU
      {{1, 256, 9, 9}, {256, 256, 3, 3}, 1, true, true},   // a small map with wide channels
      {{1, 32, 8, 8}, {32, 32, 3, 3}, 1, false, false},    // too small: direct
      {{1, 32, 36, 36}, {32, 32, 3, 3}, 2, false, false},  // stride 2: direct
  };
  for (const Case &c : cases) run_case(c, "X " + text(c.xs) + " W " + text(c.ws) + " stride " + std::to_string(c.stride));
}

TEST(ConvWinograd, DisabledByTheEnvironmentRunsDirect) {
  ::setenv("DISCO_WINOGRAD", "0", 1);
  Case c{{1, 32, 18, 18}, {32, 32, 3, 3}, 1, true, false};
  run_case(c, "DISCO_WINOGRAD=0");
  ::unsetenv("DISCO_WINOGRAD");
}

}  // namespace
}  // namespace disco
