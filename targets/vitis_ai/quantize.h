// Post-training int8 quantization with power-of-two scales, the DPU's fix
// point format: q = saturate(round_half_up(x * 2^fix)).
//
// A fix position is chosen per tensor, the one of a few candidates around
// the range-covering one (floor(log2(127 / max|x|))) that gives the least
// squared error over the samples: clipping a rare outlier can cost less
// than coarsening every value. Weights use their own values; activations
// use the values the float model computes on the calibration inputs.
//
// Conv weights are first folded with the BatchNormalization that follows
// them, Gemm's alpha and beta with its weights and bias, as the Vitis AI
// quantizer does. Compile time (fix choice, XIR constants) and run time (the
// reference executor) both call these functions, so they agree bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "targets/vitis_ai/int8_ops.h"

namespace disco::vitis_ai {

int choose_fix(const float *v, int64_t n);
inline int choose_fix(const std::vector<float> &v) { return choose_fix(v.data(), static_cast<int64_t>(v.size())); }
Int8Tensor quantize_tensor(const float *v, std::vector<int64_t> shape, int fix);

// Weights ready to quantize: conv [M, C / group, kh, kw], gemm [N, K]; a bias per output.
struct FoldedWeights {
  std::vector<int64_t> shape;
  std::vector<float> w, b;
};

struct ConstView {
  const float *data = nullptr;  // null: absent
  std::vector<int64_t> shape;
  int64_t num_elements() const;
};

// bn: scale, bias, mean, var (all absent when there is no BatchNormalization).
FoldedWeights fold_conv(const ConstView &w, const ConstView &b, const ConstView bn[4], double eps);
FoldedWeights fold_gemm(const ConstView &w, bool trans_b, const ConstView &c, double alpha, double beta);

// The bias's fix position, at most the accumulator's (fx + fw): the DPU
// shifts the bias left into the accumulator, never right.
int choose_bias_fix(const std::vector<float> &b, int acc_fix);

}  // namespace disco::vitis_ai
