#include "targets/onednn/conv_winograd.h"

#include <algorithm>

#include "targets/onednn/ab_switch.h"

namespace disco {

namespace {

// The batch sizes the per-image rule was measured at.
constexpr int64_t kPerImageMaxBatch = 8;

}  // namespace

WinogradUse winograd_use(const WinogradCase &c) {
  if (switched_off("DISCO_WINOGRAD")) return WinogradUse::kNo;
  // The only windows oneDNN 2.6 has Winograd kernels for.
  if (c.groups != 1 || c.kernel_h != 3 || c.kernel_w != 3 || c.stride_h != 1 || c.stride_w != 1 || c.dilated)
    return WinogradUse::kNo;
  const int64_t map = std::min(c.out_h, c.out_w), channels = std::min(c.in_channels, c.out_channels);
  if (map >= 16) return WinogradUse::kWhole;
  const bool whole_256 = c.in_channels % 256 == 0 && c.out_channels % 256 == 0;
  if (c.threads == 1 && !whole_256) return WinogradUse::kNo;
  if (c.batch == 1) return map >= 7 && channels >= 256 ? WinogradUse::kWhole : WinogradUse::kNo;
  if (c.batch > kPerImageMaxBatch || switched_off("DISCO_WINOGRAD_PER_IMAGE")) return WinogradUse::kNo;
  if ((map >= 10 && channels >= 256) || (map >= 7 && channels >= 512)) return WinogradUse::kPerImage;
  return WinogradUse::kNo;
}

}  // namespace disco
