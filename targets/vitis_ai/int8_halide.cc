// The Halide engine of the int8 reference executor (int8_engine.h): each op
// a pipeline generic over shapes and geometry (Params), compiled once per
// process by Halide's JIT on first use and shared by every step; a mutex
// serializes runs of one pipeline, since Params hold one value at a time.
// The compiler's side only: disco run installs it (install_vitis_ai_runtime);
// runtime libraries without Halide keep the portable engine.
#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>

#include "lowering/host_target.h"
#include "Halide.h"
#include "frontend/errors.h"
#include "targets/vitis_ai/int8_engine.h"

namespace disco::vitis_ai {
namespace {

using namespace Halide;

// round_shift_saturate, in Halide: v is int64, s an int32 that may be negative.
Expr round_shift(Expr v, Expr s) {
  Expr right = cast<int64_t>(max(s, 0)), left = cast<int64_t>(max(-s, 0));
  Expr half = select(s > 0, cast<int64_t>(1) << cast<int64_t>(max(s - 1, 0)), cast<int64_t>(0));
  return ((v << left) + half) >> right;
}

Expr saturate_int8(Expr v, Expr lo, Expr hi) {
  return cast<int8_t>(clamp(v, cast<int64_t>(lo), cast<int64_t>(hi)));
}

Halide::Buffer<int8_t> view(const Int8Tensor &t, std::vector<int> dims) {
  return Halide::Buffer<int8_t>(const_cast<int8_t *>(t.data.data()), dims);
}

// A JIT-compiled pipeline and the lock that guards its Params.
struct Jit {
  std::mutex mu;
  Pipeline pipeline;
  explicit Jit(Func out) : pipeline(out) { pipeline.compile_jit(disco::usable_jit_target()); }
};

// The activation and output stage shared by conv2d and gemm.
struct ActivationParams {
  Param<int> pos_mul{"pos_mul"}, neg_mul{"neg_mul"}, shift{"shift"}, lo{"lo"}, hi{"hi"};
  Expr apply(Expr acc) const {
    Expr v = cast<int64_t>(acc);
    v = v * select(v < 0, cast<int64_t>(neg_mul), cast<int64_t>(pos_mul));
    return saturate_int8(round_shift(v, shift), lo, hi);
  }
  void set(Activation act, int shift_to_out, int out_fix) {
    const OutputStage s = output_stage(act, shift_to_out, out_fix);
    pos_mul.set(static_cast<int>(s.pos_mul)), neg_mul.set(static_cast<int>(s.neg_mul)), shift.set(s.shift);
    lo.set(static_cast<int>(s.lo)), hi.set(static_cast<int>(s.hi));
  }
};

struct ConvPipeline {
  ImageParam x{Int(8), 4, "x"}, w{Int(8), 4, "w"}, bias{Int(8), 1, "bias"};
  Param<int> sh{"sh"}, sw{"sw"}, pt{"pt"}, pl{"pl"}, dh{"dh"}, dw{"dw"}, m_per_group{"m_per_group"},
      bias_shift{"bias_shift"}, grouped{"grouped"};
  ActivationParams act;
  std::unique_ptr<Jit> jit;

  ConvPipeline() {
    Var ox("ox"), oy("oy"), m("m"), n("n");
    Func xpad = BoundaryConditions::constant_exterior(x, cast<int8_t>(0));
    RDom r(0, w.dim(0).extent(), 0, w.dim(1).extent(), 0, w.dim(2).extent());
    // Without groups every lane of the vectorized m reads the same input
    // channel: the specialization below turns the gather into a broadcast.
    Expr cin = select(grouped != 0, (clamp(m, 0, w.dim(3).extent() - 1) / m_per_group) * w.dim(2).extent() + r.z, r.z);
    Func wt("wt");
    // Channel tiles of 16 may overhang M; the extra lanes read clamped
    // weights and are never stored.
    Expr m_in = clamp(m, 0, w.dim(3).extent() - 1);
    wt(m, ox, oy, n) = w(ox, oy, n, m_in);  // (m, kx, ky, c)
    Func acc("acc");
    acc(ox, oy, m, n) = cast<int32_t>(bias(m_in)) << cast<int32_t>(bias_shift);
    acc(ox, oy, m, n) += cast<int32_t>(xpad(ox * sw + r.x * dw - pl, oy * sh + r.y * dh - pt, cin, n)) *
                         cast<int32_t>(wt(m, r.x, r.y, r.z));
    Func out("conv_out");
    out(ox, oy, m, n) = act.apply(acc(ox, oy, m, n));
    // The padded input is materialized once, so the inner loop reads it
    // without bounds checks; weights are laid out with m innermost, and each
    // output row accumulates 16 channels at a time in vector registers
    // (feature maps in a DPU net are narrow and deep).
    Var mo("mo"), mi("mi"), t("t");
    wt.compute_root();
    xpad.compute_root();
    out.split(m, mo, mi, 16, TailStrategy::GuardWithIf).reorder(mi, ox, oy, mo, n).fuse(mo, n, t).parallel(t);
    acc.compute_at(out, oy).reorder_storage(m, ox, oy, n).reorder(m, ox, oy, n).vectorize(m, 16);
    acc.update().reorder(m, r.x, r.y, r.z, ox, oy, n).vectorize(m, 16);
    acc.update().specialize(grouped == 0);
    jit = std::make_unique<Jit>(out);
  }
};

struct PoolPipeline {
  ImageParam x{Int(8), 4, "x"};
  Param<int> kh{"kh"}, kw{"kw"}, sh{"sh"}, sw{"sw"}, pt{"pt"}, pl{"pl"}, is_max{"is_max"};
  Param<int64_t> mul{"mul"};
  Param<int> shift{"shift"};
  std::unique_ptr<Jit> jit;

