#include "frontend/dim.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "frontend/errors.h"

namespace disco {

namespace {
// Coefficients from a model's shapes (15 * 2^63-1 in a fuzzed Reshape) must
// not overflow silently (undefined behaviour, then nonsense dims).
int64_t coeff_add(int64_t a, int64_t b) {
  int64_t r;
  DISCO_CHECK(!__builtin_add_overflow(a, b, &r), "a dim's arithmetic overflows 64 bits: ", a, " + ", b);
  return r;
}
int64_t coeff_mul(int64_t a, int64_t b) {
  int64_t r;
  DISCO_CHECK(!__builtin_mul_overflow(a, b, &r), "a dim's arithmetic overflows 64 bits: ", a, " * ", b);
  return r;
}
}  // namespace

struct Dim::Poly {
  std::vector<Term> terms;  // canonical order, no zero coefficients
  std::string key;
};

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

namespace {

int64_t fmod_(int64_t a, int64_t b) { return a - floor_div_int(a, b) * b; }

std::string mono_key(const std::vector<Atom> &atoms) {
  std::string k;
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (i) k += "*";
    k += atoms[i]->key;
  }
  return k;
}

std::vector<Atom> merge_monos(const std::vector<Atom> &a, const std::vector<Atom> &b) {
  std::vector<Atom> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
             [](const Atom &x, const Atom &y) { return x->key < y->key; });
  return out;
}

// True when `big` contains every atom of `small` (with multiplicity); sets rest.
bool divide_mono(const std::vector<Atom> &big, const std::vector<Atom> &small, std::vector<Atom> *rest) {
  std::vector<bool> used(big.size(), false);
  for (const auto &s : small) {
    bool found = false;
    for (size_t i = 0; i < big.size(); ++i) {
      if (!used[i] && big[i]->key == s->key) {
        used[i] = found = true;
        break;
      }
    }
    if (!found) return false;
  }
  rest->clear();
  for (size_t i = 0; i < big.size(); ++i)
    if (!used[i]) rest->push_back(big[i]);
  return true;
}

bool needs_parens(const Dim &d) { return d.terms().size() > 1; }

}  // namespace

Dim::Dim(int64_t c) {
  auto p = std::make_shared<Poly>();
  if (c != 0) p->terms.push_back({c, {}});
  p->key = std::to_string(c);
  p_ = p;
}

namespace {
// A term that is a single atom of kind k, whatever its coefficient.
bool single_atom(const Dim::Term &t, AtomNode::Kind k) { return t.atoms.size() == 1 && t.atoms[0]->kind == k; }

// Appends d's terms, each times c, to `out`.
void append_scaled(std::vector<Dim::Term> &out, const Dim &d, int64_t c) {
  for (Dim::Term t : d.terms()) {
    t.coeff = coeff_mul(t.coeff, c);
    out.push_back(std::move(t));
  }
}

// Whether two terms' products of atoms are the same (atoms sorted by key).
bool same_monomial(const std::vector<Atom> &x, const std::vector<Atom> &y) {
  if (x.size() != y.size()) return false;
  for (size_t k = 0; k < x.size(); ++k)
    if (x[k] != y[k] && x[k]->key != y[k]->key) return false;
  return true;
}

// min(A, B) + max(A - k, B - k) is A + B - k for a constant k (whichever of
// A and B is the larger). A roll written as two slices and a concat,
// x[-k:] ++ x[:-k], has lengths min(k, n) + max(0, n - k): n, which Swin's
// shifted windows then crop back and pad, nesting each stage's extent inside
// the next. Returns the sum with such pairs (same coefficient) replaced, or
// nullopt when there is none.
std::optional<std::vector<Dim::Term>> pair_min_with_max(const std::vector<Dim::Term> &terms) {
  auto shift = [](const Dim &x, const Dim &y) -> std::optional<int64_t> {
    const Dim d = x - y;
    return d.is_const() ? std::optional<int64_t>(d.as_const()) : std::nullopt;
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!single_atom(terms[i], AtomNode::Min)) continue;
    for (size_t j = 0; j < terms.size(); ++j) {
      if (!single_atom(terms[j], AtomNode::Max) || terms[j].coeff != terms[i].coeff) continue;
      const AtomNode &lo = *terms[i].atoms[0], &hi = *terms[j].atoms[0];
      std::optional<int64_t> k;
      for (const auto &[c, d] : {std::pair{&hi.a, &hi.b}, std::pair{&hi.b, &hi.a}}) {
        const auto ka = shift(lo.a, *c), kb = shift(lo.b, *d);
        if (ka && kb && *ka == *kb) k = ka;
      }
      if (!k) continue;
      std::vector<Dim::Term> out;
      for (size_t t = 0; t < terms.size(); ++t)
        if (t != i && t != j) out.push_back(terms[t]);
      for (const Dim &part : {lo.a, lo.b, Dim(-*k)}) append_scaled(out, part, terms[i].coeff);
      return out;
    }
  }
  return std::nullopt;
}

