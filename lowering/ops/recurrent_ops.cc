// Recurrent ops: RNN, GRU and LSTM (opsets 7 and 14: directions, layouts,
// activations with alpha/beta, clip, sequence_lens, initial states,
// peepholes, GRU's linear_before_reset, LSTM's input_forget).
//
// The input projection X·W^T + Wb is an ordinary reduction stage. The
// recurrence is one Func `state` over (slot, batch, direction, step) whose
// single update runs over an RDom (t, step) with step outermost, so steps run
// in order. A step needs whole vectors of the previous one (the sums over R),
// which pure vars of an update cannot express in sequence, so, as in Det, an
// inner counter t walks through the phases of one step and each t writes one
// slot. Per step, the slots are:
//   [0, H)        h
//   [H, 2H)       c (LSTM)
//   [2H, 5H+..)   gate g's recurrent sum at 2H + g*H (up to 4 gates)
//   [6H, 7H)      GRU's reset gate
// Step s + 1 holds the state after step s; step 0 holds the initial state.
#include <functional>
#include <string>
#include <vector>

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

enum class Cell { Rnn, Gru, Lstm };

Cell cell_of(const std::string &op) { return op == "RNN" ? Cell::Rnn : op == "GRU" ? Cell::Gru : Cell::Lstm; }
int num_gates(Cell k) { return k == Cell::Rnn ? 1 : k == Cell::Gru ? 3 : 4; }
int num_activations(Cell k) { return k == Cell::Rnn ? 1 : k == Cell::Gru ? 2 : 3; }

int num_directions(const NodeContext &c) {
  std::string d = c.attrs().get_string("direction", "forward");
  if (d == "forward" || d == "reverse") return 1;
  if (d == "bidirectional") return 2;
  c.fail("unknown direction '", d, "'");
}

// ---- inference ---------------------------------------------------------------

void infer_recurrent(InferContext &c) {
  Cell kind = cell_of(c.node().op_type);
  int G = num_gates(kind);
  DType t = c.dtype(0);
  if (!dtype_is_float(t)) c.fail("X must be a float tensor, got ", dtype_name(t));
  for (int i : {1, 2, 3, 5, 6, 7})
    if (c.has_input(i) && c.dtype(i) != t)
      c.fail("input ", i, " has dtype ", dtype_name(c.dtype(i)), ", X has ", dtype_name(t));
  if (c.rank(0) != 3 || c.rank(1) != 3 || c.rank(2) != 3)
    c.fail("X, W and R must be 3-D, got ", shape_str(c.shape(0)), ", ", shape_str(c.shape(1)), " and ",
           shape_str(c.shape(2)));
  bool batch_first = c.attrs().get_int("layout", 0) != 0;
  const Shape &x = c.shape(0), &w = c.shape(1), &r = c.shape(2);
  Dim T = batch_first ? x[1] : x[0], B = batch_first ? x[0] : x[1], I = x[2];
  Dim D = num_directions(c);
  Dim H = c.attrs().has("hidden_size") ? Dim(c.attrs().get_int("hidden_size")) : r[2];
  c.require_equal(w[0], D, "W dim 0 must be num_directions");
  c.require_equal(r[0], D, "R dim 0 must be num_directions");
  c.require_equal(w[1], Dim(G) * H, "W dim 1 must be " + std::to_string(G) + "*hidden_size");
  c.require_equal(r[1], Dim(G) * H, "R dim 1 must be " + std::to_string(G) + "*hidden_size");
  c.require_equal(w[2], I, "W dim 2 must be X's input size");
  c.require_equal(r[2], H, "R dim 2 must be hidden_size");
  auto expect = [&](int i, const Shape &want, const std::string &what) {
    if (!c.has_input(i)) return;
    const Shape &s = c.shape(i);
    if (s.size() != want.size()) c.fail(what, " must be ", shape_str(want), ", got ", shape_str(s));
    for (size_t k = 0; k < s.size(); ++k) c.require_equal(s[k], want[k], what + " dim " + std::to_string(k));
  };
  Shape state = batch_first ? Shape{B, D, H} : Shape{D, B, H};
  expect(3, {D, Dim(2 * G) * H}, "B");
  expect(4, {B}, "sequence_lens");
  expect(5, state, "initial_h");
  if (kind == Cell::Lstm) {
    expect(6, state, "initial_c");
    expect(7, {D, Dim(3) * H}, "P");
  }
  if (c.has_input(4) && c.dtype(4) != DType::I32 && c.dtype(4) != DType::I64)
    c.fail("sequence_lens must be int32, got ", dtype_name(c.dtype(4)));
  c.set_output(0, t, batch_first ? Shape{B, T, D, H} : Shape{T, D, B, H});
  if (c.has_output(1)) c.set_output(1, t, state);
  if (c.has_output(2) && kind == Cell::Lstm) c.set_output(2, t, state);
}

