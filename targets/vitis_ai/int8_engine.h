// The loops behind int8_ops.h's ops. int8_ops.cc checks the operands and
// allocates each output (shape and fix position set), then hands them to the
// engine in use:
//   - the portable engine (int8_ops.cc): plain C++ loops, no Halide; what the
//     runtime library (disco_vitis_ai_runtime) runs on its own, e.g. inside
//     an AOT library (driver/aot/);
//   - the Halide engine (int8_halide.cc, the compiler's side): the same
//     arithmetic as JIT-compiled Halide pipelines, which disco run installs
//     (install_vitis_ai_runtime).
// Both compute the DPU's integer recipe exactly (int8_ops.h), so they agree
// bit for bit; tests/targets/vitis_ai/vitis_ai_int8_ops_test.cc checks each
// against scalar code of its own.
#pragma once
#include <cstdint>

#include "targets/vitis_ai/int8_ops.h"

namespace disco::vitis_ai {

struct Int8Engine {
  const char *name;
  // x [N, C, H, W], w [M, C / group, kh, kw], bias [M] -> y [N, M, OH, OW] at y.fix.
  void (*conv2d)(const Int8Tensor &x, const Int8Tensor &w, const Int8Tensor &bias, const ConvGeometry &geo,
                 Activation act, Int8Tensor &y);
  // x [N, C, H, W] -> y [N, C, OH, OW]; average pooling divides by kh * kw (pads count).
  void (*pool2d)(const Int8Tensor &x, PoolKind kind, int64_t kh, int64_t kw, const ConvGeometry &geo, Int8Tensor &y);
  // a, b and y of one shape.
  void (*add)(const Int8Tensor &a, const Int8Tensor &b, Activation act, Int8Tensor &y);
  // x [outer, c, inner] at y.fix into channels [c_off, c_off + c) of y [outer, C, inner].
  void (*requantize_into)(const Int8Tensor &x, int64_t outer, int64_t c, int64_t inner, int64_t c_off, Int8Tensor &y);
  // x [N, C, H, W] -> y [N, C, H * sh, W * sw].
  void (*resize_nearest)(const Int8Tensor &x, int64_t sh, int64_t sw, Int8Tensor &y);
};

// The output stage of conv2d and add: the int32 accumulator times pos_mul
// (>= 0) or neg_mul (< 0), shifted right by `shift` (rounding half up),
// saturated to [lo, hi]. One derivation from the activation for both engines.
struct OutputStage {
  int64_t pos_mul = 1, neg_mul = 1, lo = -128, hi = 127;
  int shift = 0;
};
OutputStage output_stage(Activation act, int shift_to_out, int out_fix);

const Int8Engine &portable_int8_engine();
// The engine the ops use from now on (process-wide); null: the portable one.
void set_int8_engine(const Int8Engine *engine);
const Int8Engine &int8_engine();

// The Halide engine; defined in int8_halide.cc (disco_target_vitis_ai only).
const Int8Engine &halide_int8_engine();

}  // namespace disco::vitis_ai
