#include "lowering/lower_context.h"

#include <algorithm>

#include "frontend/errors.h"
#include "lowering/math_library.h"
#include "lowering/value_bounds.h"

namespace disco {

using Halide::Expr;

Halide::Type halide_type(DType t) {
  switch (t) {
    case DType::F32: return Halide::Float(32);
    case DType::F16: return Halide::Float(16);
    case DType::BF16: return Halide::BFloat(16);
    case DType::F64: return Halide::Float(64);
    case DType::I8: return Halide::Int(8);
    case DType::I16: return Halide::Int(16);
    case DType::I32: return Halide::Int(32);
    case DType::I64: return Halide::Int(64);
    case DType::U8: return Halide::UInt(8);
    case DType::U16: return Halide::UInt(16);
    case DType::U32: return Halide::UInt(32);
    case DType::U64: return Halide::UInt(64);
    case DType::Bool: return Halide::Bool();
    default: fail("no Halide type for dtype ", dtype_name(t));
  }
}

Expr HTensor::at(const std::vector<Expr> &idx) const {
  std::vector<Expr> rev(idx.rbegin(), idx.rend());
  return f(rev);
}

Expr SymbolParams::symbol(const std::string &name) {
  auto it = params_.find(name);
  if (it == params_.end()) {
    std::string pname = "sym_";
    for (char c : name) pname += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    pname += "_" + std::to_string(params_.size());
    it = params_.emplace(name, Halide::Param<int32_t>(pname)).first;
  }
  return it->second;
}

Expr SymbolParams::expr(const Dim &d) {
  Expr sum;
  for (const auto &t : d.terms()) {
    Expr p = Expr(static_cast<int32_t>(t.coeff));
    for (const auto &a : t.atoms) {
      Expr e;
      switch (a->kind) {
        case AtomNode::Sym: e = symbol(a->name); break;
        case AtomNode::FloorDiv: e = expr(a->a) / expr(a->b); break;  // Halide divides with floor
        case AtomNode::Mod: e = expr(a->a) % expr(a->b); break;
        case AtomNode::Min: e = Halide::min(expr(a->a), expr(a->b)); break;
        case AtomNode::Max: e = Halide::max(expr(a->a), expr(a->b)); break;
      }
      p = t.coeff == 1 && !p.defined() ? e : p * e;
    }
    sum = sum.defined() ? sum + p : p;
  }
  return sum.defined() ? sum : Expr(0);
}

std::vector<std::pair<std::string, Halide::Param<int32_t>>> SymbolParams::used() const {
  return {params_.begin(), params_.end()};
}

LowerContext::LowerContext(const Graph &g, const Node &node, const ShapeStore &store, const OpDef &def,
                           SymbolParams &syms, std::vector<std::optional<HTensor>> inputs, int f32_lanes)
    : NodeContext(g, node, store, def), syms_(syms), inputs_(std::move(inputs)), f32_lanes_(f32_lanes) {
  outputs_.resize(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    const Value &v = g.value(node.outputs[i]);
    outputs_[i].dtype = v.dtype;
    outputs_[i].shape = *v.shape;
  }
}

const HTensor &LowerContext::in(int i) const {
  if (!has_input(i) || !inputs_.at(i)) fail("input ", i, " is missing");
  return *inputs_[i];
}

int LowerContext::f32_lanes() const {
  note("lanes=" + std::to_string(f32_lanes_));
  return f32_lanes_;
}

bool LowerContext::input_bound_allows(int i, const std::function<bool(std::optional<double>)> &decide) const {
  const bool yes = decide(abs_bound(graph_, node_.inputs.at(i)));
  note("bound" + std::to_string(i) + (yes ? "=allows" : "=not"));  // the decision is what the code bakes in
  return yes;
}

const Shape &LowerContext::out_shape(int i) const { return outputs_.at(i).shape; }
DType LowerContext::out_dtype(int i) const { return outputs_.at(i).dtype; }

std::vector<Halide::Var> LowerContext::vars(int rank) const {
  std::vector<Halide::Var> v;
  for (int i = 0; i < rank; ++i) v.emplace_back("d" + std::to_string(i));
  return v;
}

std::vector<Expr> LowerContext::exprs(const std::vector<Halide::Var> &v) const { return {v.begin(), v.end()}; }

Halide::Func LowerContext::func(const std::string &suffix) const {
  std::string n;
  for (char c : node_.name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return Halide::Func(n + "_" + suffix);
}

void LowerContext::define_output(int i, const std::vector<Halide::Var> &v, const Expr &value) {
  Halide::Func f = func("out" + std::to_string(i));
  std::vector<Halide::Var> rev(v.rbegin(), v.rend());
  f(rev) = cast_to(out_dtype(i), value);
  set_output(i, f);
}

void LowerContext::set_output(int i, Halide::Func f) {
  if (!has_output(i)) return;
  outputs_.at(i).f = std::move(f);
}

Expr LowerContext::broadcast_read(int i, const std::vector<Expr> &out_idx, const Shape &oshape) {
  const HTensor &t = in(i);
  int r = static_cast<int>(oshape.size()), ri = t.rank();
  if (ri > r) fail("input ", i, " has rank ", ri, " above the output's ", r);
  std::vector<Expr> idx;
  for (int j = 0; j < ri; ++j) {
    const Dim &din = t.shape[j], &dout = oshape[j + r - ri];
    Expr o = out_idx[j + r - ri];
    if (store_.same_dim(din, dout))
      idx.push_back(o);
    else if (store_.canonical(din).is_const(1))
      idx.push_back(0);
    else if (!store_.can_be_one(din))
      idx.push_back(o);  // a run-time check guarantees din == dout
    else {
      idx.push_back(Halide::select(dim(din) == 1, 0, o));
      maybe_broadcast_.push_back(store_.canonical(din));
    }
  }
  return t.at(idx);
}

Stage &LowerContext::add_stage(Halide::Func f, StageKind kind, int rank, Halide::Expr fold_extent) {
  stages_.push_back({f, kind, rank, std::move(fold_extent)});
  return stages_.back();
}

Expr cast_to(DType t, const Expr &e) {
  Halide::Type ht = halide_type(t);
  if (e.type() == ht) return e;
  // A NaN is true; under Halide's no-NaNs flags `!= 0` alone may say false.
  if (t == DType::Bool && e.type().is_float() && e.type().bits() >= 32)
    return e != Halide::cast(e.type(), 0) || math::is_nan(e);
  if (t == DType::Bool) return e != Halide::cast(e.type(), 0);
  return Halide::cast(ht, e);
}

Expr zero_of(DType t) { return Halide::cast(halide_type(t), 0); }
Expr lowest_of(DType t) { return halide_type(t).min(); }

}  // namespace disco