  PoolPipeline() {
    Var ox("ox"), oy("oy"), c("c"), n("n");
    Func low = BoundaryConditions::constant_exterior(x, cast<int8_t>(-128));
    Func zero = BoundaryConditions::constant_exterior(x, cast<int8_t>(0));
    RDom r(0, kw, 0, kh);
    Expr ix = ox * sw + r.x - pl, iy = oy * sh + r.y - pt;
    Func mx("mx"), sum("sum"), out("pool_out");
    mx(ox, oy, c, n) = maximum(low(ix, iy, c, n));
    sum(ox, oy, c, n) = cast<int64_t>(Halide::sum(cast<int32_t>(zero(ix, iy, c, n))));
    out(ox, oy, c, n) = select(is_max != 0, mx(ox, oy, c, n),
                               saturate_int8(round_shift(sum(ox, oy, c, n) * mul, shift), -128, 127));
    Var cn("cn");
    out.fuse(c, n, cn).parallel(cn);
    jit = std::make_unique<Jit>(out);
  }
};

struct AddPipeline {
  ImageParam a{Int(8), 1, "a"}, b{Int(8), 1, "b"};
  Param<int> sa{"sa"}, sb{"sb"};
  ActivationParams act;
  std::unique_ptr<Jit> jit;
  AddPipeline() {
    Var i("i");
    Func out("add_out");
    out(i) = act.apply((cast<int32_t>(a(i)) << cast<int32_t>(sa)) + (cast<int32_t>(b(i)) << cast<int32_t>(sb)));
    Var io("io"), ii("ii");
    out.split(i, io, ii, 4096, TailStrategy::GuardWithIf).parallel(io).vectorize(ii, 16, TailStrategy::GuardWithIf);
    jit = std::make_unique<Jit>(out);
  }
};

// Requantizes x [inner, C, outer] into channels [c_off, c_off + C) of the output.
struct RequantPipeline {
  ImageParam x{Int(8), 3, "x"};
  Param<int> shift{"shift"}, c_off{"c_off"};
  std::unique_ptr<Jit> jit;
  RequantPipeline() {
    Var i("i"), c("c"), o("o");
    Func out("requant_out");
    out(i, c, o) = saturate_int8(round_shift(cast<int64_t>(x(i, c - c_off, o)), shift), -128, 127);
    out.parallel(o);
    jit = std::make_unique<Jit>(out);
  }
};

struct ResizePipeline {
  ImageParam x{Int(8), 4, "x"};
  Param<int> sh{"sh"}, sw{"sw"};
  std::unique_ptr<Jit> jit;
  ResizePipeline() {
    Var ox("ox"), oy("oy"), c("c"), n("n");
    Func out("resize_out");
    out(ox, oy, c, n) = x(ox / sw, oy / sh, c, n);
    Var cn("cn");
    out.fuse(c, n, cn).parallel(cn);
    jit = std::make_unique<Jit>(out);
  }
};

template <typename P>
P &pipeline() {
  static P *p = [] {
    try {
      return new P();  // never destroyed: steps may run until exit
    } catch (const Halide::Error &e) {
      fail("vitis_ai: Halide could not compile the int8 reference executor: ", e.what());
    }
  }();
  return *p;
}

void realize(Jit &jit, Halide::Buffer<int8_t> out) {
  try {
    jit.pipeline.realize(Realization(out));
  } catch (const Halide::Error &e) {
    fail("vitis_ai: the int8 reference executor failed: ", e.what());
  }
}

int to_int(int64_t v) { return static_cast<int>(v); }


void conv2d_halide(const Int8Tensor &x, const Int8Tensor &w, const Int8Tensor &bias, const ConvGeometry &geo,
                   Activation act, Int8Tensor &y) {
  const int64_t N = x.shape[0], C = x.shape[1], M = w.shape[0], OH = y.shape[2], OW = y.shape[3];
  const int acc_fix = x.fix + w.fix;
  ConvPipeline &p = pipeline<ConvPipeline>();
  std::lock_guard<std::mutex> lock(p.jit->mu);
  p.x.set(view(x, {to_int(x.shape[3]), to_int(x.shape[2]), to_int(C), to_int(N)}));
  p.w.set(view(w, {to_int(w.shape[3]), to_int(w.shape[2]), to_int(w.shape[1]), to_int(M)}));
  p.bias.set(view(bias, {to_int(M)}));
  p.sh.set(to_int(geo.stride_h)), p.sw.set(to_int(geo.stride_w)), p.pt.set(to_int(geo.pad_top));
  p.pl.set(to_int(geo.pad_left)), p.dh.set(to_int(geo.dilation_h)), p.dw.set(to_int(geo.dilation_w));
  p.m_per_group.set(to_int(M / geo.group));
  p.grouped.set(geo.group > 1 ? 1 : 0);
  p.bias_shift.set(acc_fix - bias.fix);
  p.act.set(act, acc_fix - y.fix, y.fix);
  realize(*p.jit, view(y, {to_int(OW), to_int(OH), to_int(M), to_int(N)}));
}

void pool2d_halide(const Int8Tensor &x, PoolKind kind, int64_t kh, int64_t kw, const ConvGeometry &geo, Int8Tensor &y) {
  PoolPipeline &p = pipeline<PoolPipeline>();
  std::lock_guard<std::mutex> lock(p.jit->mu);
  p.x.set(view(x, {to_int(x.shape[3]), to_int(x.shape[2]), to_int(x.shape[1]), to_int(x.shape[0])}));
  p.kh.set(to_int(kh)), p.kw.set(to_int(kw)), p.sh.set(to_int(geo.stride_h)), p.sw.set(to_int(geo.stride_w));
  p.pt.set(to_int(geo.pad_top)), p.pl.set(to_int(geo.pad_left));
  p.is_max.set(kind == PoolKind::Max ? 1 : 0);
  p.mul.set(avg_multiplier(kh * kw));
  p.shift.set(kAvgShift + x.fix - y.fix);
  realize(*p.jit, view(y, {to_int(y.shape[3]), to_int(y.shape[2]), to_int(y.shape[1]), to_int(y.shape[0])}));
}

void add_halide(const Int8Tensor &a, const Int8Tensor &b, Activation act, Int8Tensor &y) {
  const int F = std::max(a.fix, b.fix);
  AddPipeline &p = pipeline<AddPipeline>();
  std::lock_guard<std::mutex> lock(p.jit->mu);
  const int n = to_int(a.num_elements());
  p.a.set(view(a, {n}));
  p.b.set(view(b, {n}));
  p.sa.set(F - a.fix), p.sb.set(F - b.fix);
  p.act.set(act, F - y.fix, y.fix);
  realize(*p.jit, view(y, {n}));
}

void requantize_into_halide(const Int8Tensor &x, int64_t outer, int64_t c, int64_t inner, int64_t c_off, Int8Tensor &y) {
  RequantPipeline &p = pipeline<RequantPipeline>();
  std::lock_guard<std::mutex> lock(p.jit->mu);
  const int64_t C = y.num_elements() / (outer * inner);
  p.x.set(view(x, {to_int(inner), to_int(c), to_int(outer)}));
  p.shift.set(x.fix - y.fix);
  p.c_off.set(to_int(c_off));
  Halide::Buffer<int8_t> out = view(y, {to_int(inner), to_int(C), to_int(outer)});
  out.crop(1, to_int(c_off), to_int(c));
  realize(*p.jit, out);
}

void resize_nearest_halide(const Int8Tensor &x, int64_t sh, int64_t sw, Int8Tensor &y) {
  ResizePipeline &p = pipeline<ResizePipeline>();
  std::lock_guard<std::mutex> lock(p.jit->mu);
  p.x.set(view(x, {to_int(x.shape[3]), to_int(x.shape[2]), to_int(x.shape[1]), to_int(x.shape[0])}));
  p.sh.set(to_int(sh)), p.sw.set(to_int(sw));
  realize(*p.jit, view(y, {to_int(y.shape[3]), to_int(y.shape[2]), to_int(y.shape[1]), to_int(y.shape[0])}));
}

}  // namespace

const Int8Engine &halide_int8_engine() {
  static const Int8Engine e{"halide", conv2d_halide, pool2d_halide, add_halide, requantize_into_halide,
                            resize_nearest_halide};
  return e;
}

}  // namespace disco::vitis_ai
