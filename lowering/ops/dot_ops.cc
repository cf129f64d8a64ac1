// Dot ops: MatMul (numpy semantics: 1-D operands, broadcast batch dims) and
// Gemm. Both lower to one Func with a pure init and an update over an RDom on
// K; half-precision inputs accumulate in float32 and are cast back in a final
// pure Func. The product, of any type, is always a stage of its own (the
// output a pure Func over it) and reads its right operand through a
// DotOperand stage (op_helpers.h's dot_operand), so that the x86 dot template
// can keep a tile of it in registers and pack the operand per task, and the
// GPU's shared-memory template stages its tiles (schedules/gpu_schedule.cc).
#include <functional>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/weight_layout.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// ---- shared ----------------------------------------------------------------

void require_same_dtype(InferContext &c, int a, int b) {
  if (c.dtype(a) != c.dtype(b))
    c.fail("inputs ", a, " and ", b, " have different dtypes: ", dtype_name(c.dtype(a)), " and ",
           dtype_name(c.dtype(b)));
}

// Output `out_vars` = epilogue(sum over k < K of product(k)). The sum is a
// stage of its own and the output a pure Func over it, whatever the type:
// the GPU's shared-memory tiles compute the sum at the output's block, and
// the x86 dot template keeps it in registers per micro-tile.
void define_dot(LowerContext &c, const std::vector<Var> &out_vars, const Dim &k_extent,
                const std::function<Expr(const Expr &k)> &product, const std::function<Expr(const Expr &sum)> &epilogue,
                Expr init) {
  Halide::Type acc = acc_type(c.out_dtype(0));
  Func sum = c.func("dot");
  auto lhs = reversed(out_vars);
  sum(lhs) = init.defined() ? Halide::cast(acc, init) : Halide::cast(acc, 0);
  Halide::RDom k(0, c.dim(k_extent));
  sum(lhs) += Halide::cast(acc, product(k.x));
  c.add_stage(sum, StageKind::Reduction, static_cast<int>(out_vars.size()));
  Expr s = sum(lhs);
  c.define_output(0, out_vars, epilogue ? epilogue(s) : s);
}

// A B packed at compile time (pack_dot_weights, lowering/weight_layout.h):
// input 1 is [N / w, K, w] and the node's kPanelWidthAttr is w. Returns w, or
// 0 when B is as the model gives it.
int packed_panel(LowerContext &c) {
  const int w = static_cast<int>(c.attrs().get_int(kPanelWidthAttr, 0));
  if (w > 0 && c.in(1).rank() != 3) c.fail("internal: a packed right operand must be 3-D");
  return w;
}

Expr packed_b(const HTensor &b, int w, const Expr &n, const Expr &k) { return b.at({n / w, k, n % w}); }

// B as the model gives it, [K, N], when it was packed in panels; else input 1's shape.
Shape operand_b_shape(InferContext &c) {
  const Shape &b = c.shape(1);
  const int64_t w = c.attrs().get_int(kPanelWidthAttr, 0);
  if (w <= 0) return b;
  if (b.size() != 3) c.fail("internal: a packed right operand must be 3-D, got ", shape_str(b));
  return {b[1], Dim(c.attrs().get_int(kPanelColumnsAttr, 0))};
}

// ---- MatMul ----------------------------------------------------------------

