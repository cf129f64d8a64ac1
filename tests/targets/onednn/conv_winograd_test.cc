// oneDNN conv steps as Winograd (targets/onednn/conv_winograd.h): the rule
// that picks it, and conv steps it picks (with a ReLU, with a residual Add and
// a ReLU, at one and two images) against a plain-loop convolution in double
// precision; steps the rule leaves direct, and DISCO_WINOGRAD=0.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "targets/onednn/conv_winograd.h"
#include "targets/onednn/onednn_layout.h"
#include "tests/support/conv_step_check.h"

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
  ConvReluCase conv;
  bool winograd;  // what the rule says
};

void run_case(const Case &c, const std::string &label) {
  // Winograd's transforms round differently from a direct sum: measured within 3e-6 of the largest output.
  const std::string impl = check_conv_relu_step(c.conv, label, 1e-4, 1e-4);
  EXPECT_EQ(impl.find("wino") != std::string::npos, c.winograd && winograd_cpu()) << label << ": " << impl;
}

std::string text(const Dims &d) {
  std::string t;
  for (int64_t v : d) t += (t.empty() ? "[" : ", ") + std::to_string(v);
  return t + "]";
}

TEST(ConvWinograd, ConvStepsMatchThePlainConvolution) {
  const std::vector<Case> cases = {
      {{{1, 32, 18, 18}, {32, 32, 3, 3}, 1, 1, false}, true},
      {{{2, 16, 20, 17}, {48, 16, 3, 3}, 1, 1, true}, true},    // a ResNet block's second conv: residual, then ReLU
      {{{1, 256, 9, 9}, {256, 256, 3, 3}, 1, 1, true}, true},   // a small map with wide channels
      {{{1, 32, 8, 8}, {32, 32, 3, 3}, 1, 1, false}, false},    // too small: direct
      {{{1, 32, 36, 36}, {32, 32, 3, 3}, 2, 1, false}, false},  // stride 2: direct
  };
  for (const Case &c : cases)
    run_case(c, "X " + text(c.conv.xs) + " W " + text(c.conv.ws) + " stride " + std::to_string(c.conv.stride));
}

TEST(ConvWinograd, DisabledByTheEnvironmentRunsDirect) {
  ::setenv("DISCO_WINOGRAD", "0", 1);
  Case c{{{1, 32, 18, 18}, {32, 32, 3, 3}, 1, 1, true}, false};
  run_case(c, "DISCO_WINOGRAD=0");
  ::unsetenv("DISCO_WINOGRAD");
}

}  // namespace
}  // namespace disco
