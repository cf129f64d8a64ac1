// Loss ops over [N, C, d1..dk] scores and [N, d1..dk] class targets:
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is the former
// applied to a LogSoftmax over the class axis, and can output that too).
// Targets are data: the class read is clamped into [0, C) so that an
// out-of-range target (an ONNX error) can never read outside the scores.
#include <functional>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

enum class Reduction { None, Sum, Mean };

Reduction reduction_of(const NodeContext &c) {
  std::string r = c.attrs().get_string("reduction", "mean");
  if (r == "none") return Reduction::None;
  if (r == "sum") return Reduction::Sum;
  if (r == "mean") return Reduction::Mean;
  c.fail("unknown reduction '", r, "'");
}

// Inputs: 0 scores [N, C, d...], 1 target [N, d...], 2 weight [C] (optional).
void infer_loss(InferContext &c) {
  const Shape &x = c.shape(0), &t = c.shape(1);
  if (x.size() < 2) c.fail("input must be [N, C, d...], got ", shape_str(x));
  if (!dtype_is_float(c.dtype(0))) c.fail("input must be a float tensor, got ", dtype_name(c.dtype(0)));
  if (c.dtype(1) != DType::I64 && c.dtype(1) != DType::I32)
    c.fail("target must be int32 or int64, got ", dtype_name(c.dtype(1)));
  if (t.size() + 1 != x.size()) c.fail("target ", shape_str(t), " must be input ", shape_str(x), " without dim 1");
  c.require_equal(t[0], x[0], "target dim 0 must equal input dim 0");
  for (size_t i = 1; i < t.size(); ++i)
    c.require_equal(t[i], x[i + 1],
                    "target dim " + std::to_string(i) + " must equal input dim " + std::to_string(i + 1));
  if (c.has_input(2)) {
    if (c.rank(2) != 1) c.fail("weight must be 1-D, got ", shape_str(c.shape(2)));
    c.require_equal(c.shape(2)[0], x[1], "weight length must equal the classes (input dim 1)");
  }
  c.set_output(0, c.dtype(0), reduction_of(c) == Reduction::None ? t : Shape{});
  if (c.has_output(1)) c.set_output(1, c.dtype(0), x);
}

// The loss at each target position from `logp(n, class, d...)`, reduced as
// asked. `logp` takes a full [N, C, d...] index.
void define_nll(LowerContext &c, Halide::Type t, const std::function<Expr(const std::vector<Expr> &)> &logp) {
  const HTensor &target = c.in(1);
  const Shape &xs = c.in(0).shape;
  Dim classes = xs[1];
  std::optional<int64_t> ignore;
  if (c.attrs().has("ignore_index")) ignore = c.attrs().get_int("ignore_index");

  // (loss, weight) at a target index [n, d...]; ignored targets weigh 0.
  auto at = [&](const std::vector<Expr> &ti) {
    Expr cls = Halide::cast(Halide::Int(64), target.at(ti));
    Expr hi = Halide::cast(Halide::Int(64), Halide::max(c.dim(classes) - 1, 0));
    Expr k = Halide::cast(Halide::Int(32), Halide::clamp(cls, Halide::cast(Halide::Int(64), 0), hi));
    Expr w = c.has_input(2) ? Halide::cast(t, c.in(2).at({k})) : Halide::cast(t, 1);
    if (ignore) w = Halide::select(cls == Halide::Expr(*ignore), Halide::cast(t, 0), w);
    std::vector<Expr> xi{ti[0], k};
    xi.insert(xi.end(), ti.begin() + 1, ti.end());
    return std::make_pair(-logp(xi) * w, w);
  };

  Reduction red = reduction_of(c);
  if (red == Reduction::None) {
    auto v = c.vars(target.rank());
    c.define_output(0, v, at(c.exprs(v)).first);
    return;
  }
  // One pass sums the losses and the weights; the mean divides them.
  Halide::RDom r = make_rdom(c, target.shape);
  auto [loss, w] = at(rdom_vars(r));
  Func sum = c.func("loss_sum");
  sum() = Halide::Tuple(Halide::cast(t, 0), Halide::cast(t, 0));
  sum() = Halide::Tuple(sum()[0] + loss, sum()[1] + w);
  c.add_stage(sum, StageKind::Reduction, 0);
  c.define_output(0, {}, red == Reduction::Sum ? sum()[0] : sum()[0] / sum()[1]);
}

void lower_nll(LowerContext &c) {
  const HTensor &x = c.in(0);
  Halide::Type t = acc_type(x.dtype);
  define_nll(c, t, [&](const std::vector<Expr> &i) { return Halide::cast(t, x.at(i)); });
}

// log_prob = LogSoftmax over the class axis (dim 1), then the NLL of it.
void lower_sce(LowerContext &c) {
  const HTensor &x = c.in(0);
  Halide::Type t = acc_type(x.dtype);
  int rank = x.rank();
  auto xv = [&](const std::vector<Expr> &i) { return Halide::cast(t, x.at(i)); };
  // The row statistics are indexed by [n, d...], the class axis reduced.
  auto kv = c.vars(rank - 1);
  auto kept = c.exprs(kv);
  auto full = [&](const std::vector<Expr> &k, const Expr &cls) {
    std::vector<Expr> i{k[0], cls};
    i.insert(i.end(), k.begin() + 1, k.end());
    return i;
  };
  StageKind kind = rank == 2 ? StageKind::RowReduction : StageKind::Reduction;
  Halide::RDom rc(0, c.dim(x.shape[1]));
  Func mx = c.func("max");
  mx(reversed(kv)) = t.min();
  mx(reversed(kv)) = Halide::max(mx(reversed(kv)), xv(full(kept, rc)));
  c.add_stage(mx, kind, rank - 1);
  Func se = c.func("sumexp");
  se(reversed(kv)) = Halide::cast(t, 0);
  se(reversed(kv)) += math::exp_nonpositive(xv(full(kept, rc)) - mx(reversed(kept)));
  c.add_stage(se, kind, rank - 1);
  auto logp = [&](const std::vector<Expr> &i) {
    std::vector<Expr> k{i[0]};
    k.insert(k.end(), i.begin() + 2, i.end());
    return xv(i) - mx(reversed(k)) - math::log(se(reversed(k)));
  };
  define_nll(c, t, logp);
  if (c.has_output(1)) {
    auto v = c.vars(rank);
    c.define_output(1, v, logp(c.exprs(v)));
  }
}

}  // namespace

void register_loss_ops(OpRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 12, OpKind::Reduction, infer_loss, lower_nll);
  r.add("SoftmaxCrossEntropyLoss", 12, OpKind::Reduction, infer_loss, lower_sce);
}

}  // namespace disco
