#include "lowering/shape_store.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "frontend/errors.h"

namespace disco {

Dim ShapeStore::fresh_symbol(const std::string &prefix, const std::string &origin) {
  std::string name;
  do {
    name = prefix + std::to_string(fresh_++);
  } while (facts_.count(name));
  declare_symbol(name, origin);
  return Dim::symbol(name);
}

void ShapeStore::declare_symbol(const std::string &name, const std::string &origin) {
  if (facts_.count(name)) return;
  facts_[name].origin = origin;
  parent_[name] = name;
}

SymbolFacts &ShapeStore::facts(const std::string &sym) {
  auto it = facts_.find(sym);
  DISCO_CHECK(it != facts_.end(), "unknown symbol '", sym, "'");
  return it->second;
}
const SymbolFacts &ShapeStore::facts(const std::string &sym) const {
  auto it = facts_.find(sym);
  DISCO_CHECK(it != facts_.end(), "unknown symbol '", sym, "'");
  return it->second;
}

std::string ShapeStore::find(const std::string &sym) const {
  std::string s = sym;
  for (auto it = parent_.find(s); it != parent_.end() && it->second != s; it = parent_.find(s)) s = it->second;
  return s;
}

std::optional<Dim> ShapeStore::representative(const std::string &sym) const {
  if (!parent_.count(sym)) return std::nullopt;
  std::string root = find(sym);
  auto p = pinned_.find(root);
  if (p != pinned_.end()) return Dim(p->second);
  if (root == sym) return std::nullopt;
  return Dim::symbol(root);
}

Dim ShapeStore::canonical(const Dim &d) const {
  return d.substitute([this](const std::string &s) { return representative(s); });
}
Shape ShapeStore::canonical(const Shape &s) const {
  Shape out;
  for (const auto &d : s) out.push_back(canonical(d));
  return out;
}

void ShapeStore::add_check(RuntimeCheck c) {
  for (const auto &e : checks_)
    if (e.kind == c.kind && e.a == c.a && e.b == c.b) return;
  checks_.push_back(std::move(c));
}

void ShapeStore::assert_equal(const Dim &a0, const Dim &b0, const std::string &why) {
  Dim a = canonical(a0), b = canonical(b0);
  if (a == b) return;
  if (a.is_const() && b.is_const()) {
    // "64 vs 8", or "seq = 64 vs 8" where a side was an expression.
    auto shown = [](const Dim &d0, const Dim &d) { return d0.is_const() ? d.str() : d0.str() + " = " + d.str(); };
    fail(why, ": ", shown(a0, a), " vs ", shown(b0, b));
  }
  add_check({RuntimeCheck::Equal, a0, b0, why});
  equal_log_.push_back(a.str() + " == " + b.str() + "   (" + why + ")");
  // Merge when one side is a bare symbol; otherwise keep it as a product fact.
  if (!a.is_symbol() && b.is_symbol()) std::swap(a, b);
  if (!a.is_symbol()) {
    add_product_equal(a, b);
    return;
  }
  const std::string ra = find(a.symbol_name());
  if (b.is_const()) {
    pinned_[ra] = b.as_const();
    return;
  }
  if (!b.is_symbol()) {
    add_product_equal(a, b);
    return;
  }
  const std::string rb = find(b.symbol_name());
  // Keep the older (usually user-named) symbol as the root, deterministically.
  const std::string &keep = facts_[ra].origin.rfind("input", 0) == 0 ? ra : rb;
  const std::string &drop = keep == ra ? rb : ra;
  parent_[drop] = keep;
  auto &kf = facts_[keep], &df = facts_[drop];
  kf.min = std::max(kf.min, df.min);
  kf.not_one = kf.not_one || df.not_one;
  kf.divisor = std::max(kf.divisor, df.divisor);
  kf.likely.insert(kf.likely.end(), df.likely.begin(), df.likely.end());
}

void ShapeStore::add_product_equal(const Dim &a, const Dim &b) {
  if (canonical(a) == canonical(b)) return;
  products_.emplace_back(a, b);
}

bool ShapeStore::same_dim(const Dim &a, const Dim &b) const { return canonical(a) == canonical(b); }

bool ShapeStore::same_shape(const Shape &a, const Shape &b) const {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_dim(a[i], b[i])) return false;
  return true;
}

bool ShapeStore::same_num_elements(const Shape &a, const Shape &b) const {
  Dim diff = canonical(num_elements(a)) - canonical(num_elements(b));
  if (diff.is_const(0)) return true;
  // diff must be a small integer combination of the product facts.
  std::vector<Dim> facts;
  for (const auto &[x, y] : products_) facts.push_back(canonical(x) - canonical(y));
  for (size_t i = 0; i < facts.size(); ++i) {
    for (int si : {1, -1}) {
      Dim d1 = diff - Dim(si) * facts[i];
      if (d1.is_const(0)) return true;
      for (size_t j = i + 1; j < facts.size(); ++j)
        for (int sj : {1, -1})
          if ((d1 - Dim(sj) * facts[j]).is_const(0)) return true;
    }
  }
  return false;
}

