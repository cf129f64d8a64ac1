// A Dim is one tensor extent: an integer constant or a symbolic expression over
// named symbols ("batch", "seq", fresh "s3"). Expressions are kept in one
// canonical form, a polynomial whose atoms are symbols or irreducible
// floor-div / mod / min / max terms, so two dims are equal exactly when their
// canonical forms are. Facts that need more than structure (union-find over
// symbols, product equalities) live in lowering/shape_store.h.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace disco {

class Dim;
struct AtomNode;
using Atom = std::shared_ptr<const AtomNode>;
using SymbolValues = std::map<std::string, int64_t>;

class Dim {
 public:
  struct Term {
    int64_t coeff;
    std::vector<Atom> atoms;  // sorted by key; empty for the constant term
  };

  Dim(int64_t c = 0);  // NOLINT: implicit so that constants mix with dims
  static Dim symbol(const std::string &name);

  bool is_const() const;
  int64_t as_const() const;  // throws unless is_const()
  bool is_const(int64_t v) const { return is_const() && as_const() == v; }
  // A bare symbol, coefficient 1: "batch".
  bool is_symbol() const;
  const std::string &symbol_name() const;
  // coeff * atom1 * atom2..., a single term.
  bool is_monomial() const { return terms().size() <= 1; }

  const std::vector<Term> &terms() const;
  // Canonicalizes a sum of terms; the building block of every operation.
  static Dim from_terms(std::vector<Term> terms);
  static Dim from_atom(Atom a);
  const std::string &str() const;  // canonical text, also the equality key

  friend Dim operator+(const Dim &a, const Dim &b);
  friend Dim operator-(const Dim &a, const Dim &b);
  friend Dim operator*(const Dim &a, const Dim &b);
  Dim operator-() const { return Dim(0) - *this; }

  bool operator==(const Dim &o) const { return str() == o.str(); }
  bool operator!=(const Dim &o) const { return !(*this == o); }
  bool operator<(const Dim &o) const { return str() < o.str(); }

  // Throws if a symbol has no value or a division by zero happens.
  int64_t eval(const SymbolValues &values) const;
  void collect_symbols(std::set<std::string> &out) const;
  // Rebuilds the dim with each symbol replaced where `f` gives a replacement.
  Dim substitute(const std::function<std::optional<Dim>(const std::string &)> &f) const;

 private:
  struct Poly;
  explicit Dim(std::shared_ptr<const Poly> p) : p_(std::move(p)) {}
  friend Dim floor_div(const Dim &a, const Dim &b);
  friend Dim floor_mod(const Dim &a, const Dim &b);
  friend Dim min(const Dim &a, const Dim &b);
  friend Dim max(const Dim &a, const Dim &b);
  std::shared_ptr<const Poly> p_;
};

Dim floor_div(const Dim &a, const Dim &b);
Dim floor_mod(const Dim &a, const Dim &b);
Dim min(const Dim &a, const Dim &b);
Dim max(const Dim &a, const Dim &b);
inline Dim ceil_div(const Dim &a, const Dim &b) { return floor_div(a + b - 1, b); }
// Integer division rounding toward negative infinity, as floor_div does for dims.
int64_t floor_div_int(int64_t a, int64_t b);

struct AtomNode {
  enum Kind { Sym, FloorDiv, Mod, Min, Max } kind;
  std::string name;  // Sym only
  Dim a, b;          // the others
  std::string key;   // canonical text
};

using Shape = std::vector<Dim>;
std::string shape_str(const Shape &s);  // "[batch, seq, 768]"
std::string dims_str(const std::vector<int64_t> &dims);  // "[2, 3, 768]", a concrete shape
Dim num_elements(const Shape &s);
// Evaluates every dim; the result is in ONNX order. (A run evaluates shapes
// compiled over symbol slots instead: runtime/symbol_slots.h.)
std::vector<int64_t> eval_shape(const Shape &s, const SymbolValues &values);

}  // namespace disco