// rest + c*max(A, B) is max(rest + c*A, rest + c*B) for c > 0 and the min of
// them for c < 0 (likewise for min), taken only where the two sums cancel
// terms, so that they hold fewer terms than rest, A and B together: a slice
// from x < 0 to the end, n - max(n + x, 0), is min(-x, n), a term the shape
// store can bound (Swin's window masks compared such a length with -1, and
// fell back to compiling one shape). Returns nullopt when no term gains.
//
// Not re-entered: the sums and the min or max it builds (whose difference
// min_max takes) are built plainly, which bounds the work and the recursion
// (a difference of two such mins would distribute again without end).
std::optional<Dim> distribute_into_min_max(const std::vector<Dim::Term> &terms) {
  thread_local bool busy = false;
  if (busy || terms.size() < 2) return std::nullopt;
  struct Busy {
    Busy() { busy = true; }
    ~Busy() { busy = false; }
  } guard;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Dim::Term &t = terms[i];
    if (!single_atom(t, AtomNode::Min) && !single_atom(t, AtomNode::Max)) continue;
    const AtomNode &m = *t.atoms[0];
    // Without merges the two sums hold 2|rest| + |A| + |B| terms, and each
    // term of A or B that shares a monomial with rest saves at most two (both
    // cancel): they can gain only where twice the shared terms exceed rest's
    // count. A cheap test first, since most sums with a min or max share
    // nothing.
    size_t shared = 0;
    for (const Dim *d : {&m.a, &m.b})
      for (const auto &u : d->terms())
        for (size_t j = 0; j < terms.size(); ++j)
          if (j != i && same_monomial(terms[j].atoms, u.atoms)) {
            ++shared;
            break;
          }
    if (2 * shared <= terms.size() - 1) continue;
    std::vector<Dim::Term> rest;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i) rest.push_back(terms[j]);
    auto plus_scaled = [&](const Dim &d) {
      std::vector<Dim::Term> sum = rest;
      append_scaled(sum, d, t.coeff);
      return Dim::from_terms(std::move(sum));
    };
    const Dim p = plus_scaled(m.a), q = plus_scaled(m.b);
    if (p.terms().size() + q.terms().size() >= rest.size() + m.a.terms().size() + m.b.terms().size()) continue;
    const bool is_min = (m.kind == AtomNode::Min) == (t.coeff > 0);
    return is_min ? min(p, q) : max(p, q);
  }
  return std::nullopt;
}
}  // namespace

