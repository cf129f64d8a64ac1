// A oneDNN conv step (group 1, no dilation) with a bias, optionally a
// residual Add, then a ReLU, run once and checked against a plain-loop
// convolution in double precision: the check the Winograd and padded-block
// tests share.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "tests/support/onednn_cases.h"
#include "tests/support/onednn_references.h"

namespace disco::testing {

struct ConvReluCase {
  Dims xs, ws;  // X [N, C, H, W], W [M, C, k, k]
  int64_t stride = 1, pad = 1;
  bool residual = false;
  int threads = 0;  // the step's set_num_threads; 0 leaves OpenMP's default
  bool residual_after_relu = false;  // relu(conv) + residual (a binary post-op) instead of relu(conv + residual)
};

// Runs the case and returns the step's implementation; `what` labels failures.
inline std::string check_conv_relu_step(const ConvReluCase &c, const std::string &what, double rtol = 1e-4,
                                        double atol = 1e-5) {
  const std::string s = std::to_string(c.stride), p = std::to_string(c.pad);
  auto k = make_kernel("onednn.conv", {{"strides", s + "," + s},
                                       {"dilations", "1,1"},
                                       {"pads", p + "," + p + "," + p + "," + p},
                                       {"group", "1"},
                                       {"auto_pad", "NOTSET"},
                                       {"post_ops", c.residual_after_relu ? "relu:0,add"
                                                    : c.residual           ? "add,relu:0"
                                                                           : "relu:0"}});
  if (c.threads > 0) k->set_num_threads(c.threads);
  TensorData x = tensor(c.xs, 0.5f, 1), w = tensor(c.ws, 0.05f, 3), bias = tensor({c.ws[0]}, 0.5f, 5);
  Dims os;
  auto want = ref_conv2d(values(x), c.xs, values(w), c.ws, values(bias), {c.stride, c.stride}, {1, 1},
                         {c.pad, c.pad, c.pad, c.pad}, 1, &os);
  TensorData res = tensor(os, 0.5f, 7);
  for (size_t i = 0; i < want.size(); ++i) {
    const float v = want[i] + (c.residual ? res.as<float>()[i] : 0.0f);
    want[i] = v > 0 ? v : 0.0f;
    if (c.residual_after_relu) want[i] += res.as<float>()[i];
  }
  TensorData y(DType::F32, os);
  std::vector<ExternTensor> ins{view(x), view(w, true), view(bias)}, outs{view(y)};
  if (c.residual || c.residual_after_relu) ins.push_back(view(res));
  SymbolValues syms;
  k->run(ExternCall{ins, outs, syms});
  const std::string impl = k->implementation();
  expect_near_all(y, os, want, what + ": " + impl, rtol, atol);
  return impl;
}

}  // namespace disco::testing
