// Einsum: the equation is parsed into one subscript list per input and one
// for the output; the output is the product of the inputs at the indices the
// subscripts name, summed over an RDom of the letters the output drops. A
// letter repeated in one input reads its diagonal; `...` stands for
// numpy-broadcast leading dims, right-aligned across the inputs.
#include <algorithm>
#include <map>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"

namespace disco {
namespace {

using Halide::Expr;

// One subscript list; kEllipsis marks where `...` stands.
constexpr char kEllipsis = '.';
using Subscripts = std::string;

struct Equation {
  std::vector<Subscripts> inputs;
  Subscripts output;
};

Subscripts parse_term(const NodeContext &c, const std::string &term) {
  Subscripts s;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (s.find(kEllipsis) != std::string::npos) c.fail("'...' appears twice in term '", term, "'");
      s += kEllipsis;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      s += term[i];
    } else {
      c.fail("unexpected character '", term[i], "' in equation term '", term, "'");
    }
  }
  return s;
}

// Without `->`, the output is `...` (if any input has it) followed by the
// letters that appear exactly once, in alphabetical order.
Equation parse_equation(const NodeContext &c, int num_inputs) {
  std::string eq;
  for (char ch : c.attrs().get_string("equation", "")) if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
  Equation e;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    e.inputs.push_back(parse_term(c, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(e.inputs.size()) != num_inputs)
    c.fail("equation '", eq, "' has ", e.inputs.size(), " input terms for ", num_inputs, " inputs");
  if (arrow != std::string::npos) {
    e.output = parse_term(c, eq.substr(arrow + 2));
    for (char ch : e.output)
      if (ch != kEllipsis && std::count(e.output.begin(), e.output.end(), ch) > 1)
        c.fail("output subscript '", ch, "' repeats");
    return e;
  }
  std::map<char, int> count;
  bool ellipsis = false;
  for (const auto &s : e.inputs)
    for (char ch : s) ch == kEllipsis ? (void)(ellipsis = true) : (void)++count[ch];
  if (ellipsis) e.output += kEllipsis;
  for (const auto &[ch, n] : count)
    if (n == 1) e.output += ch;
  return e;
}

// How many dims `...` covers in an input of rank `rank`.
int ellipsis_rank(const NodeContext &c, const Subscripts &s, int rank, int input) {
  bool has = s.find(kEllipsis) != std::string::npos;
  int letters = static_cast<int>(s.size()) - has;
  if (rank < letters || (!has && rank != letters))
    c.fail("input ", input, " has rank ", rank, ", its subscripts '", s, "' need ", letters, has ? " or more" : "");
  return rank - letters;
}

void infer_einsum(InferContext &c) {
  Equation e = parse_equation(c, c.num_inputs());
  std::map<char, Dim> extent;
  Shape ell;  // the broadcast `...` dims
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (c.dtype(i) != c.dtype(0)) c.fail("input ", i, " has dtype ", dtype_name(c.dtype(i)), ", input 0 has ", dtype_name(c.dtype(0)));
    const Shape &s = c.shape(i);
    int ne = ellipsis_rank(c, e.inputs[i], c.rank(i), i);
    int d = 0;
    for (char ch : e.inputs[i]) {
      if (ch == kEllipsis) {
        ell = c.broadcast(ell, Shape(s.begin() + d, s.begin() + d + ne));
        d += ne;
        continue;
      }
      auto it = extent.find(ch);
      if (it == extent.end()) extent.emplace(ch, s[d]);
      else c.require_equal(it->second, s[d], std::string("extent of subscript '") + ch + "'");
      ++d;
    }
  }
  if (!ell.empty() && e.output.find(kEllipsis) == std::string::npos)
    c.fail("the output drops the dims that '...' stands for");
  Shape out;
  for (char ch : e.output) {
    if (ch == kEllipsis) {
      out.insert(out.end(), ell.begin(), ell.end());
    } else if (!extent.count(ch)) {
      c.fail("output subscript '", ch, "' is in no input");
    } else {
      out.push_back(extent.at(ch));
    }
  }
  c.set_output(0, c.dtype(0), out);
}

void lower_einsum(LowerContext &c) {
  int n = static_cast<int>(c.node().inputs.size());
  Equation e = parse_equation(c, n);
  const Shape &os = c.out_shape(0);
  auto v = c.vars(static_cast<int>(os.size()));
  auto oi = c.exprs(v);
  // Each output letter's index, and the `...` indices with their extents.
  std::map<char, Expr> index;
  std::vector<Expr> ell_idx;
  Shape ell_shape;
  int ne_out = static_cast<int>(os.size()) - static_cast<int>(e.output.size()) +
               (e.output.find(kEllipsis) != std::string::npos);
  for (size_t p = 0, d = 0; p < e.output.size(); ++p) {
    if (e.output[p] == kEllipsis) {
      ell_idx.assign(oi.begin() + d, oi.begin() + d + ne_out);
      ell_shape.assign(os.begin() + d, os.begin() + d + ne_out);
      d += ne_out;
    } else {
      index[e.output[p]] = oi[d++];
    }
  }
  // The dropped letters, summed over one RDom.
  std::vector<char> summed;
  std::vector<Dim> summed_extents;
  for (int i = 0; i < n; ++i) {
    int ne = ellipsis_rank(c, e.inputs[i], c.in(i).rank(), i);
    int d = 0;
    for (char ch : e.inputs[i]) {
      if (ch == kEllipsis) {
        d += ne;
        continue;
      }
      if (!index.count(ch) && std::find(summed.begin(), summed.end(), ch) == summed.end()) {
        summed.push_back(ch);
        summed_extents.push_back(c.in(i).shape[d]);
      }
      ++d;
    }
  }
  if (!summed.empty()) {
    auto r = rdom_vars(make_rdom(c, summed_extents));
    for (size_t k = 0; k < summed.size(); ++k) index[summed[k]] = r[k];
  }
  Halide::Type acc = acc_type(c.out_dtype(0));
  Expr product;
  for (int i = 0; i < n; ++i) {
    const HTensor &t = c.in(i);
    int ne = ellipsis_rank(c, e.inputs[i], t.rank(), i);
    std::vector<Expr> idx;
    for (char ch : e.inputs[i]) {
      if (ch != kEllipsis) {
        idx.push_back(index.at(ch));
        continue;
      }
      // Right-aligned against the output's `...`, numpy-broadcast.
      for (int j = 0; j < ne; ++j) {
        const Dim &din = t.shape[idx.size()];
        const Dim &dout = ell_shape[ell_shape.size() - ne + j];
        Expr o = ell_idx[ell_idx.size() - ne + j];
        if (c.store().same_dim(din, dout)) idx.push_back(o);
        else if (c.store().canonical(din).is_const(1)) idx.push_back(0);
        else idx.push_back(Halide::select(c.dim(din) == 1, 0, o));
      }
    }
    Expr x = Halide::cast(acc, t.at(idx));
    product = product.defined() ? product * x : x;
  }
  if (summed.empty()) return c.define_output(0, v, product);
  Halide::Func sum = c.func("sum");
  auto lhs = reversed(v);
  sum(lhs) = Halide::cast(acc, 0);
  sum(lhs) += product;
  c.add_stage(sum, StageKind::Reduction, static_cast<int>(v.size()));
  c.define_output(0, v, sum(lhs));
}

}  // namespace

void register_einsum_ops(OpRegistry &r) { r.add("Einsum", 12, OpKind::Dot, infer_einsum, lower_einsum); }

}  // namespace disco
