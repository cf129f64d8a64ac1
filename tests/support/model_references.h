// How the model tests compare with the PyTorch references: which reference
// set a model uses, and the tolerance (by default rtol 1e-4, atol 1e-5).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "frontend/tensor_data.h"
#include "tests/support/jit_eval.h"

namespace disco::testing {

// convnet_bn has convnet's weights with BatchNormalization kept; same references.
inline std::string reference_name(const std::string &model) { return model == "convnet_bn" ? "convnet" : model; }

// `got` has `want`'s shape and every element within atol + rtol * |want|.
inline void expect_close(const TensorData &got, const TensorData &want, const std::string &what, double rtol = 1e-4,
                         double atol = 1e-5) {
  ASSERT_EQ(got.shape, want.shape) << what;
  EXPECT_LE(testing::closeness(got, want, rtol, atol), 1.0) << what << ": outside rtol " << rtol << ", atol " << atol;
}

}  // namespace disco::testing
