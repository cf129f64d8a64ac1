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

WinogradCase batch_of(int64_t n, WinogradCase c) {
  c.batch = n;
  return c;
}

WinogradCase on_threads(int n, WinogradCase c) {
  c.threads = n;
  return c;
}

TEST(ConvWinograd, RulePicksLargeMapsAndWideSmallOnes) {
  const WinogradUse no = WinogradUse::kNo, whole = WinogradUse::kWhole, per_image = WinogradUse::kPerImage;
  EXPECT_EQ(winograd_use(conv3x3(64, 64, 56, 56)), whole);
  EXPECT_EQ(winograd_use(conv3x3(16, 64, 16, 40)), whole);
  EXPECT_EQ(winograd_use(conv3x3(256, 256, 10, 10)), whole);
  EXPECT_EQ(winograd_use(conv3x3(32, 64, 147, 147)), whole);
  // Measured slower inside models: one image's 7x7 maps of 512 channels, 32
  // output channels at any map, and unpadded windows.
  EXPECT_EQ(winograd_use(conv3x3(512, 512, 7, 7)), no);
  EXPECT_EQ(winograd_use(on_threads(2, conv3x3(512, 512, 7, 7))), no);
  EXPECT_EQ(winograd_use(conv3x3(128, 32, 56, 56)), no);
  EXPECT_EQ(winograd_use(conv3x3(16, 32, 28, 28)), no);
  EXPECT_EQ(winograd_use(on_threads(2, conv3x3(128, 32, 56, 56))), no);
  WinogradCase unpadded = conv3x3(80, 192, 71, 71);
  unpadded.unpadded = true;
  EXPECT_EQ(winograd_use(unpadded), no);
  // Measured slower: a 5x5 map, and 9x9 to 14x14 maps of under 256 channels.
  EXPECT_EQ(winograd_use(conv3x3(512, 512, 5, 5)), no);
  EXPECT_EQ(winograd_use(conv3x3(128, 128, 14, 14)), no);
  EXPECT_EQ(winograd_use(conv3x3(64, 256, 13, 13)), no);
  // Small maps on one thread: only channel counts that are multiples of 256
  // (AlexNet's 384 -> 256 at 13x13 ran 1.6x the direct time); on two, any.
  EXPECT_EQ(winograd_use(conv3x3(384, 256, 13, 13)), no);
  EXPECT_EQ(winograd_use(conv3x3(448, 384, 8, 8)), no);
  EXPECT_EQ(winograd_use(conv3x3(256, 384, 13, 13)), no);
  EXPECT_EQ(winograd_use(conv3x3(512, 256, 13, 13)), whole);
  EXPECT_EQ(winograd_use(conv3x3(384, 384, 16, 16)), whole);
  EXPECT_EQ(winograd_use(on_threads(2, conv3x3(384, 256, 13, 13))), whole);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(384, 384, 10, 10))), no);
  EXPECT_EQ(winograd_use(on_threads(2, batch_of(2, conv3x3(384, 384, 10, 10)))), per_image);
  // Several images: large maps as one primitive; small wide ones one image at a time.
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(64, 64, 20, 20))), whole);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(256, 256, 10, 10))), per_image);
  EXPECT_EQ(winograd_use(batch_of(8, conv3x3(256, 256, 14, 14))), per_image);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(512, 512, 7, 7))), per_image);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(256, 256, 7, 7))), no);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(512, 512, 5, 5))), no);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(128, 128, 10, 10))), no);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(256, 128, 10, 10))), no);
  EXPECT_EQ(winograd_use(batch_of(9, conv3x3(256, 256, 10, 10))), no);  // more images than measured
  // Windows without a Winograd kernel.
  WinogradCase c = conv3x3(64, 64, 56, 56);
  c.stride_h = c.stride_w = 2;
  EXPECT_EQ(winograd_use(c), no);
  c = conv3x3(64, 64, 56, 56);
  c.groups = 64;
  EXPECT_EQ(winograd_use(c), no);
  c = conv3x3(64, 64, 56, 56);
  c.dilated = true;
  EXPECT_EQ(winograd_use(c), no);
  c = conv3x3(64, 64, 56, 56);
  c.kernel_h = c.kernel_w = 5;
  EXPECT_EQ(winograd_use(c), no);
  ::setenv("DISCO_WINOGRAD_PER_IMAGE", "0", 1);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(256, 256, 10, 10))), no);
  EXPECT_EQ(winograd_use(conv3x3(256, 256, 10, 10)), whole);
  ::unsetenv("DISCO_WINOGRAD_PER_IMAGE");
  ::setenv("DISCO_WINOGRAD", "0", 1);
  EXPECT_EQ(winograd_use(conv3x3(64, 64, 56, 56)), no);
  EXPECT_EQ(winograd_use(batch_of(2, conv3x3(256, 256, 10, 10))), no);
  ::unsetenv("DISCO_WINOGRAD");
}