// ---- activations -------------------------------------------------------------

struct Act {
  std::string name;
  float alpha = 0, beta = 0;
};

bool uses_alpha(const std::string &n) {
  return n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" || n == "HardSigmoid" ||
         n == "Elu";
}
bool uses_beta(const std::string &n) { return n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid"; }

float default_alpha(const std::string &n) {
  if (n == "LeakyRelu") return 0.01f;
  if (n == "HardSigmoid") return 0.2f;
  return 1.0f;
}
float default_beta(const std::string &n) { return n == "HardSigmoid" ? 0.5f : n == "Affine" ? 0.0f : 1.0f; }

// Activations per direction. alpha and beta are consumed in order by the
// activations that take them (as onnxruntime does).
std::vector<std::vector<Act>> activations(LowerContext &c, Cell kind, int D) {
  int n = num_activations(kind);
  std::vector<std::string> names;
  const AttrReader &a = c.attrs();
  if (a.has("activations")) {
    names = a.get("activations").strings;
    if (static_cast<int>(names.size()) == n && D == 2) names.insert(names.end(), names.begin(), names.end());
    if (static_cast<int>(names.size()) != n * D)
      c.fail("expected ", n * D, " activations, got ", names.size());
  } else {
    for (int d = 0; d < D; ++d) {
      if (kind == Cell::Rnn) {
        names.push_back("Tanh");
      } else {
        names.push_back("Sigmoid");
        names.push_back("Tanh");
        if (kind == Cell::Lstm) names.push_back("Tanh");
      }
    }
  }
  std::vector<float> alphas = a.has("activation_alpha") ? a.get_floats("activation_alpha") : std::vector<float>{};
  std::vector<float> betas = a.has("activation_beta") ? a.get_floats("activation_beta") : std::vector<float>{};
  size_t ai = 0, bi = 0;
  std::vector<std::vector<Act>> out(D);
  for (int i = 0; i < n * D; ++i) {
    Act act{names[i], default_alpha(names[i]), default_beta(names[i])};
    if (uses_alpha(act.name) && ai < alphas.size()) act.alpha = alphas[ai++];
    if (uses_beta(act.name) && bi < betas.size()) act.beta = betas[bi++];
    out[i / n].push_back(act);
  }
  return out;
}

Expr apply(LowerContext &c, const Act &a, const Expr &x) {
  Halide::Type t = x.type();
  Expr al = Halide::cast(t, a.alpha), be = Halide::cast(t, a.beta), zero = Halide::cast(t, 0),
       one = Halide::cast(t, 1);
  const std::string &n = a.name;
  if (n == "Tanh") return math::tanh(x);
  if (n == "Sigmoid") return math::sigmoid(x);
  if (n == "Relu") return Halide::max(x, zero);
  if (n == "Affine") return al * x + be;
  if (n == "LeakyRelu") return Halide::select(x < zero, al * x, x);
  if (n == "ThresholdedRelu") return Halide::select(x > al, x, zero);
  if (n == "ScaledTanh") return al * math::tanh(be * x);
  if (n == "HardSigmoid") return Halide::clamp(al * x + be, zero, one);
  if (n == "Elu") return Halide::select(x < zero, al * math::expm1(x), x);
  if (n == "Softsign") return x / (one + Halide::abs(x));
  if (n == "Softplus") return math::softplus(x);
  c.fail("unsupported activation '", n, "'");
}

// ---- lowering ----------------------------------------------------------------

// One phase of a step: `count` writes, each to slot dst(e) with value(e).
struct Phase {
  Expr count;
  std::function<Expr(const Expr &e)> dst, value;
};

void lower_recurrent(LowerContext &c) {
  Cell kind = cell_of(c.node().op_type);
  const int G = num_gates(kind);
  const int D = num_directions(c);
  const std::string direction = c.attrs().get_string("direction", "forward");
  const bool batch_first = c.attrs().get_int("layout", 0) != 0;
  const bool lbr = kind == Cell::Gru && c.attrs().get_int("linear_before_reset", 0) != 0;
  const bool input_forget = kind == Cell::Lstm && c.attrs().get_int("input_forget", 0) != 0;
  const bool has_clip = c.attrs().has("clip");
  const float clip = c.attrs().get_float("clip", 0.0f);
  const auto acts = activations(c, kind, D);

  const HTensor &X = c.in(0), &W = c.in(1), &R = c.in(2);
  Halide::Type ft = acc_type(X.dtype);
  const Dim &Td = batch_first ? X.shape[1] : X.shape[0];
  const Dim &Bd = batch_first ? X.shape[0] : X.shape[1];
  const Dim &Hd = R.shape[2];
  Expr T = c.dim(Td), H = c.dim(Hd), I = c.dim(X.shape[2]);
  Expr H1 = Halide::max(H, 1);
  auto f = [&](const Expr &e) { return Halide::cast(ft, e); };
  auto clamp_to = [&](const Expr &e, const Expr &n) { return Halide::clamp(e, 0, Halide::max(n - 1, 0)); };

  // Per-direction choice of an activation applied to x.
  auto act = [&](int k, Expr x, const Expr &d) {
    if (has_clip) x = Halide::clamp(x, f(-clip), f(clip));
    Expr r = apply(c, acts[0][k], x);
    return D == 2 ? Halide::select(d == 0, r, apply(c, acts[1][k], x)) : r;
  };
  auto reversed_dir = [&](const Expr &d) -> Expr {
    if (direction == "reverse") return Halide::cast(Halide::Bool(), true);
    if (direction == "bidirectional") return d == 1;
    return Halide::cast(Halide::Bool(), false);
  };
  auto seq_len = [&](const Expr &b) -> Expr {
    if (!c.has_input(4)) return T;
    return Halide::clamp(Halide::cast(Halide::Int(32), c.in(4).at({clamp_to(b, c.dim(Bd))})), 0, T);
  };
  // The time index that step s of direction d reads and writes.
  auto time_of = [&](const Expr &s, const Expr &b, const Expr &d) {
    return Halide::select(reversed_dir(d), seq_len(b) - 1 - s, s);
  };

  // Input projection: xw(gh, b, d, time) = X[time, b]·W[d, gh] + Wb[d, gh].
  Var gh("gh"), b("b"), d("d"), tv("tv"), j("j"), s("s");
  Func xw = c.func("xw");
  xw(gh, b, d, tv) = c.has_input(3) ? f(c.in(3).at({d, gh})) : f(0);
  Halide::RDom ri(0, I);
  Expr xval = batch_first ? X.at({b, tv, ri.x}) : X.at({tv, b, ri.x});
  xw(gh, b, d, tv) += f(xval) * f(W.at({d, gh, ri.x}));
  c.add_stage(xw, StageKind::Reduction, 4);

  // Initial state.
  auto initial = [&](int input, const Expr &jj) -> Expr {
    if (!c.has_input(input)) return f(0);
    Expr hh = clamp_to(jj, H);
    return f(batch_first ? c.in(input).at({b, d, hh}) : c.in(input).at({d, b, hh}));
  };
  Func st = c.func("state");
  {
    Expr init = Halide::select(s == 0 && j < H, initial(5, j), f(0));
    if (kind == Cell::Lstm) init = Halide::select(s == 0 && j >= H && j < 2 * H, initial(6, j - H), init);
    st(j, b, d, s) = init;
  }

  // One step: RDom (t, step), step outermost.
  std::vector<Phase> phases;
  Expr step;  // the step being run (an RVar)
  auto prev = [&](const Expr &slot) { return st(slot, b, d, step); };
  auto cur = [&](const Expr &slot) { return st(slot, b, d, step + 1); };
  auto tt = [&]() { return clamp_to(time_of(step, b, d), T); };
  auto xgate = [&](int g, const Expr &jj) { return xw(g * H + jj, b, d, tt()); };
  auto acc = [&](int g, const Expr &jj) { return cur(2 * H + g * H + jj); };
  auto rbias = [&](int g, const Expr &jj) -> Expr {
    return c.has_input(3) ? f(c.in(3).at({d, G * H + g * H + jj})) : f(0);
  };
  auto peep = [&](int g, const Expr &jj) -> Expr {
    return c.has_input(7) ? f(c.in(7).at({d, g * H + jj})) : f(0);
  };
  // Recurrent sums for gates [g0, g0 + n) over h_prev (optionally scaled by `scale`).
  auto sum_phase = [&](int g0, int n, bool reset_scaled) {
    Phase p;
    p.count = n * H * H;
    p.dst = [&, g0, n](const Expr &e) { return 2 * H + g0 * H + clamp_to(e / H1, n * H); };
    p.value = [&, g0, n, reset_scaled](const Expr &e) {
      Expr row = clamp_to(e / H1, n * H), k = clamp_to(e % H1, H);
      Expr hk = prev(k);
      if (reset_scaled) hk = hk * cur(6 * H + k);
      return cur(2 * H + g0 * H + row) + f(R.at({d, g0 * H + row, k})) * hk;
    };
    return p;
  };
  auto elem_phase = [&](const Expr &base, std::function<Expr(const Expr &)> v) {
    Phase p;
    p.count = H;
    p.dst = [&, base](const Expr &e) { return base + clamp_to(e, H); };
    p.value = [&, v](const Expr &e) { return v(clamp_to(e, H)); };
    return p;
  };
  if (kind == Cell::Rnn) {
    phases.push_back(sum_phase(0, 1, false));
    phases.push_back(elem_phase(Expr(0), [&](const Expr &jj) {
      return act(0, xgate(0, jj) + acc(0, jj) + rbias(0, jj), d);
    }));
  } else if (kind == Cell::Gru) {
    // Gates z, r, h. Without linear_before_reset, h's sum needs r first.
    phases.push_back(sum_phase(0, lbr ? 3 : 2, false));
    phases.push_back(elem_phase(6 * H, [&](const Expr &jj) {
      return act(0, xgate(1, jj) + acc(1, jj) + rbias(1, jj), d);
    }));
    if (!lbr) phases.push_back(sum_phase(2, 1, true));
    phases.push_back(elem_phase(Expr(0), [&](const Expr &jj) {
      Expr z = act(0, xgate(0, jj) + acc(0, jj) + rbias(0, jj), d);
      Expr r = cur(6 * H + jj);
      Expr hh = lbr ? act(1, xgate(2, jj) + r * (acc(2, jj) + rbias(2, jj)), d)
                    : act(1, xgate(2, jj) + acc(2, jj) + rbias(2, jj), d);
      return (f(1) - z) * hh + z * prev(jj);
    }));
  } else {
    // Gates i, o, f, c; peepholes i, o, f.
    phases.push_back(sum_phase(0, 4, false));
    phases.push_back(elem_phase(H, [&](const Expr &jj) {
      Expr cp = prev(H + jj);
      Expr i = act(0, xgate(0, jj) + acc(0, jj) + rbias(0, jj) + peep(0, jj) * cp, d);
      Expr fg = input_forget ? f(1) - i : act(0, xgate(2, jj) + acc(2, jj) + rbias(2, jj) + peep(2, jj) * cp, d);
      Expr cc = act(1, xgate(3, jj) + acc(3, jj) + rbias(3, jj), d);
      return fg * cp + i * cc;
    }));
    phases.push_back(elem_phase(Expr(0), [&](const Expr &jj) {
      Expr cn = cur(H + jj);
      Expr o = act(0, xgate(1, jj) + acc(1, jj) + rbias(1, jj) + peep(1, jj) * cn, d);
      return o * act(2, cn, d);
    }));
  }

  Expr total = 0;
  for (const auto &p : phases) total = total + p.count;
  Halide::RDom r({{0, total}, {0, T}});
  Expr t = r.x;
  step = r.y;
  Expr dst, value;
  Expr begin = 0;
  for (const auto &p : phases) {
    Expr e = Halide::max(t - begin, 0);
    Expr pd = p.dst(e), pv = p.value(e);
    dst = dst.defined() ? Halide::select(t >= begin, pd, dst) : pd;
    value = value.defined() ? Halide::select(t >= begin, pv, value) : pv;
    begin = begin + p.count;
  }
  dst = clamp_to(dst, 7 * H);
  // Past a batch's sequence length the state stays as it was.
  Expr active = step < seq_len(b);
  st(dst, b, d, step + 1) = Halide::select(active, value, st(dst, b, d, step));
  c.add_stage(st, StageKind::Other, 4);

  // Outputs.
  if (c.has_output(0)) {
    Var ot("t"), oh("h");
    Expr len = seq_len(b);
    Expr so = Halide::select(reversed_dir(d), len - 1 - ot, ot);
    Expr y = Halide::select(ot < len, st(oh, b, d, clamp_to(so, T) + 1), f(0));
    if (batch_first)
      c.define_output(0, {b, ot, d, oh}, y);
    else
      c.define_output(0, {ot, d, b, oh}, y);
  }
  auto state_out = [&](int out, const Expr &base) {
    if (!c.has_output(out)) return;
    Var oh("h");
    Expr v = st(base + oh, b, d, T);
    if (batch_first)
      c.define_output(out, {b, d, oh}, v);
    else
      c.define_output(out, {d, b, oh}, v);
  };
  state_out(1, Expr(0));
  if (kind == Cell::Lstm) state_out(2, H);
}

}  // namespace

void register_recurrent_ops(OpRegistry &r) {
  for (const char *op : {"RNN", "GRU", "LSTM"}) r.add(op, 7, OpKind::Opaque, infer_recurrent, lower_recurrent);
}

}  // namespace disco
