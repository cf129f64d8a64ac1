// Ops that move elements between axes or reorder them along one:
// DepthToSpace, SpaceToDepth and ReverseSequence. All are pure index remaps
// (View ops); block sizes are attributes, so the divisions they need are by
// constants, checked at run time when the divided extent is symbolic.
#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

int64_t blocksize(const NodeContext &c) {
  int64_t b = c.attrs().get_int("blocksize");
  if (b < 1) c.fail("blocksize must be positive, got ", b);
  return b;
}

void require_divisible(InferContext &c, const Dim &d0, int64_t by, const std::string &what) {
  Dim d = c.store().canonical(d0);
  if (d.is_const()) {
    if (d.as_const() % by != 0) c.fail(what, " (", d.as_const(), ") must be divisible by ", by);
    return;
  }
  if (!c.store().is_divisible(d, by))
    c.store().add_check({RuntimeCheck::Divisible, d, Dim(by),
                         c.where() + ": " + what + " (" + d.str() + ") must be divisible by " + std::to_string(by)});
}

void require_nchw(InferContext &c) {
  if (c.rank(0) != 4) c.fail("input must be [N, C, H, W], got ", shape_str(c.shape(0)));
}

// ---- DepthToSpace -----------------------------------------------------------

bool is_crd(const NodeContext &c) {
  std::string mode = c.opset() >= 11 ? c.attrs().get_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") c.fail("unknown mode '", mode, "'");
  return mode == "CRD";
}

void infer_depth_to_space(InferContext &c) {
  require_nchw(c);
  int64_t b = blocksize(c);
  is_crd(c);
  const Shape &x = c.shape(0);
  require_divisible(c, x[1], b * b, "channels");
  c.set_output(0, c.dtype(0), {x[0], floor_div(x[1], b * b), x[2] * b, x[3] * b});
}

void lower_depth_to_space(LowerContext &c) {
  const HTensor &x = c.in(0);
  int32_t b = static_cast<int32_t>(blocksize(c));
  auto v = c.vars(4);
  Expr ch = c.dim(c.out_shape(0)[1]);
  Expr bh = v[2] % b, bw = v[3] % b;
  // DCR: the block offset is the outer part of the channel; CRD: the inner part.
  Expr in_c = is_crd(c) ? (v[1] * b + bh) * b + bw : (bh * b + bw) * ch + v[1];
  c.define_output(0, v, x.at({v[0], in_c, v[2] / b, v[3] / b}));
}

// ---- SpaceToDepth -----------------------------------------------------------

void infer_space_to_depth(InferContext &c) {
  require_nchw(c);
  int64_t b = blocksize(c);
  const Shape &x = c.shape(0);
  require_divisible(c, x[2], b, "height");
  require_divisible(c, x[3], b, "width");
  c.set_output(0, c.dtype(0), {x[0], x[1] * (b * b), floor_div(x[2], b), floor_div(x[3], b)});
}

void lower_space_to_depth(LowerContext &c) {
  const HTensor &x = c.in(0);
  int32_t b = static_cast<int32_t>(blocksize(c));
  auto v = c.vars(4);
  Expr ch = c.dim(x.shape[1]);
  // Output channel (bh * b + bw) * C + c, the inverse of DepthToSpace's DCR.
  Expr blk = v[1] / ch, in_c = v[1] % ch;
  c.define_output(0, v, x.at({v[0], in_c, v[2] * b + blk / b, v[3] * b + blk % b}));
}

// ---- ReverseSequence --------------------------------------------------------

struct SeqAxes {
  int64_t batch, time;
};

SeqAxes seq_axes(const NodeContext &c, int64_t rank) {
  SeqAxes a{c.attrs().get_int("batch_axis", 1), c.attrs().get_int("time_axis", 0)};
  if ((a.batch != 0 && a.batch != 1) || (a.time != 0 && a.time != 1) || a.batch == a.time)
    c.fail("batch_axis and time_axis must be 0 and 1 in some order, got ", a.batch, " and ", a.time);
  if (rank < 2) c.fail("input must have rank >= 2");
  return a;
}

void infer_reverse_sequence(InferContext &c) {
  SeqAxes a = seq_axes(c, c.rank(0));
  if (c.dtype(1) != DType::I64 && c.dtype(1) != DType::I32) c.fail("sequence_lens must be int32 or int64");
  if (c.rank(1) != 1) c.fail("sequence_lens must be 1-D, got ", shape_str(c.shape(1)));
  c.require_equal(c.shape(1)[0], c.shape(0)[a.batch], "sequence_lens length must equal the batch");
  c.set_output(0, c.dtype(0), c.shape(0));
}

void lower_reverse_sequence(LowerContext &c) {
  const HTensor &x = c.in(0);
  SeqAxes a = seq_axes(c, x.rank());
  auto v = c.vars(x.rank());
  auto idx = c.exprs(v);
  const Dim &steps = x.shape[a.time];
  Expr len = Halide::clamp(Halide::cast(Halide::Int(32), c.in(1).at({v[a.batch]})), 0, c.dim(steps));
  Expr t = v[a.time];
  idx[a.time] = clamp_index(c, Halide::select(t < len, len - 1 - t, t), steps);
  c.define_output(0, v, x.at(idx));
}

}  // namespace

void register_rearrange_ops(OpRegistry &r) {
  r.add("DepthToSpace", 1, OpKind::View, infer_depth_to_space, lower_depth_to_space);
  r.add("SpaceToDepth", 1, OpKind::View, infer_space_to_depth, lower_space_to_depth);
  r.add("ReverseSequence", 10, OpKind::View, infer_reverse_sequence, lower_reverse_sequence);
}

}  // namespace disco
