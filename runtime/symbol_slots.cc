#include "runtime/symbol_slots.h"

#include <algorithm>

#include "frontend/errors.h"

namespace disco {

int SymbolTable::slot(const std::string &name) {
  auto [it, added] = slots_.emplace(name, size());
  if (added) names_.push_back(name);
  return it->second;
}

std::optional<int> SymbolTable::find(const std::string &name) const {
  auto it = slots_.find(name);
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

BoundSymbols::BoundSymbols(std::shared_ptr<const SymbolTable> table)
    : table_(std::move(table)), values_(table_->size(), kUnbound) {}

BoundSymbols::BoundSymbols(const SymbolValues &values) {
  auto table = std::make_shared<SymbolTable>();
  for (const auto &[name, v] : values) {
    table->slot(name);  // slots in the map's order: slot i is values_[i]
    values_.push_back(v);
  }
  table_ = std::move(table);
}

int64_t BoundSymbols::at(int slot) const {
  DISCO_CHECK(has(slot), "symbol '", table_->name(slot), "' has no value");
  return values_[slot];
}

void BoundSymbols::clear() { std::fill(values_.begin(), values_.end(), kUnbound); }

std::optional<int64_t> BoundSymbols::find(const std::string &name) const {
  const std::optional<int> slot = table_->find(name);
  if (!slot || !has(*slot)) return std::nullopt;
  return values_[*slot];
}

SymbolValues BoundSymbols::to_map() const {
  SymbolValues out;
  for (int s = 0; s < static_cast<int>(values_.size()); ++s)
    if (has(s)) out.emplace(table_->name(s), values_[s]);
  return out;
}

SlotDim::SlotDim(const Dim &d, SymbolTable &table) {
  code_.clear();
  max_depth_ = 0;
  emit(d, table);
  std::sort(slots_.begin(), slots_.end());
  slots_.erase(std::unique(slots_.begin(), slots_.end()), slots_.end());
}

void SlotDim::push(Op op, int64_t arg, int depth_change) {
  code_.push_back({op, arg});
  depth_ += depth_change;
  max_depth_ = std::max(max_depth_, depth_);
}

// The sum of terms, each its coefficient times its atoms, as Dim::eval computes it.
void SlotDim::emit(const Dim &d, SymbolTable &table) {
  if (d.terms().empty()) return push(Op::Const, 0, 1);
  bool first_term = true;
  for (const Dim::Term &t : d.terms()) {
    const bool coeff_needed = t.coeff != 1 || t.atoms.empty();
    if (coeff_needed) push(Op::Const, t.coeff, 1);
    for (size_t i = 0; i < t.atoms.size(); ++i) {
      emit_atom(*t.atoms[i], table);
      if (coeff_needed || i > 0) push(Op::Mul, 0, -1);
    }
    if (!first_term) push(Op::Add, 0, -1);
    first_term = false;
  }
}

void SlotDim::emit_atom(const AtomNode &a, SymbolTable &table) {
  if (a.kind == AtomNode::Sym) {
    const int slot = table.slot(a.name);
    slots_.push_back(slot);
    return push(Op::Slot, slot, 1);
  }
  emit(a.a, table);
  emit(a.b, table);
  switch (a.kind) {
    case AtomNode::FloorDiv:
    case AtomNode::Mod:
      keys_.push_back(a.key);
      return push(a.kind == AtomNode::FloorDiv ? Op::FloorDiv : Op::Mod, static_cast<int64_t>(keys_.size()) - 1, -1);
    case AtomNode::Min: return push(Op::Min, 0, -1);
    case AtomNode::Max: return push(Op::Max, 0, -1);
    case AtomNode::Sym: break;
  }
}

int64_t SlotDim::eval(const BoundSymbols &v) const {
  // Most dims are a constant or a bare symbol.
  if (code_.size() == 1) return code_[0].op == Op::Const ? code_[0].arg : v.at(static_cast<int>(code_[0].arg));
  return eval_code(v);
}

int64_t SlotDim::eval_code(const BoundSymbols &v) const {
  constexpr int kSmall = 16;
  int64_t small[kSmall];
  small[0] = 0;  // code_ is never empty; this tells the compiler so
  std::vector<int64_t> large;
  int64_t *stack = small;
  if (max_depth_ > kSmall) {
    large.resize(max_depth_);
    stack = large.data();
  }
  int top = -1;  // index of the top of the stack
  for (const Instr &in : code_) {
    switch (in.op) {
      case Op::Const: stack[++top] = in.arg; continue;
      case Op::Slot: stack[++top] = v.at(static_cast<int>(in.arg)); continue;
      default: break;
    }
    const int64_t b = stack[top--], a = stack[top];
    int64_t &r = stack[top];
    switch (in.op) {
      case Op::Add: r = a + b; break;
      case Op::Mul: r = a * b; break;
      case Op::FloorDiv:
        DISCO_CHECK(b != 0, "division by zero evaluating ", keys_[in.arg]);
        r = floor_div_int(a, b);
        break;
      case Op::Mod:
        DISCO_CHECK(b != 0, "modulo by zero evaluating ", keys_[in.arg]);
        r = a - floor_div_int(a, b) * b;
        break;
      case Op::Min: r = std::min(a, b); break;
      case Op::Max: r = std::max(a, b); break;
      case Op::Const:
      case Op::Slot: break;
    }
  }
  return stack[0];
}

bool SlotDim::bound_in(const BoundSymbols &v) const {
  for (int s : slots_)
    if (!v.has(s)) return false;
  return true;
}

int SlotDim::symbol_slot() const {
  return code_.size() == 1 && code_[0].op == Op::Slot ? static_cast<int>(code_[0].arg) : -1;
}

SlotShape compile_shape(const Shape &s, SymbolTable &table) {
  SlotShape out;
  out.reserve(s.size());
  for (const Dim &d : s) out.emplace_back(d, table);
  return out;
}

void eval_shape_into(const SlotShape &s, const BoundSymbols &v, std::vector<int64_t> &out) {
  out.resize(s.size());
  for (size_t d = 0; d < s.size(); ++d) out[d] = s[d].eval(v);
}

}  // namespace disco