Dim Dim::from_terms(std::vector<Term> terms) {
  std::map<std::string, Term> acc;
  for (auto &t : terms) {
    if (t.coeff == 0) continue;
    auto k = mono_key(t.atoms);
    auto it = acc.find(k);
    if (it == acc.end())
      acc.emplace(k, std::move(t));
    else
      it->second.coeff = coeff_add(it->second.coeff, t.coeff);
  }
  bool has_min = false, has_max = false;
  for (auto &[k, t] : acc) {
    if (t.coeff == 0) continue;
    has_min = has_min || single_atom(t, AtomNode::Min);
    has_max = has_max || single_atom(t, AtomNode::Max);
  }
  if (has_min || has_max) {
    std::vector<Term> merged;
    for (auto &[k, t] : acc)
      if (t.coeff != 0) merged.push_back(t);
    if (has_min && has_max)
      if (auto paired = pair_min_with_max(merged)) return from_terms(std::move(*paired));
    if (auto distributed = distribute_into_min_max(merged)) return *distributed;
  }
  auto p = std::make_shared<Poly>();
  Term constant{0, {}};
  for (auto &[k, t] : acc) {
    if (t.coeff == 0) continue;
    if (t.atoms.empty())
      constant = t;
    else
      p->terms.push_back(t);
  }
  // Higher degree first, so "batch*seq + seq + 1" reads naturally.
  std::stable_sort(p->terms.begin(), p->terms.end(),
                   [](const Term &a, const Term &b) { return a.atoms.size() > b.atoms.size(); });
  if (constant.coeff != 0) p->terms.push_back(constant);
  std::ostringstream os;
  if (p->terms.empty()) os << "0";
  for (size_t i = 0; i < p->terms.size(); ++i) {
    const auto &t = p->terms[i];
    // Magnitudes as unsigned: -INT64_MIN is not an int64_t.
    const int64_t c = t.coeff;
    const uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    const bool signed_here = i || (c < 0 && !t.atoms.empty());
    if (i)
      os << (c < 0 ? " - " : " + ");
    else if (signed_here)
      os << "-";
    if (t.atoms.empty()) {
      if (signed_here)
        os << mag;
      else
        os << c;
      continue;
    }
    if (mag != 1) os << mag << "*";
    os << mono_key(t.atoms);
  }
  p->key = os.str();
  return Dim(std::shared_ptr<const Poly>(p));
}

Dim Dim::from_atom(Atom a) { return from_terms({Term{1, {std::move(a)}}}); }

Dim Dim::symbol(const std::string &name) {
  DISCO_CHECK(!name.empty(), "empty symbol name");
  auto a = std::make_shared<AtomNode>();
  a->kind = AtomNode::Sym;
  a->name = name;
  a->key = name;
  return from_atom(a);
}

bool Dim::is_const() const {
  return p_->terms.empty() || (p_->terms.size() == 1 && p_->terms[0].atoms.empty());
}
int64_t Dim::as_const() const {
  DISCO_CHECK(is_const(), "dim '", str(), "' is not a constant");
  return p_->terms.empty() ? 0 : p_->terms[0].coeff;
}
bool Dim::is_symbol() const {
  return p_->terms.size() == 1 && p_->terms[0].coeff == 1 && p_->terms[0].atoms.size() == 1 &&
         p_->terms[0].atoms[0]->kind == AtomNode::Sym;
}
const std::string &Dim::symbol_name() const {
  DISCO_CHECK(is_symbol(), "dim '", str(), "' is not a bare symbol");
  return p_->terms[0].atoms[0]->name;
}
const std::vector<Dim::Term> &Dim::terms() const { return p_->terms; }
const std::string &Dim::str() const { return p_->key; }

Dim operator+(const Dim &a, const Dim &b) {
  auto t = a.terms();
  t.insert(t.end(), b.terms().begin(), b.terms().end());
  return Dim::from_terms(std::move(t));
}
Dim operator-(const Dim &a, const Dim &b) {
  auto t = a.terms();
  for (auto x : b.terms()) {
    x.coeff = coeff_mul(x.coeff, -1);
    t.push_back(std::move(x));
  }
  return Dim::from_terms(std::move(t));
}
Dim operator*(const Dim &a, const Dim &b) {
  std::vector<Dim::Term> t;
  for (const auto &x : a.terms())
    for (const auto &y : b.terms()) t.push_back({coeff_mul(x.coeff, y.coeff), merge_monos(x.atoms, y.atoms)});
  return Dim::from_terms(std::move(t));
}