int64_t ShapeStore::divisor(const Dim &d0) const {
  const Dim d = canonical(d0);  // held: terms() refers into it
  int64_t g = 0;
  for (const auto &t : d.terms()) {
    int64_t div = t.coeff;
    for (const auto &a : t.atoms)
      if (a->kind == AtomNode::Sym && has_symbol(a->name) &&
          __builtin_mul_overflow(div, facts_.at(a->name).divisor, &div))
        return 1;
    g = std::gcd(g, div);
  }
  return g;
}

bool ShapeStore::is_divisible(const Dim &d, int64_t k) const { return k != 0 && divisor(d) % k == 0; }

bool ShapeStore::can_be_one(const Dim &d0) const {
  Dim d = canonical(d0);
  if (d.is_const()) return d.as_const() == 1;
  if (d.terms().size() == 1) {
    const auto &t = d.terms()[0];
    if (t.coeff != 1 && t.coeff != -1) return false;
    if (t.atoms.size() == 1 && t.atoms[0]->kind == AtomNode::Sym && facts_.count(t.atoms[0]->name)) {
      const auto &f = facts_.at(t.atoms[0]->name);
      return !(f.not_one || f.min >= 2 || f.divisor >= 2);
    }
  }
  return true;
}

std::optional<int64_t> ShapeStore::atom_bound(const AtomNode &a, bool upper, BoundMemo &memo) const {
  if (a.kind == AtomNode::Sym) {
    if (upper) return std::nullopt;
    return has_symbol(a.name) ? facts(a.name).min : 0;  // extents are never negative
  }
  const auto at = std::make_pair(a.key, upper);
  if (auto it = memo.find(at); it != memo.end()) return it->second;
  std::optional<int64_t> r;
  switch (a.kind) {
    case AtomNode::Sym:
      break;
    case AtomNode::FloorDiv:
    case AtomNode::Mod: {
      if (!a.b.is_const() || a.b.as_const() <= 0) break;
      int64_t k = a.b.as_const();
      if (a.kind == AtomNode::Mod) {
        r = upper ? k - 1 : 0;
        break;
      }
      auto x = bound(a.a, upper, memo);
      if (x) r = floor_div_int(*x, k);
      break;
    }
    case AtomNode::Min:
    case AtomNode::Max: {
      bool is_min = a.kind == AtomNode::Min;
      auto x = bound(a.a, upper, memo), y = bound(a.b, upper, memo);
      auto pick = [&](int64_t p, int64_t q) { return is_min ? std::min(p, q) : std::max(p, q); };
      if (x && y)
        r = pick(*x, *y);
      else if (is_min == upper)  // min(x, y) <= x alone bounds it above; max(x, y) >= x alone below
        r = x ? x : y;
      break;
    }
  }
  memo.emplace(at, r);
  return r;
}

std::optional<int64_t> ShapeStore::bound(const Dim &d, bool upper, BoundMemo &memo) const {
  int64_t sum = 0;
  const Dim cd = canonical(d);
  for (const auto &t : cd.terms()) {
    bool want_upper = upper != (t.coeff < 0);
    int64_t prod = 1;
    for (const auto &a : t.atoms) {
      // Bounds of a product multiply only when every factor is non-negative.
      auto lo = atom_bound(*a, false, memo);
      if (t.atoms.size() > 1 && (!lo || *lo < 0)) return std::nullopt;
      auto b = atom_bound(*a, want_upper, memo);
      if (!b || __builtin_mul_overflow(prod, *b, &prod)) return std::nullopt;
    }
    if (__builtin_mul_overflow(t.coeff, prod, &prod) || __builtin_add_overflow(sum, prod, &sum)) return std::nullopt;
  }
  return sum;
}

std::optional<int64_t> ShapeStore::lower_bound(const Dim &d) const {
  BoundMemo memo;
  return bound(d, false, memo);
}
std::optional<int64_t> ShapeStore::upper_bound(const Dim &d) const {
  BoundMemo memo;
  return bound(d, true, memo);
}

bool ShapeStore::is_nonnegative(const Dim &d) const {
  auto lo = lower_bound(d);
  return lo && *lo >= 0;
}

Dim ShapeStore::simplify_min(const Dim &a, const Dim &b) const {
  if (is_nonnegative(b - a)) return a;
  if (is_nonnegative(a - b)) return b;
  return min(a, b);
}

Dim ShapeStore::simplify_max(const Dim &a, const Dim &b) const {
  if (is_nonnegative(a - b)) return a;
  if (is_nonnegative(b - a)) return b;
  return max(a, b);
}

std::vector<std::string> ShapeStore::describe() const {
  std::vector<std::string> out;
  for (const auto &[name, f] : facts_) {
    std::ostringstream os;
    os << "symbol " << name;
    if (auto r = representative(name)) os << " = " << r->str();
    os << "  (" << f.origin << ")";
    if (f.min > 0) os << " min " << f.min;
    if (f.divisor > 1) os << " divisible by " << f.divisor;
    if (f.not_one) os << " not 1";
    for (auto l : f.likely) os << " likely " << l;
    out.push_back(os.str());
  }
  for (const auto &e : equal_log_) out.push_back("equal   " + e);
  for (const auto &[a, b] : products_) out.push_back("product " + a.str() + " == " + b.str());
  for (const auto &c : checks_) {
    static const char *kinds[] = {"==", "broadcasts with", "divisible by", ">="};
    out.push_back("check   " + c.a.str() + " " + kinds[c.kind] + " " + c.b.str() + "   (" + c.message + ")");
  }
  return out;
}

}  // namespace disco
