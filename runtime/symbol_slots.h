// Symbols by slot, for the per-run path. When a plan is loaded, every symbol
// it names gets a slot in a SymbolTable and every dim the runtime evaluates on
// each run is compiled to a SlotDim over those slots; a run then binds values
// into a BoundSymbols, a vector indexed by slot, and evaluates without looking
// a name up. Names remain for messages and for the compile side, which keeps
// using SymbolValues (frontend/dim.h).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/dim.h"

namespace disco {

class SymbolTable {
 public:
  int slot(const std::string &name);  // the name's slot, added when new
  std::optional<int> find(const std::string &name) const;
  const std::string &name(int slot) const { return names_[slot]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::map<std::string, int> slots_;
  std::vector<std::string> names_;
};

// One run's symbol values, by slot of one table; a slot is unbound until set.
class BoundSymbols {
 public:
  BoundSymbols() = default;
  // Every slot of `table` (which must not grow afterwards), unbound.
  explicit BoundSymbols(std::shared_ptr<const SymbolTable> table);
  // From values by name (tests, the compile side), with a table of their own.
  BoundSymbols(const SymbolValues &values);  // NOLINT: implicit, so that a name map serves where this is taken

  bool has(int slot) const { return values_[slot] != kUnbound; }
  int64_t operator[](int slot) const { return values_[slot]; }  // only when has(slot)
  int64_t at(int slot) const;                                   // throws naming a symbol that has no value
  void set(int slot, int64_t v) { values_[slot] = v; }
  void clear();  // every slot unbound

  const SymbolTable &table() const { return *table_; }
  // By name, for messages and callers that know symbols by name.
  std::optional<int64_t> find(const std::string &name) const;
  SymbolValues to_map() const;  // the bound symbols
  // Every slot's value (unbound ones included): equal vectors, equal bindings.
  const std::vector<int64_t> &values() const { return values_; }

 private:
  static constexpr int64_t kUnbound = std::numeric_limits<int64_t>::min();
  std::shared_ptr<const SymbolTable> table_ = std::make_shared<SymbolTable>();
  std::vector<int64_t> values_;
};

// A Dim compiled over a table's slots: it evaluates as Dim::eval does, with
// the same errors (a symbol without a value, a division by zero).
class SlotDim {
 public:
  SlotDim() = default;  // the constant 0
  SlotDim(const Dim &d, SymbolTable &table);  // adds d's symbols to the table

  int64_t eval(const BoundSymbols &v) const;
  bool bound_in(const BoundSymbols &v) const;  // every symbol it reads has a value
  int symbol_slot() const;                     // a bare symbol's slot; -1 for anything else

 private:
  enum class Op : uint8_t { Const, Slot, Add, Mul, FloorDiv, Mod, Min, Max };
  struct Instr {
    Op op;
    int64_t arg;  // Const: the value; Slot: the slot; FloorDiv, Mod: the index of its text in keys_
  };
  void emit(const Dim &d, SymbolTable &table);
  void emit_atom(const AtomNode &a, SymbolTable &table);
  void push(Op op, int64_t arg, int depth_change);
  int64_t eval_code(const BoundSymbols &v) const;

  std::vector<Instr> code_{{Op::Const, 0}};  // postfix
  std::vector<int> slots_;                   // every slot read, once
  std::vector<std::string> keys_;            // divisions' text, for their messages
  int depth_ = 0, max_depth_ = 1;
};

// A shape compiled dim by dim; eval_shape_into evaluates it into `out`, reusing its storage.
using SlotShape = std::vector<SlotDim>;
SlotShape compile_shape(const Shape &s, SymbolTable &table);
void eval_shape_into(const SlotShape &s, const BoundSymbols &v, std::vector<int64_t> &out);

}  // namespace disco
