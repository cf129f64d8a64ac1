#include "targets/onednn/conv_winograd.h"

#include <algorithm>

#include "targets/onednn/ab_switch.h"

namespace disco {

namespace {

// The batch sizes the per-image rule was measured at.
constexpr int64_t kPerImageMaxBatch = 8;

// In-model times (ONEDNN_VERBOSE, Winograd over direct, one and two threads):
// 32 output channels 1.13-1.99 (DenseNet's 128 -> 32 at 28x28 and 56x56,
// GoogLeNet's 16 -> 32), 64 and more 0.57-0.81 at maps of 27x27 and over.
constexpr int64_t kMinOutChannels = 64;

// One image's small maps as one primitive: 256 channels at 14x14 0.70-0.89,
// 512 at 7x7 1.03-1.09 (ResNet's last stage); no model here has a map in
// between, so the limit sits halfway.
constexpr int64_t kMinWholeSmallMap = 10;

}  // namespace

WinogradUse winograd_use(const WinogradCase &c) {
  if (switched_off("DISCO_WINOGRAD")) return WinogradUse::kNo;
  // The only windows oneDNN 2.6 has Winograd kernels for.
  if (c.groups != 1 || c.kernel_h != 3 || c.kernel_w != 3 || c.stride_h != 1 || c.stride_w != 1 || c.dilated)
    return WinogradUse::kNo;
  // Measured in models, not alone (conv_winograd.h): few output channels lost
  // at every map size measured, and so did both unpadded windows.
  if (c.out_channels < kMinOutChannels || c.unpadded) return WinogradUse::kNo;
  const int64_t map = std::min(c.out_h, c.out_w), channels = std::min(c.in_channels, c.out_channels);
  if (map >= 16) return WinogradUse::kWhole;
  const bool whole_256 = c.in_channels % 256 == 0 && c.out_channels % 256 == 0;
  if (c.threads == 1 && !whole_256) return WinogradUse::kNo;
  if (c.batch == 1) return map >= kMinWholeSmallMap && channels >= 256 ? WinogradUse::kWhole : WinogradUse::kNo;
  if (c.batch > kPerImageMaxBatch || switched_off("DISCO_WINOGRAD_PER_IMAGE")) return WinogradUse::kNo;
  if ((map >= 10 && channels >= 256) || (map >= 7 && channels >= 512)) return WinogradUse::kPerImage;
  return WinogradUse::kNo;
}

}  // namespace disco
