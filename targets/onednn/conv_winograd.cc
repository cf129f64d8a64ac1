#include "targets/onednn/conv_winograd.h"

#include <algorithm>

#include "targets/onednn/ab_switch.h"

namespace disco {

bool winograd_pays(const WinogradCase &c) {
  if (switched_off("DISCO_WINOGRAD")) return false;
  // The only windows oneDNN 2.6 has Winograd kernels for.
  if (c.groups != 1 || c.kernel_h != 3 || c.kernel_w != 3 || c.stride_h != 1 || c.stride_w != 1 || c.dilated)
    return false;
  const int64_t map = std::min(c.out_h, c.out_w);
  if (map >= 16) return true;
  return c.batch == 1 && map >= 7 && c.in_channels >= 256 && c.out_channels >= 256;
}

}  // namespace disco
