// The shape-constraint store, after DISC's SymbolicDimMgr. It learns facts
// while shapes are inferred and answers the questions that fusion and
// specialization ask; nothing downstream looks at raw dims.
//
//  - union-find over symbols (and symbols pinned to constants), learned from
//    broadcasting, MatMul's K, Concat's other axes and the like;
//  - product equalities, such as a Reshape's element counts;
//  - per-symbol facts: lower bound, divisibility, known-not-1, likely values;
//  - run-time checks that keep what was assumed honest (runtime/runtime_check.h:
//    the runtime verifies them, so the type is the runtime's).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/dim.h"
#include "runtime/runtime_check.h"

namespace disco {

struct SymbolFacts {
  int64_t min = 0;
  int64_t divisor = 1;  // the symbol is a multiple of this
  bool not_one = false;
  std::vector<int64_t> likely;  // hints, e.g. --hint seq=128
  std::string origin;           // "input 'x' dim 1" or the node that made it
};

class ShapeStore {
 public:
  // Symbols: creation, facts, union-find.
  Dim fresh_symbol(const std::string &prefix, const std::string &origin);
  void declare_symbol(const std::string &name, const std::string &origin);
  bool has_symbol(const std::string &name) const { return facts_.count(name) != 0; }
  SymbolFacts &facts(const std::string &sym);
  const SymbolFacts &facts(const std::string &sym) const;
  const std::map<std::string, SymbolFacts> &all_symbols() const { return facts_; }

  // Records a == b. Symbols are merged (a symbol equal to a constant is pinned
  // to it); a run-time check with `why` is added unless the equality is already
  // structural. Throws if two different constants are asserted equal.
  void assert_equal(const Dim &a, const Dim &b, const std::string &why);
  void add_check(RuntimeCheck c);
  void add_product_equal(const Dim &a, const Dim &b);
  const std::vector<RuntimeCheck> &checks() const { return checks_; }

  // Rewrites a dim with every symbol replaced by its class representative.
  Dim canonical(const Dim &d) const;
  Shape canonical(const Shape &s) const;

  // The queries fusion and specialization use.
  bool same_dim(const Dim &a, const Dim &b) const;
  bool same_shape(const Shape &a, const Shape &b) const;
  bool same_num_elements(const Shape &a, const Shape &b) const;
  // What the symbol facts prove `d` a multiple of: the gcd over its terms of
  // each term's coefficient times its symbols' divisors (0 for a zero dim; 1
  // where such a product passes 2^63). is_divisible(d, k) is whether k divides it.
  int64_t divisor(const Dim &d) const;
  bool is_divisible(const Dim &d, int64_t k) const;
  bool can_be_one(const Dim &d) const;

  // Bounds of a dim from the symbol facts: each symbol is at least its `min`
  // and never negative (it is an extent), mod k lies in [0, k). nullopt when
  // the facts give no bound, e.g. the upper bound of any bare symbol.
  std::optional<int64_t> lower_bound(const Dim &d) const;
  std::optional<int64_t> upper_bound(const Dim &d) const;
  bool is_nonnegative(const Dim &d) const;
  // min(a, b) and max(a, b), reduced to one side when the bounds decide it,
  // so that clamps which cannot bite vanish: max(seq - 1, -1) = seq - 1.
  Dim simplify_min(const Dim &a, const Dim &b) const;
  Dim simplify_max(const Dim &a, const Dim &b) const;

  // Lines for `disco inspect`: equalities, product facts, symbol facts, checks.
  std::vector<std::string> describe() const;

 private:
  std::optional<Dim> representative(const std::string &sym) const;
  std::string find(const std::string &sym) const;
  // Bounds already found in one lower_bound/upper_bound call, by atom key and
  // side: a dim's atoms nest and share (clamps of clamps in Swin's window
  // masks), and bounding each anew took time exponential in the nesting.
  using BoundMemo = std::map<std::pair<std::string, bool>, std::optional<int64_t>>;
  std::optional<int64_t> bound(const Dim &d, bool upper, BoundMemo &memo) const;
  std::optional<int64_t> atom_bound(const AtomNode &a, bool upper, BoundMemo &memo) const;
  std::map<std::string, SymbolFacts> facts_;
  std::map<std::string, std::string> parent_;  // union-find over symbols
  std::map<std::string, int64_t> pinned_;      // root symbol -> constant
  std::vector<std::pair<Dim, Dim>> products_;
  std::vector<RuntimeCheck> checks_;
  std::vector<std::string> equal_log_;
  int fresh_ = 0;
};

}  // namespace disco
