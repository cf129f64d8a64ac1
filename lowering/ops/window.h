// Sliding-window geometry and the Conv sum, shared by the files of the conv
// family: conv_ops.cc (Conv, pools), quantized_conv_ops.cc (ConvInteger,
// QLinearConv) and conv_transpose_ops.cc.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "Halide.h"
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"

namespace disco {

// One spatial axis of a sliding window.
struct Window {
  Dim in, kernel, pad_begin, pad_end, out;
  int64_t stride = 1, dilation = 1;
  bool overhang = false;  // ceil_mode can add a last window that starts inside but ends outside
  // Whether some window reaches past the input on this axis.
  bool needs_guard() const { return !pad_begin.is_const(0) || !pad_end.is_const(0) || overhang; }
};

// Attribute `name` with n values, each >= 1; all 1s when absent.
std::vector<int64_t> positive_ints(const AttrReader &a, const std::string &where, const std::string &name, size_t n);

// Window geometry from the attributes every windowed op shares: strides,
// dilations, pads and auto_pad. `x` is the [N, C, spatial...] input shape and
// `kernel` the spatial kernel extents. Used by inference and lowering alike.
std::vector<Window> window_geometry(const AttrReader &a, const std::string &where, const Shape &x,
                                    const std::vector<Dim> &kernel, bool ceil_mode);

// Output extents below 1 are errors now when constant, at run time otherwise.
void check_outputs_positive(InferContext &c, const std::vector<Window> &w);

Shape windowed_shape(const Dim &n, const Dim &channels, const std::vector<Window> &w);

void require_spatial_input(InferContext &c, int min_spatial);

// A read of input 0 at output position `out` and window offset `k` on each
// spatial axis. `inside` is set to whether the position is within the input;
// the read itself is clamped so that it never leaves the buffer.
struct WindowRead {
  std::vector<Halide::Expr> spatial;  // clamped input indices
  Halide::Expr inside;                // undefined when every position is inside
};

// The input positions of kernel taps `k` of the windows at output positions `out`.
std::vector<Halide::Expr> window_positions(LowerContext &c, const std::vector<Window> &w,
                                           const std::vector<Halide::Expr> &out, const std::vector<Halide::Expr> &k);
// A read at input positions `pos`: clamped, with the condition that every
// position is inside, on the axes where a window reaches past the input, or on
// every axis with `every_axis` (so that a schedule may read it past the
// window's reach: zeros there).
WindowRead guarded_read(LowerContext &c, const std::vector<Window> &w, const std::vector<Halide::Expr> &pos,
                        bool every_axis);
// guarded_read of window_positions.
WindowRead window_read(LowerContext &c, const std::vector<Window> &w, const std::vector<Halide::Expr> &out,
                       const std::vector<Halide::Expr> &k);

// Output 0 over `v` as an accumulator Func that `build` defines (a pure init
// and updates writing exactly `v`). It is the output itself when the output
// has the accumulator's type; otherwise it is a materialized stage, cast by a
// pure output Func.
void define_accumulated(LowerContext &c, const std::vector<Halide::Var> &v, Halide::Type acc, const std::string &name,
                        const std::function<void(Halide::Func &, const std::vector<Halide::Var> &lhs)> &build,
                        bool stage = false);

// The points a sum stage of a Conv-like op is defined over, and the output
// index [n, m, spatial...] each stands for.
struct SumDomain {
  std::vector<Halide::Var> lhs;   // the stage's pure vars, in Halide order
  std::vector<Halide::Expr> idx;  // the output index, in ONNX order, of lhs
  bool flat = false;              // lhs is [s, m, n] (flat_domain)
};
// The output's own points: lhs is v reversed.
SumDomain output_domain(LowerContext &c, const std::vector<Halide::Var> &v);
// Output positions flattened, for a Conv-like op whose weight the host stored
// channels-last (lowering/weight_layout.h): the stage is sum(s, m, n) with s
// the row-major index of the spatial position, so that the x86 conv
// template's micro-tiles of positions run across rows (a 7x7 map is 49
// positions in 9 tiles of 6, not 7 rows of 7 each computed as 12).
SumDomain flat_domain(LowerContext &c, const std::vector<Halide::Var> &v);
// Output 0 over `v` read from `sum`, a materialized (StageKind::Reduction)
// stage over `d` that `build` defines.
void define_sum_stage(LowerContext &c, const std::vector<Halide::Var> &v, const SumDomain &d, const std::string &name,
                      const std::function<void(Halide::Func &sum)> &build);

// ---- Conv-like ops: X [N, C, spatial...] and W [M, C / group, kernel...] ----

// Where a Conv-like op has its data, weights and (optional, -1 if none) bias.
struct ConvInputs {
  int x = 0, w = 1, bias = 2;
};

// W's rank against X's, the group and kernel_shape attributes; returns the group.
int64_t check_conv_weights(InferContext &c, const Shape &x, const Shape &w);
// Channels (`what`, e.g. "input channels") must split into `group` groups:
// checked now when constant, else at run time.
void require_divisible_by_group(InferContext &c, const Dim &channels, int64_t group, const std::string &what);
// Checks X, W and the bias against each other and the attributes (group,
// kernel_shape) and returns the output shape.
Shape infer_conv_shape(InferContext &c, const ConvInputs &in);

// Reads an element of X or W (index in ONNX order) in the accumulation type.
using ConvRead = std::function<Halide::Expr(const std::vector<Halide::Expr> &)>;

// Defines `f` over `d` as init + the sum over input channels and kernel
// positions of read_x * read_w; padding contributes 0.
void define_conv_sum(LowerContext &c, const ConvInputs &in, Halide::Type acc, const ConvRead &read_x,
                     const ConvRead &read_w, const Halide::Expr &init, Halide::Func &f, const SumDomain &d);

}  // namespace disco