void infer_matmul(InferContext &c) {
  require_same_dtype(c, 0, 1);
  const Shape &a = c.shape(0), b = operand_b_shape(c);
  if (a.empty() || b.empty()) c.fail("MatMul operands must have rank >= 1, got ranks ", a.size(), " and ", b.size());
  // numpy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; the 1 is dropped.
  Dim ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  c.require_equal(ka, kb,
                  "MatMul inner dims must match (A " + shape_str(a) + " dim -1 vs B " + shape_str(b) + " dim " +
                      (b.size() == 1 ? "0" : "-2") + ")");
  Shape batch_a(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  Shape batch_b(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  Shape out = c.broadcast(batch_a, batch_b);
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  c.set_output(0, c.dtype(0), out);
}

void lower_matmul(LowerContext &c) {
  const HTensor &a = c.in(0), &b = c.in(1);
  const int panel = packed_panel(c);
  const int b_rank = panel > 0 ? 2 : b.rank();
  const Shape &out = c.out_shape(0);
  int rank = static_cast<int>(out.size());
  int batch_rank = rank - (a.rank() >= 2) - (b_rank >= 2);
  auto v = c.vars(rank);
  auto idx = c.exprs(v);
  std::vector<Expr> batch(idx.begin(), idx.begin() + batch_rank);
  Shape batch_shape(out.begin(), out.begin() + batch_rank);
  Expr m = a.rank() >= 2 ? idx[batch_rank] : Expr();
  Expr n = b_rank >= 2 ? idx.back() : Expr();
  Halide::Type acc = acc_type(c.out_dtype(0));
  auto read_b = [&](const Expr &n, const Expr &k) {
    if (panel > 0) return packed_b(b, panel, n, k);
    std::vector<Expr> tb = b.rank() >= 2 ? std::vector<Expr>{k, n} : std::vector<Expr>{k};
    return matmul_read(c, 1, batch, batch_shape, tb);
  };
  // With a column B the output has no n: nothing to pack.
  std::function<Expr(const Expr &, const Expr &)> rhs = read_b;
  if (b_rank >= 2) {
    std::vector<Var> rest = reversed(std::vector<Var>(v.begin(), v.begin() + batch_rank));
    rhs = dot_operand(c, rest, read_b, panel);
  }
  // Rows past M read row M - 1: the x86 template computes whole micro-tiles
  // of rows, which may pass M in a task's last one (schedules/x86_dot_schedule.h);
  // those rows' sums are never stored.
  const Expr m_read = a.rank() >= 2 ? Halide::min(m, c.dim(a.shape[a.rank() - 2]) - 1) : Expr();
  auto product = [&](const Expr &k) {
    std::vector<Expr> ta = a.rank() >= 2 ? std::vector<Expr>{m_read, k} : std::vector<Expr>{k};
    return Halide::cast(acc, matmul_read(c, 0, batch, batch_shape, ta)) * Halide::cast(acc, rhs(n, k));
  };
  define_dot(c, v, a.shape.back(), product, nullptr, Expr());
}

// ---- Gemm ------------------------------------------------------------------

struct GemmAttrs {
  bool trans_a, trans_b;
  float alpha, beta;
};

GemmAttrs gemm_attrs(const AttrReader &r) {
  return {r.get_int("transA", 0) != 0, r.get_int("transB", 0) != 0, r.get_float("alpha", 1.0f),
          r.get_float("beta", 1.0f)};
}

// C broadcasts one way only: each of its dims equals the output's or is 1.
void require_broadcasts_to(InferContext &c, const Shape &from, const Shape &to, const std::string &what) {
  if (from.size() > to.size()) c.fail(what, " has rank ", from.size(), " above ", to.size());
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim &d = from[i], &o = to[i + to.size() - from.size()];
    if (c.store().same_dim(d, o) || c.store().canonical(d).is_const(1)) continue;
    std::string desc = what + " dim " + std::to_string(i) + " (" + d.str() + ") and output dim (" + o.str() + ")";
    c.broadcast_dim(d, o, desc);
    // Broadcastable also admits o == 1 < d, which would grow the output.
    if (c.store().can_be_one(o))
      c.store().add_check(
          {RuntimeCheck::AtLeast, o, d, c.where() + ": " + desc + ": C's dim must be 1 or the output's"});
  }
}

void infer_gemm(InferContext &c) {
  require_same_dtype(c, 0, 1);
  GemmAttrs g = gemm_attrs(c.attrs());
  const Shape &a = c.shape(0), b = operand_b_shape(c);
  if (a.size() != 2 || b.size() != 2) c.fail("Gemm operands must be 2-D, got ", shape_str(a), " and ", shape_str(b));
  Dim m = g.trans_a ? a[1] : a[0], ka = g.trans_a ? a[0] : a[1];
  Dim kb = g.trans_b ? b[1] : b[0], n = g.trans_b ? b[0] : b[1];
  c.require_equal(ka, kb,
                  "Gemm inner dims must match (A " + shape_str(a) + (g.trans_a ? " transposed" : "") + ", B " +
                      shape_str(b) + (g.trans_b ? " transposed" : "") + ")");
  Shape out{m, n};
  if (c.has_input(2)) {
    require_same_dtype(c, 0, 2);
    // Before opset 7, C broadcasts only when the `broadcast` attribute says so.
    if (c.opset() < 7 && c.attrs().get_int("broadcast", 0) == 0) {
      if (c.rank(2) != 2) c.fail("C must be [M, N] when broadcast=0, got ", shape_str(c.shape(2)));
      c.require_equal(c.shape(2)[0], m, "Gemm C dim 0 must equal M");
      c.require_equal(c.shape(2)[1], n, "Gemm C dim 1 must equal N");
    } else {
      require_broadcasts_to(c, c.shape(2), out, "Gemm C " + shape_str(c.shape(2)));
    }
  } else if (c.opset() < 11) {
    c.fail("input C is required before opset 11");
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_gemm(LowerContext &c) {
  GemmAttrs g = gemm_attrs(c.attrs());
  const HTensor &a = c.in(0), &b = c.in(1);
  const int panel = packed_panel(c);
  auto v = c.vars(2);
  Expr m = v[0], n = v[1];
  Halide::Type acc = acc_type(c.out_dtype(0));
  std::function<Expr(const Expr &, const Expr &)> rhs = [&](const Expr &n, const Expr &k) {
    if (panel > 0) return packed_b(b, panel, n, k);
    return g.trans_b ? b.at({n, k}) : b.at({k, n});
  };
  rhs = dot_operand(c, {}, rhs, panel);
  // Rows past M read row M - 1, as in lower_matmul.
  const Expr m_read = Halide::min(m, c.dim(g.trans_a ? a.shape[1] : a.shape[0]) - 1);
  auto product = [&](const Expr &k) {
    Expr x = g.trans_a ? a.at({k, m_read}) : a.at({m_read, k});
    return Halide::cast(acc, x) * Halide::cast(acc, rhs(n, k));
  };
  Dim k_extent = g.trans_a ? a.shape[0] : a.shape[1];
  bool has_c = c.has_input(2) && g.beta != 0.0f;
  // Integer Gemm scales in double so that fractional alpha/beta are honoured.
  Halide::Type scale_t = acc.is_float() ? acc : Halide::Float(64);
  Expr c_term = has_c ? c.broadcast_read(2, {m, n}, c.out_shape(0)) : Expr();
  std::function<Expr(const Expr &)> epilogue;
  if (g.alpha != 1.0f || (has_c && g.beta != 1.0f)) {
    epilogue = [&](const Expr &sum) {
      Expr r = Halide::cast(scale_t, g.alpha) * Halide::cast(scale_t, sum);
      if (has_c) r = r + Halide::cast(scale_t, g.beta) * Halide::cast(scale_t, c_term);
      return r;
    };
  }
  // alpha == beta == 1: C seeds the accumulator and no epilogue is needed.
  Expr init = has_c && !epilogue ? c_term : Expr();
  define_dot(c, v, k_extent, product, epilogue, init);
}

}  // namespace

void register_dot_ops(OpRegistry &r) {
  r.add("MatMul", 1, OpKind::Dot, infer_matmul, lower_matmul);
  r.add("Gemm", 1, OpKind::Dot, infer_gemm, lower_gemm);
}

}  // namespace disco