namespace {
Atom make_binary(AtomNode::Kind k, const Dim &a, const Dim &b) {
  auto n = std::make_shared<AtomNode>();
  n->kind = k;
  n->a = a;
  n->b = b;
  auto wrap = [](const Dim &d) { return needs_parens(d) ? "(" + d.str() + ")" : d.str(); };
  switch (k) {
    case AtomNode::FloorDiv: n->key = wrap(a) + "/" + wrap(b); break;
    case AtomNode::Mod: n->key = wrap(a) + "%" + wrap(b); break;
    case AtomNode::Min: n->key = "min(" + a.str() + ", " + b.str() + ")"; break;
    case AtomNode::Max: n->key = "max(" + a.str() + ", " + b.str() + ")"; break;
    default: break;
  }
  return n;
}

// Splits a = c*q + r with every coefficient of r in [0, c).
void split_by_const(const Dim &a, int64_t c, std::vector<Dim::Term> *q, std::vector<Dim::Term> *r) {
  for (const auto &t : a.terms()) {
    int64_t qc = floor_div_int(t.coeff, c), rc = fmod_(t.coeff, c);
    if (qc) q->push_back({qc, t.atoms});
    if (rc) r->push_back({rc, t.atoms});
  }
}

// a / b exactly when b is one term dividing every term of a.
std::optional<Dim> exact_div(const Dim &a, const Dim &b) {
  if (b.terms().size() != 1) return std::nullopt;
  const auto &bt = b.terms()[0];
  std::vector<Dim::Term> out;
  for (const auto &t : a.terms()) {
    Dim::Term q;
    if (t.coeff % bt.coeff != 0 || !divide_mono(t.atoms, bt.atoms, &q.atoms)) return std::nullopt;
    q.coeff = t.coeff / bt.coeff;
    out.push_back(std::move(q));
  }
  return Dim::from_terms(std::move(out));
}

// k when a = k * b for a constant k, b of several terms: torchvision's
// RetinaNet takes A = HWA // HW with HWA = 9 * HW, a sum of per-level areas
// (exact_div takes one-term divisors only). As exact_div, b is taken non-zero.
std::optional<int64_t> constant_multiple(const Dim &a, const Dim &b) {
  if (b.terms().size() < 2 || a.terms().size() != b.terms().size()) return std::nullopt;
  const int64_t num = a.terms()[0].coeff, den = b.terms()[0].coeff;
  if (den == 0 || num % den != 0) return std::nullopt;
  const int64_t k = num / den;
  if (!(a - b * Dim(k)).is_const(0)) return std::nullopt;
  return k;
}
}  // namespace


Dim floor_div(const Dim &a, const Dim &b) {
  if (b.is_const()) {
    int64_t c = b.as_const();
    DISCO_CHECK(c != 0, "division by zero in shape expression ", a.str(), " / 0");
    if (c < 0) return floor_div(-a, Dim(-c));
    if (c == 1) return a;
    std::vector<Dim::Term> q, r;
    split_by_const(a, c, &q, &r);
    Dim qd = Dim::from_terms(std::move(q)), rd = Dim::from_terms(std::move(r));
    if (rd.is_const()) return qd + Dim(floor_div_int(rd.as_const(), c));
    return qd + Dim::from_atom(make_binary(AtomNode::FloorDiv, rd, b));
  }
  if (auto e = exact_div(a, b)) return *e;
  if (auto k = constant_multiple(a, b)) return Dim(*k);
  return Dim::from_atom(make_binary(AtomNode::FloorDiv, a, b));
}

Dim floor_mod(const Dim &a, const Dim &b) {
  if (b.is_const()) {
    int64_t c = b.as_const();
    DISCO_CHECK(c != 0, "modulo by zero in shape expression ", a.str(), " % 0");
    if (c < 0) return -floor_mod(-a, Dim(-c));
    std::vector<Dim::Term> q, r;
    split_by_const(a, c, &q, &r);
    Dim rd = Dim::from_terms(std::move(r));
    if (rd.is_const()) return Dim(fmod_(rd.as_const(), c));
    return Dim::from_atom(make_binary(AtomNode::Mod, rd, b));
  }
  if (exact_div(a, b) || constant_multiple(a, b)) return Dim(0);
  return Dim::from_atom(make_binary(AtomNode::Mod, a, b));
}

