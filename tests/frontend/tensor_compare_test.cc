// closeness (frontend/tensor_compare.h), which the CLI's --expect, the
// harness's --check and the tests use: within rtol/atol is <= 1, NaN matches
// only NaN, an infinity only the same infinity; anything else unmatched is
// infinitely far, whichever side holds it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/tensor_compare.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

const float kNan = std::numeric_limits<float>::quiet_NaN(), kInf = std::numeric_limits<float>::infinity();

double worst(float got, float want) { return closeness(f32({1}, {got}), f32({1}, {want}), 1e-3, 1e-4).worst; }

TEST(TensorCompare, WithinTheToleranceIsAtMostOne) {
  EXPECT_LE(worst(1.0005f, 1.0f), 1.0);
  EXPECT_GT(worst(1.01f, 1.0f), 1.0);
}

TEST(TensorCompare, NanMatchesOnlyNanOnEitherSide) {
  EXPECT_EQ(worst(kNan, kNan), 0.0);
  EXPECT_TRUE(std::isinf(worst(kNan, 1.0f)));
  EXPECT_TRUE(std::isinf(worst(0.0f, kNan)));  // passed before: the ratio was NaN
}

TEST(TensorCompare, AnInfinityMatchesOnlyTheSameInfinity) {
  EXPECT_EQ(worst(kInf, kInf), 0.0);
  EXPECT_EQ(worst(-kInf, -kInf), 0.0);
  EXPECT_TRUE(std::isinf(worst(-kInf, kInf)));
  EXPECT_TRUE(std::isinf(worst(1.0f, kInf)));  // passed before
  EXPECT_TRUE(std::isinf(worst(kInf, 1.0f)));
  EXPECT_TRUE(std::isinf(closeness(f32({2}, {1, 0}), f32({2}, {1, kNan}), 1e-3, 1e-4).max_abs));
}

}  // namespace
}  // namespace disco
