// The bit-exact int8 reference executor: the DPU's fixed-point arithmetic,
// run on the host by one of two engines (int8_engine.h): plain C++ loops, or
// Halide pipelines (disco run). A tensor holds int8
// values q with a fix position f: the real value is q * 2^-f.
//
// Every op follows the same recipe, as the DPU does it: accumulate in
// integers, bring the sum to the output's fix position with an arithmetic
// shift that rounds half up ((v + 2^(s-1)) >> s), then saturate to
// [-128, 127]. Shifts to the left (s < 0) are exact.
//
//   conv2d   sum x*w over the window (int32), plus bias << (fx + fw - fb);
//            then the activation, the shift by fx + fw - fo, saturation.
//            Grouped, depthwise and dilated convs are the same pipeline;
//            Gemm is a conv over a 1x1 image.
//   pool2d   max: the window's max, fix unchanged. average: the window sum
//            times a 24-bit reciprocal of the window size (pads count),
//            shifted by 24 + fx - fo, so the divisor is 2^24 / round(2^24 / count).
//   add      both inputs aligned to the larger fix position, summed, shifted.
//   concat   each input requantized to the output's fix position.
//   resize   nearest neighbour, integer factors; fix unchanged.
//
// Activations: Relu clamps at 0; Relu6 also clamps at 6 * 2^fo; LeakyRelu
// multiplies negative sums by n / 256 (the DPU's alpha is 26 / 256) before
// the shift. The Halide pipelines are compiled once per process by its JIT.
#pragma once
#include <cstdint>
#include <vector>

namespace disco::vitis_ai {

struct Int8Tensor {
  std::vector<int64_t> shape;  // ONNX order
  std::vector<int8_t> data;    // dense, row-major
  int fix = 0;                 // value = q * 2^-fix
  int64_t num_elements() const;
  static Int8Tensor zeros(std::vector<int64_t> shape, int fix);
};

struct ConvGeometry {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t group = 1;
};

enum class ActKind { None, Relu, Relu6, Leaky };
struct Activation {
  ActKind kind = ActKind::None;
  int leaky_num = 26;  // LeakyRelu alpha = leaky_num / 256
};

// (v + 2^(s-1)) >> s for s > 0, v << -s otherwise, saturated to int8: the
// scalar definition both engines implement.
int8_t round_shift_saturate(int64_t v, int shift);
// float -> int8 at the region's edges, rounding half up; and back.
int8_t quantize_value(float v, int fix);
float dequantize_value(int8_t q, int fix);

// floor((in + pads - dilation * (k - 1) - 1) / stride) + 1, or 0.
int64_t conv_out_extent(int64_t in, int64_t pad_sum, int64_t k, int64_t stride, int64_t dilation);

// x [N, C, H, W], w [M, C / group, kh, kw], bias [M] (its own fix).
Int8Tensor conv2d(const Int8Tensor &x, const Int8Tensor &w, const Int8Tensor &bias, const ConvGeometry &geo,
                  Activation act, int out_fix);
// a [M, K], w [N, K] (the weights transposed), bias [N] -> [M, N].
Int8Tensor gemm(const Int8Tensor &a, const Int8Tensor &w, const Int8Tensor &bias, Activation act, int out_fix);
enum class PoolKind { Max, Average };
// x [N, C, H, W]. Max pooling keeps x's fix position; average pooling
// writes `out_fix` (an average has a smaller range than its inputs).
Int8Tensor pool2d(const Int8Tensor &x, PoolKind kind, int64_t kh, int64_t kw, const ConvGeometry &geo, int out_fix);
Int8Tensor global_average_pool(const Int8Tensor &x, int out_fix);
// a and b of one shape.
Int8Tensor add(const Int8Tensor &a, const Int8Tensor &b, Activation act, int out_fix);
Int8Tensor concat(const std::vector<const Int8Tensor *> &xs, int axis, int out_fix);
// x [N, C, H, W] -> [N, C, H * sh, W * sw].
Int8Tensor resize_nearest(const Int8Tensor &x, int64_t scale_h, int64_t scale_w);
// Same values at another fix position (also a copy under a new shape).
Int8Tensor requantize(const Int8Tensor &x, int out_fix);

// The reciprocal average pooling multiplies by, for a window of `count`.
constexpr int kAvgShift = 24;
int64_t avg_multiplier(int64_t count);

}  // namespace disco::vitis_ai