namespace {
Dim min_max(const Dim &a, const Dim &b, bool is_min) {
  if (a == b) return a;
  Dim d = a - b;
  if (d.is_const()) return (d.as_const() < 0) == is_min ? a : b;
  const Dim &x = a < b ? a : b, &y = a < b ? b : a;
  return Dim::from_terms({Dim::Term{1, {make_binary(is_min ? AtomNode::Min : AtomNode::Max, x, y)}}});
}
}  // namespace

Dim min(const Dim &a, const Dim &b) { return min_max(a, b, true); }
Dim max(const Dim &a, const Dim &b) { return min_max(a, b, false); }

namespace {
int64_t eval_atom(const AtomNode &n, const SymbolValues &v) {
  switch (n.kind) {
    case AtomNode::Sym: {
      auto it = v.find(n.name);
      DISCO_CHECK(it != v.end(), "symbol '", n.name, "' has no value");
      return it->second;
    }
    case AtomNode::FloorDiv: {
      int64_t d = n.b.eval(v);
      DISCO_CHECK(d != 0, "division by zero evaluating ", n.key);
      return floor_div_int(n.a.eval(v), d);
    }
    case AtomNode::Mod: {
      int64_t d = n.b.eval(v);
      DISCO_CHECK(d != 0, "modulo by zero evaluating ", n.key);
      return fmod_(n.a.eval(v), d);
    }
    case AtomNode::Min: return std::min(n.a.eval(v), n.b.eval(v));
    case AtomNode::Max: return std::max(n.a.eval(v), n.b.eval(v));
  }
  return 0;
}
}  // namespace

int64_t Dim::eval(const SymbolValues &values) const {
  int64_t sum = 0;
  for (const auto &t : terms()) {
    int64_t p = t.coeff;
    for (const auto &a : t.atoms) p *= eval_atom(*a, values);
    sum += p;
  }
  return sum;
}

void Dim::collect_symbols(std::set<std::string> &out) const {
  for (const auto &t : terms())
    for (const auto &a : t.atoms) {
      if (a->kind == AtomNode::Sym) {
        out.insert(a->name);
      } else {
        a->a.collect_symbols(out);
        a->b.collect_symbols(out);
      }
    }
}

Dim Dim::substitute(const std::function<std::optional<Dim>(const std::string &)> &f) const {
  Dim sum(0);
  for (const auto &t : terms()) {
    Dim p(t.coeff);
    for (const auto &a : t.atoms) {
      switch (a->kind) {
        case AtomNode::Sym: {
          auto r = f(a->name);
          p = p * (r ? *r : Dim::from_atom(a));
          break;
        }
        case AtomNode::FloorDiv: p = p * floor_div(a->a.substitute(f), a->b.substitute(f)); break;
        case AtomNode::Mod: p = p * floor_mod(a->a.substitute(f), a->b.substitute(f)); break;
        case AtomNode::Min: p = p * min(a->a.substitute(f), a->b.substitute(f)); break;
        case AtomNode::Max: p = p * max(a->a.substitute(f), a->b.substitute(f)); break;
      }
    }
    sum = sum + p;
  }
  return sum;
}

std::string shape_str(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].str();
  return out + "]";
}

std::string dims_str(const std::vector<int64_t> &dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

Dim num_elements(const Shape &s) {
  Dim n(1);
  for (const auto &d : s) n = n * d;
  return n;
}

std::vector<int64_t> eval_shape(const Shape &s, const SymbolValues &values) {
  std::vector<int64_t> out(s.size());
  for (size_t d = 0; d < s.size(); ++d) out[d] = s[d].eval(values);
  return out;
}

}  // namespace disco