struct Case {
  ConvReluCase conv;
  bool winograd;  // what the rule says
  bool per_image = false;
};

void run_case(const Case &c, const std::string &label) {
  // Winograd's transforms round differently from a direct sum: measured within 3e-6 of the largest output.
  const std::string impl = check_conv_relu_step(c.conv, label, 1e-4, 1e-4);
  EXPECT_EQ(impl.find("wino") != std::string::npos, c.winograd && winograd_cpu()) << label << ": " << impl;
  EXPECT_EQ(impl.find("once per image") != std::string::npos, c.per_image && winograd_cpu()) << label << ": " << impl;
}

std::string text(const Dims &d) {
  std::string t;
  for (int64_t v : d) t += (t.empty() ? "[" : ", ") + std::to_string(v);
  return t + "]";
}

TEST(ConvWinograd, ConvStepsMatchThePlainConvolution) {
  const std::vector<Case> cases = {
      {{{1, 32, 18, 18}, {64, 32, 3, 3}, 1, 1, false}, true},
      {{{2, 16, 20, 17}, {64, 16, 3, 3}, 1, 1, true}, true},    // a ResNet block's second conv: residual, then ReLU
      {{{1, 64, 20, 20}, {32, 64, 3, 3}, 1, 1, false}, false},  // 32 channels out: direct
      {{{1, 32, 22, 22}, {64, 32, 3, 3}, 1, 0, false}, false},  // unpadded: direct
      {{{1, 256, 10, 10}, {256, 256, 3, 3}, 1, 1, true}, true},  // a small map with wide channels
      {{{1, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, true}, false},   // ResNet's last stage: direct
      {{{1, 32, 8, 8}, {32, 32, 3, 3}, 1, 1, false}, false},    // too small: direct
      {{{1, 32, 36, 36}, {32, 32, 3, 3}, 2, 1, false}, false},  // stride 2: direct
  };
  for (const Case &c : cases)
    run_case(c, "X " + text(c.conv.xs) + " W " + text(c.conv.ws) + " stride " + std::to_string(c.conv.stride));
}

// Small wide maps of several images: one image's primitive, run once per
// image, each run reading and writing its own image, the residual too (as
// the sum dst starts from, and as a binary post-op after the ReLU).
TEST(ConvWinograd, PerImageStepsMatchThePlainConvolution) {
  std::vector<Case> cases;
  for (int threads : {1, 2}) {
    cases.push_back({{{2, 256, 10, 10}, {256, 256, 3, 3}, 1, 1, true, threads}, true, true});
    cases.push_back({{{3, 256, 12, 11}, {256, 256, 3, 3}, 1, 1, false, threads}, true, true});
    cases.push_back({{{2, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, false, threads, true}, true, true});
    cases.push_back({{{2, 128, 10, 10}, {128, 128, 3, 3}, 1, 1, true, threads}, false, false});  // narrow: direct
  }
  for (const Case &c : cases)
    run_case(c, "X " + text(c.conv.xs) + " W " + text(c.conv.ws) + " threads " + std::to_string(c.conv.threads) +
                    (c.conv.residual_after_relu ? " residual after the ReLU" : c.conv.residual ? " residual" : ""));
  ::setenv("DISCO_WINOGRAD_PER_IMAGE", "0", 1);
  run_case({{{2, 256, 10, 10}, {256, 256, 3, 3}, 1, 1, true}, false, false}, "DISCO_WINOGRAD_PER_IMAGE=0");
  ::unsetenv("DISCO_WINOGRAD_PER_IMAGE");
}

TEST(ConvWinograd, DisabledByTheEnvironmentRunsDirect) {
  ::setenv("DISCO_WINOGRAD", "0", 1);
  Case c{{{1, 32, 18, 18}, {32, 32, 3, 3}, 1, 1, true}, false};
  run_case(c, "DISCO_WINOGRAD=0");
  ::unsetenv("DISCO_WINOGRAD");
}

}  // namespace
}  // namespace disco
