// float_copy.h: every length (whole turns of 64 floats, whole and partial
// vectors, none) copied exactly, nothing written past the end, on the AVX-512
// loop where the CPU has it and on memcpy elsewhere.
#include "targets/onednn/float_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace disco {
namespace {

TEST(FloatCopy, CopiesEveryLengthExactlyAndNothingPastIt) {
  for (int64_t n : {0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 200, 1000, 4099}) {
    std::vector<float> src(static_cast<size_t>(n) + 32), dst(static_cast<size_t>(n) + 32, -7.0f);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f + 1.0f;
    copy_floats(dst.data() + 3, src.data() + 5, n);  // unaligned on both sides
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(dst[static_cast<size_t>(i + 3)], src[static_cast<size_t>(i + 5)]) << n;
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(dst[i], -7.0f) << n;
    for (size_t i = static_cast<size_t>(n) + 3; i < dst.size(); ++i) ASSERT_EQ(dst[i], -7.0f) << "past " << n;
  }
}

}  // namespace
}  // namespace disco
