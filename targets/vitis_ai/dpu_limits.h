// The DPU's documented limits (DPUCZDX8G product guide, PG338, "Supported
// operations"), for the B4096 configuration: channel parallelism 16. The
// support rules decline anything outside them, so that vai_c_xir accepts
// every region disco emits.
#pragma once
#include <cstdint>

namespace disco::vitis_ai {

constexpr int64_t kChannelParallel = 16;
constexpr int64_t kMaxChannels = 256 * kChannelParallel;  // conv in/out channels, FC in/out features
constexpr int64_t kMaxConvKernel = 16;                    // conv kernel w, h in [1, 16]
constexpr int64_t kMaxConvStride = 8;                     // conv strides in [1, 8]
constexpr int64_t kMaxDepthwiseKernel = 16;               // depthwise kernel w, h in [1, 16]
constexpr int64_t kMaxDepthwiseStride = 4;                // depthwise strides in [1, 4]
constexpr int64_t kMaxPoolKernel = 8;                     // max pool kernel in [1, 8]
constexpr int64_t kMaxPoolStride = 8;
constexpr int64_t kMinAvgPoolKernel = 2;                  // average pool: square kernel in [2, 8]
constexpr int64_t kMaxAvgPoolKernel = 8;
constexpr int64_t kMaxResizeScale = 8;                    // nearest upsampling factor
// Pads are at most kernel - 1 on every side; dilation needs stride 1.

}  // namespace disco::vitis_ai
