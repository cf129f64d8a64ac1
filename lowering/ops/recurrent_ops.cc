// Recurrent ops: RNN, GRU and LSTM (opsets 7 and 14: directions, layouts,
// activations with alpha/beta, clip, sequence_lens, initial states,
// peepholes, GRU's linear_before_reset, LSTM's input_forget).
//
// The input projection X·W^T + Wb (+ Rb) of every step is one stage
// (RecurrentInput) over X's rows in memory order, its product a Reduction. The recurrence is one Func
// rec(j % 16, b % 4, j / 16, q, b / 4, d, s) (Recurrence), a sum or a state
// of hidden unit j for phase q, batch b, direction d and step s, stored in
// contiguous tiles of 16 units by 4 rows (recurrent_weight_layout.h); step
// s + 1 holds what step s computed, step 0 the initial state. A step runs
// its phases in order, each a row q:
//   product phases      row q = the gate's recurrent sum over a source
//                       (h of the last step; GRU without linear_before_reset:
//                       r * h), started from the projection (or a bias);
//   elementwise phases  row q = a gate function of the rows before
//                       (LSTM: c, then h; GRU and RNN: h).
// Its one update runs over an RDom (j % 16, k, j / 16, loop, step), step
// outermost, and writes rec(j, q, ..., step + 1) for the loops of each phase
// q in order: j % 16 is the vector dim of the template
// (schedules/x86_recurrent_schedule.h), an RVar since the products read other
// hidden units k of a state row (Halide's pure vars may not); k runs over
// chunks of up to 16 hidden units, each statement adding a chunk's terms,
// inside a tile's loop (j / 16), so that a tile reads its panel of R over
// every k as one stream. A product phase's sums start in a loop of their own
// at k = 0; elementwise phases run at k = 0 only. The batch loops (pure
// vars) may sit anywhere inside the phase loop. Constant W and R are laid
// out at compile time as the kernels read them
// (lowering/recurrent_weight_layout.h); others are transposed once a run.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lowering/infer_context.h"
#include "lowering/lower_context.h"
#include "lowering/math_library.h"
#include "lowering/op_registry.h"
#include "lowering/ops/op_helpers.h"
#include "lowering/recurrent_projection.h"
#include "lowering/recurrent_weight_layout.h"

namespace disco {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Terms of k per statement of a product phase: the first that divides the
// hidden size (see lower_recurrent).
constexpr int kRecurrentChunks[] = {16, 8, 4, 2, 1};

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
  const bool laid_out = has_transposed_recurrent_weights(c.attrs());
  // X's projections in place of X and no W (recurrent_projection.h).
  const bool projected = has_projected_recurrent_input(c.attrs());
  if (projected && c.has_input(1)) c.fail("internal: a node reading X's projections has a W");
  if (c.rank(0) != 3 || (!projected && c.rank(1) != (laid_out ? 4 : 3)) || c.rank(2) != (laid_out ? 5 : 3))
    c.fail("X, W and R must be 3-D, got ", shape_str(c.shape(0)), ", ",
           projected ? std::string("(projected)") : shape_str(c.shape(1)), " and ", shape_str(c.shape(2)));
  bool batch_first = c.attrs().get_int("layout", 0) != 0;
  // R as the op reads it, [D, G*H, H], also when laid out for the kernels
  // (recurrent_weight_layout.h).
  const Shape &x = c.shape(0);
  Shape r = c.shape(2);
  if (laid_out) r = {r[0], r[1] * r[2] * r[4], r[3]};  // [D, G, H / P, H (k), P (j)]
  Dim T = batch_first ? x[1] : x[0], B = batch_first ? x[0] : x[1], I = x[2];
  Dim D = num_directions(c);
  Dim H = c.attrs().has("hidden_size") ? Dim(c.attrs().get_int("hidden_size")) : r[2];
  c.require_equal(r[0], D, "R dim 0 must be num_directions");
  c.require_equal(r[1], Dim(G) * H, "R dim 1 must be " + std::to_string(G) + "*hidden_size");
  c.require_equal(r[2], H, "R dim 2 must be hidden_size");
  if (projected) {
    c.require_equal(I, D * Dim(G) * H,
                    "the projections' dim 2 must be num_directions*" + std::to_string(G) + "*hidden_size");
  } else {
    // W as the op reads it, [D, G*H, I], also when laid out in panels.
    Shape w = c.shape(1);
    if (laid_out) w = {w[0], w[1] * w[3], w[2]};
    c.require_equal(w[0], D, "W dim 0 must be num_directions");
    c.require_equal(w[1], Dim(G) * H, "W dim 1 must be " + std::to_string(G) + "*hidden_size");
    c.require_equal(w[2], I, "W dim 2 must be X's input size");
  }
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
    if (static_cast<int>(names.size()) != n * D) c.fail("expected ", n * D, " activations, got ", names.size());
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
  Expr al = Halide::cast(t, a.alpha), be = Halide::cast(t, a.beta), zero = Halide::cast(t, 0), one = Halide::cast(t, 1);
  const std::string &n = a.name;
  if (n == "Tanh") return math::tanh(x);
  if (n == "Sigmoid") return math::sigmoid(x);
  if (n == "Relu") return math::max(x, zero);
  if (n == "Affine") return al * x + be;
  if (n == "LeakyRelu") return Halide::select(x < zero, al * x, x);
  if (n == "ThresholdedRelu") return Halide::select(x > al, x, zero);
  if (n == "ScaledTanh") return al * math::tanh(be * x);
  if (n == "HardSigmoid") return math::clamp(al * x + be, zero, one);
  if (n == "Elu") return Halide::select(x < zero, al * math::expm1(x), x);
  if (n == "Softsign") return x / (one + Halide::abs(x));
  if (n == "Softplus") return math::softplus(x);
  c.fail("unsupported activation '", n, "'");
}

// ---- lowering ----------------------------------------------------------------

// One phase of a step, a row q of the recurrence (see the top of the file).
struct Phase {
  // A product phase: the recurrent sum of gate `gate` over `source`(k).
  // Its sum starts from init(j).
  int gate = -1;
  std::function<Expr(const Expr &k)> source;
  std::function<Expr(const Expr &j)> init;
  // An elementwise phase: the state row's value at j.
  std::function<Expr(const Expr &j)> value;
  bool product() const { return gate >= 0; }
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
  const bool transposed = has_transposed_recurrent_weights(c.attrs());
  const int panel = recurrent_panel_width(c.attrs());
  const auto acts = activations(c, kind, D);

  // Input 0 is X, or X's projections with W omitted (recurrent_projection.h).
  const bool projected = has_projected_recurrent_input(c.attrs());
  const HTensor &X = c.in(0), &R = c.in(2);
  Halide::Type ft = acc_type(X.dtype);
  const Dim &Td = batch_first ? X.shape[1] : X.shape[0];
  const Dim &Bd = batch_first ? X.shape[0] : X.shape[1];
  const Dim &Hd = transposed ? R.shape[3] : R.shape[2];  // [D, G, H / P, H, P] or [D, G*H, H]
  Expr T = c.dim(Td), B = c.dim(Bd), H = c.dim(Hd), I = c.dim(X.shape[2]);
  auto f = [&](const Expr &e) { return Halide::cast(ft, e); };
  auto clamp_to = [&](const Expr &e, const Expr &n) { return Halide::clamp(e, 0, Halide::max(n - 1, 0)); };

  // Per-direction choice of an activation applied to x; one expression when
  // both directions use the same.
  auto same_act = [](const Act &a, const Act &b) { return a.name == b.name && a.alpha == b.alpha && a.beta == b.beta; };
  auto act = [&](int k, Expr x, const Expr &d) {
    if (has_clip) x = math::clamp(x, f(-clip), f(clip));
    Expr r = apply(c, acts[0][k], x);
    return D == 2 && !same_act(acts[0][k], acts[1][k]) ? Halide::select(d == 0, r, apply(c, acts[1][k], x)) : r;
  };
  auto reversed_dir = [&](const Expr &d) -> Expr {
    if (direction == "reverse") return Halide::cast(Halide::Bool(), true);
    if (direction == "bidirectional") return d == 1;
    return Halide::cast(Halide::Bool(), false);
  };
  auto seq_len = [&](const Expr &b) -> Expr {
    if (!c.has_input(4)) return T;
    return Halide::clamp(Halide::cast(Halide::Int(32), c.in(4).at({clamp_to(b, B)})), 0, T);
  };
  // The time index that step s of direction d reads and writes.
  auto time_of = [&](const Expr &s, const Expr &b, const Expr &d) {
    return Halide::select(reversed_dir(d), seq_len(b) - 1 - s, s);
  };
  // X's rows in memory order: row m of [T*B, I] (layout 0) or [B*T, I].
  auto row_of = [&](const Expr &t, const Expr &b) { return batch_first ? b * T + t : t * B + b; };

  Var j("j"), q("q"), b("b"), d("d"), s("s"), gh("gh"), m("m"), kv("k");
  // W and R read with a vector of gate rows contiguous: stored so at
  // compile time (recurrent_weight_layout.h), else transposed here once a run.
  auto gate_major = [&](const HTensor &w, const std::string &name) -> std::function<Expr(Expr, Expr, Expr)> {
    if (transposed && w.rank() == 4)
      return [&w, panel](const Expr &dd, const Expr &k, const Expr &g) { return w.at({dd, g / panel, k, g % panel}); };
    if (transposed) return [&w](const Expr &dd, const Expr &k, const Expr &g) { return w.at({dd, k, g}); };
    Func t = c.func(name);
    t(gh, kv, d) = w.at({d, gh, kv});
    c.add_stage(t, StageKind::Other, 3);
    return [t](const Expr &dd, const Expr &k, const Expr &g) { return t(g, k, dd); };
  };
  // The recurrence's hidden units j are tiles of Lj (the state layout,
  // recurrent_weight_layout.h); its update's j is jflat, over its RVars
  // jparts (lane, tile); j as (lane, panel) of panels P wide.
  constexpr int Lj = kRecurrentStateLanes;
  const int Lb = recurrent_state_rows(c.f32_lanes());
  constexpr int tile_min = kRecurrentTileMinRows;
  Expr jflat;
  std::vector<Expr> jparts;
  auto split_j = [&](const Expr &jj, int P) -> std::pair<Expr, Expr> {
    if (jj.same_as(jflat) && P == Lj) return {jparts[0], jparts[1]};
    return {jj % P, jj / P};
  };
  // R by gate in panels, Rt(d, g, k, j) = R[d, g*H + j, k] stored at
  // [d, g, j / P, k, j % P]: a tile of the recurrence (P = Lj units of j)
  // reads its R rows over every k as one contiguous stream.
  std::function<Expr(Expr, Expr, Expr, Expr)> Rt;
  if (transposed) {
    const int P = static_cast<int>(R.shape[4].as_const());
    Rt = [&, P](const Expr &dd, const Expr &g, const Expr &k, const Expr &jj) {
      auto [lane, panel] = split_j(jj, P);
      return R.at({dd, g, panel, k, lane});
    };
  } else {
    // Transposed once a run: in panels of Lj where H is whole panels.
    const int P = Hd.is_const() && Hd.as_const() % Lj == 0 ? Lj : 1;
    Var rg("g"), rp("p");
    Func t = c.func("r_by_gate");
    t(j, kv, rp, rg, d) = R.at({d, rg * H + rp * P + j, kv});
    c.add_stage(t, StageKind::Other, 5);
    Rt = [&, t, P](const Expr &dd, const Expr &g, const Expr &k, const Expr &jj) {
      if (P == 1) return t(0, k, jj, g, dd);
      auto [lane, panel] = split_j(jj, P);
      return t(lane, k, panel, g, dd);
    };
  }

  // Input projection for every step: xw(gh, m, d) = X[m]·W[d, gh] + Wb[d, gh]
  // (+ Rb[d, gh], except for the gate GRU's linear_before_reset multiplies by r).
  auto bias = [&](const Expr &dd, const Expr &i) { return f(c.in(3).at({dd, i})); };
  // The product is a stage of its own (a Reduction), so that a template can
  // compute it tile by tile in registers; rows past the last are read clamped.
  Func xw = c.func("input_projection");
  if (!projected) {
    Func xsum = c.func("input_product");
    const HTensor &W = c.in(1);
    // A template may compute the projection in tiles of gate rows that run
    // past G*H unless W's panels are those tiles (a width below G*H divides it).
    const bool tiled_panels = transposed && W.rank() == 4 && W.shape[1].is_const() && W.shape[1].as_const() > 1;
    auto Wt = [&, read = gate_major(W, "w_by_input")](const Expr &dd, const Expr &k, const Expr &g) {
      return tiled_panels ? read(dd, k, g) : read(dd, k, clamp_to(g, G * H));
    };
    // The direction as the weights' index, promised in [0, D), so that no
    // template's loop over it can widen W's required region: the x86 one's
    // direction fused outside its row tasks (task / tasks-per-direction, an
    // interval bounds inference cannot bound) once ran it to -2.
    const Expr dw = Halide::unsafe_promise_clamped(d, 0, D - 1);
    Halide::RDom ri(0, I);
    Expr B1 = Halide::max(B, 1), T1 = Halide::max(T, 1), mc = clamp_to(m, T * B);
    Expr xval = batch_first ? X.at({mc / T1, mc % T1, ri.x}) : X.at({mc / B1, mc % B1, ri.x});
    xsum(gh, m, d) = f(0);
    xsum(gh, m, d) += f(xval) * f(Wt(dw, ri.x, gh));
    Expr init = f(0);
    if (c.has_input(3)) {
      Expr rb = bias(dw, G * H + gh);
      if (lbr) rb = Halide::select(gh >= 2 * H, f(0), rb);
      init = bias(dw, gh) + rb;
    }
    xw(gh, m, d) = init + xsum(gh, m, d);
    c.add_stage(xsum, StageKind::Reduction, 3);
    c.add_stage(xw, StageKind::RecurrentInput, 3).directions = D;
  }

  // The recurrence rec(j % Lj, b % Lb, j / Lj, q, b / Lb, d, s), Lj and Lb
  // the state tile (recurrent_weight_layout.h): phase q's sum or state of
  // hidden unit j and batch row b after step s - 1 (s = 0: the initial
  // state, in the state rows). A tile of Lj hidden units by Lb batch rows is
  // contiguous, so a template's statement over it is one dense vector.
  // Hidden units past H (H not a multiple of Lj) and rows past the batch
  // are computed from clamped reads and never output.
  Var jl("j_l"), jb("j_b"), bi("b_i"), bo("b_o");
  const Expr bb = bo * Lb + bi;  // the batch row
  Func rec = c.func("recurrence");
  Expr step;  // the step being run (an RVar)
  auto rec_at = [&](const Expr &jj, const Expr &row, const Expr &at) -> Expr {
    auto [lane, tile] = split_j(jj, Lj);
    return rec(lane, bi, tile, row, bo, d, at);
  };
  // j as weights read it: clamped unless H is whole tiles.
  const bool whole_tiles = Hd.is_const() && Hd.as_const() % Lj == 0;
  auto jw = [&](const Expr &jj) { return whole_tiles ? jj : clamp_to(jj, H); };
  auto sum_at = [&](int row, const Expr &jj) { return rec_at(jj, row, step + 1); };
  auto state_at = [&](int row, const Expr &jj, const Expr &at) { return rec_at(jj, row, at); };
  // xw's rows of rows past the batch are rows X does not have (its reads
  // are clamped).
  auto xgate = [&](int g, const Expr &jj) -> Expr {
    const Expr t = clamp_to(time_of(step, bb, d), T);
    if (projected) {
      const Expr bc = clamp_to(bb, B), col = (d * G + g) * H + jw(jj);
      return f(batch_first ? X.at({bc, t, col}) : X.at({t, bc, col}));
    }
    return xw(g * H + jw(jj), row_of(t, bb), d);
  };
  auto rbias = [&](int g, const Expr &jj) -> Expr { return c.has_input(3) ? bias(d, G * H + g * H + jw(jj)) : f(0); };
  auto peep = [&](int g, const Expr &jj) -> Expr {
    return c.has_input(7) ? f(c.in(7).at({d, g * H + jw(jj)})) : f(0);
  };

  std::vector<Phase> phases;
  int h_row = -1, c_row = -1;
  auto product = [&](int g, std::function<Expr(const Expr &)> source, std::function<Expr(const Expr &)> init) {
    Phase p;
    p.gate = g;
    p.source = std::move(source);
    p.init = std::move(init);
    phases.push_back(p);
    return static_cast<int>(phases.size()) - 1;
  };
  auto elementwise = [&](std::function<Expr(const Expr &)> value) {
    Phase p;
    p.value = std::move(value);
    phases.push_back(p);
    return static_cast<int>(phases.size()) - 1;
  };
  // The last step's h, read by every product over h.
  auto h_prev = [&](const Expr &k) { return state_at(h_row, k, step); };
  auto from_x = [&](int g) { return [&, g](const Expr &jj) { return xgate(g, jj); }; };
  if (kind == Cell::Rnn) {
    const int a = product(0, h_prev, from_x(0));
    h_row = elementwise([&, a](const Expr &jj) { return act(0, sum_at(a, jj), d); });
  } else if (kind == Cell::Gru) {
    // Gates z, r, h. Without linear_before_reset, h's sum is over r * h.
    const int z = product(0, h_prev, from_x(0));
    const int r = product(1, h_prev, from_x(1));
    if (lbr) {
      const int n = product(2, h_prev, [&](const Expr &jj) { return rbias(2, jj); });
      h_row = elementwise([&, z, r, n](const Expr &jj) {
        Expr zz = act(0, sum_at(z, jj), d), rr = act(0, sum_at(r, jj), d);
        Expr hh = act(1, xgate(2, jj) + rr * sum_at(n, jj), d);
        return (f(1) - zz) * hh + zz * h_prev(jj);
      });
    } else {
      const int rh = elementwise([&, r](const Expr &jj) { return act(0, sum_at(r, jj), d) * h_prev(jj); });
      const int n = product(
          2, [&, rh](const Expr &k) { return state_at(rh, k, step + 1); }, from_x(2));
      h_row = elementwise([&, z, n](const Expr &jj) {
        Expr zz = act(0, sum_at(z, jj), d), hh = act(1, sum_at(n, jj), d);
        return (f(1) - zz) * hh + zz * h_prev(jj);
      });
    }
  } else {
    // Gates i, o, f, c; peepholes i, o, f.
    for (int g = 0; g < 4; ++g) product(g, h_prev, from_x(g));
    c_row = elementwise([&](const Expr &jj) {
      Expr cp = state_at(c_row, jj, step);
      Expr i = act(0, sum_at(0, jj) + peep(0, jj) * cp, d);
      Expr fg = input_forget ? f(1) - i : act(0, sum_at(2, jj) + peep(2, jj) * cp, d);
      Expr cc = act(1, sum_at(3, jj), d);
      return fg * cp + i * cc;
    });
    h_row = elementwise([&](const Expr &jj) {
      Expr cn = state_at(c_row, jj, step + 1);
      Expr o = act(0, sum_at(1, jj) + peep(1, jj) * cn, d);
      return o * act(2, cn, d);
    });
  }
  const int Q = static_cast<int>(phases.size());

  // Initial state in the state rows of step 0.
  auto initial = [&](int input) -> Expr {
    if (!c.has_input(input)) return f(0);
    Expr hh = clamp_to(jb * Lj + jl, H), bc = clamp_to(bb, B);
    return f(batch_first ? c.in(input).at({bc, d, hh}) : c.in(input).at({d, bc, hh}));
  };
  // Only step 0's rows are given values: every later row a step reads is
  // one the recurrence wrote (a pure definition over every step wrote the
  // whole buffer, (T + 1) x phases x the batch's tiles, once a run).
  {
    rec(jl, bi, jb, q, bo, d, s) = Halide::undef(ft);
    Expr init = Halide::select(q == h_row, initial(5), f(0));
    if (c_row >= 0) init = Halide::select(q == c_row, initial(6), init);
    rec(jl, bi, jb, q, bo, d, 0) = init;
  }

  // One step: RDom (jl, k, jb, loop, step) or (jl, k, loop, jb, step) (below), step outermost, over the loops of the
  // phases: a product phase's row starts from its init at k = 0 in a loop of
  // its own (so the sums' loop does no select), then sums over every k; an
  // elementwise phase runs at k = 0 only. j is an RVar, not a pure var: the
  // products read other hidden units of rec's first dim.
  struct Loop {
    int row;
    enum { Init, Sum, Value } what;
  };
  std::vector<Loop> loops;
  for (int p = 0; p < Q; ++p) {
    if (phases[p].product()) {
      loops.push_back({p, Loop::Init});
      loops.push_back({p, Loop::Sum});
    } else {
      loops.push_back({p, Loop::Value});
    }
  }
  const int L = static_cast<int>(loops.size());
  // A product phase's statement adds `chunk` terms of k (the largest of
  // kRecurrentChunks dividing a constant H), in order: its sum is read and
  // written once per chunk, not per k (Halide cannot keep the sums in
  // registers over all of k: j is an RVar and may not be reordered inside k),
  // and within the statement it is one register (the template's vectors of
  // j are independent chains).
  int chunk = 1;
  if (Hd.is_const())
    for (int n : kRecurrentChunks)
      if (Hd.as_const() % n == 0) {
        chunk = n;
        break;
      }
  // A batch row's products in a step (2 G H^2 flops) and R's bytes (4 G H^2)
  // where H is constant (0 where not: then no thread shares a direction's
  // tiles, below).
  const double h_units = Hd.is_const() ? static_cast<double>(Hd.as_const()) : 0.0;
  const double row_step_flops = 2.0 * G * h_units * h_units, r_bytes = 4.0 * G * h_units * h_units;
  // The RDom's order is the step's: for a tile of hidden units, its phases
  // in turn, where a tile's phases read only its own units and the last
  // step's h (all but GRU without linear_before_reset, whose h gate sums
  // over every unit's r * h) and one direction's threads may share the
  // tiles. A step is then one parallel loop of tiles, not one a phase
  // (2G + 2), and a fork and join a step pays from a smaller step on
  // (parallel_step_flops below): on two threads 1.2-1.6x faster (LSTM, H 128
  // at batch 16, H 256 and 512 at batch 1 to 8; GRU, H 384 at batch 1 to 8),
  // on one within 10% either way. Otherwise each phase over every tile in
  // turn: two directions (a thread each) ran 1-4% faster so (the taggers),
  // and so does a GRU whose row's step passes kWithinTilesGruRowFlops (H 512
  // within tiles: 1.08-1.13x one thread's time at batch 16, the same on two;
  // 1.25x faster on two at batch 2; recurrent-threads-2026-12-06.md).
  constexpr double kWithinTilesGruRowFlops = 1.1e6;  // H up to 428
  const bool phases_within_tiles = D == 1 && Hd.is_const() && !(kind == Cell::Gru && !lbr) &&
                                   (kind != Cell::Gru || row_step_flops <= kWithinTilesGruRowFlops);
  const int tile_dim = phases_within_tiles ? 3 : 2, loop_dim = phases_within_tiles ? 2 : 3;
  Halide::Region dims(5);
  dims[0] = {0, Lj};
  dims[1] = {0, H / chunk};
  dims[tile_dim] = {0, (H + Lj - 1) / Lj};
  dims[loop_dim] = {0, L};
  dims[4] = {0, T};
  Halide::RDom r(dims, "rec_r");
  jparts = {r[0], r[tile_dim]};
  jflat = r[tile_dim] * Lj + r[0];
  const Expr jr = jflat, k = r[1], loop = r[loop_dim];
  step = r[4];
  // sum + the chunk's terms of phase `ph`, in interleaved chains of FMAs
  // (FMA latency, not throughput, bounds one chain per vector). What a
  // statement holds (x86_recurrent_schedule.h):
  //  - where a row of a tile (Lj units) is one vector (AVX-512), one batch
  //    row at every batch size (the template unrolls a tile's rows, so each
  //    R vector, loaded once, serves them all): kSumChains chains. The
  //    nested vector of a tile's rows, one chain per vector (2 in a half
  //    tile), took a vbroadcastss + vpermps per term for one of its rows:
  //    rows unrolled with 4 chains made the taggers' layer kernels 0.89x
  //    (LSTM) and 0.93-0.98x (GRU) at batch 4 and 8, 2 or 8 chains slower
  //    (benchmarks/results/recurrent-matmul-2026-12-06.md);
  //  - with AVX2, from a tile of batch rows on, the tile (2 x 4 vectors),
  //    one chain each; rows unrolled measured 1.2-1.3x slower there. Below a
  //    tile, one row, kSumChains chains.
  // Each specialization folds the select to its form.
  constexpr int kSumChains = 4;  // 8 measured 1.35x slower for a row (recurrent-2026-12-03.md)
  auto chunk_sum = [&](Expr sum, const Phase &ph) {
    std::vector<Expr> terms;
    for (int kk = 0; kk < chunk; ++kk) {
      Expr kx = k * chunk + kk;
      terms.push_back(f(Rt(d, ph.gate, kx, jw(jr))) * ph.source(kx));
    }
    // sum + the terms in n interleaved chains, sum added last: the sum is
    // the last chunk's statement's store, so a chain starting from it would
    // wait for that store (and its chain); added last, only one add per
    // vector waits, and a statement's FMA chains overlap the last one's
    // (0.94-0.96x the taggers' time at batch 4 and 8 on one thread,
    // benchmarks/results/recurrent-2026-12-05.md).
    auto chained = [&](int n) {
      std::vector<Expr> chains(n);
      for (int kk = 0; kk < chunk; ++kk) {
        Expr &c = chains[kk % n];
        c = c.defined() ? c + terms[kk] : terms[kk];
      }
      Expr all = chains[0];
      for (int i = 1; i < n; ++i) all += chains[i];
      return sum + all;
    };
    const Expr row = chained(std::max(1, std::min(kSumChains, chunk / 2)));
    if (recurrent_row_statements(c.f32_lanes())) return row;
    return Halide::select(B >= Lb, chained(1), row);
  };
  Expr every_k = Halide::cast(Halide::Bool(), false), row;
  for (int l = 0; l < L; ++l) {
    if (loops[l].what == Loop::Sum) every_k = every_k || loop == l;
    row = l == 0 ? Expr(loops[l].row) : Halide::select(loop == l, loops[l].row, row);
  }
  // Rows past a batch smaller than a block are not computed (where the
  // batch is a block or more, a template proves this true and drops it).
  // From half a block on, a half tile whose first row is in the batch is
  // computed whole (its other rows from clamped reads), so that the
  // condition is one per half tile, not per vector lane.
  Expr row_in = bi < B;
  if (tile_min < Lb) row_in = Halide::select(B >= tile_min, bi / tile_min * tile_min < B, row_in);
  r.where((k == 0 || every_k) && (row_in || B >= Lb));
  Expr value;
  for (int l = L - 1; l >= 0; --l) {
    const Phase &ph = phases[loops[l].row];
    Expr v;
    if (loops[l].what == Loop::Init)
      v = ph.init(jr);
    else if (loops[l].what == Loop::Sum)
      v = chunk_sum(sum_at(loops[l].row, jr), ph);
    else
      v = ph.value(jr);
    value = l == L - 1 ? v : Halide::select(loop == l, v, value);
  }
  // Past a batch's sequence length the state stays as it was.
  if (c.has_input(4)) value = Halide::select(step < seq_len(bb), value, rec_at(jr, row, step));
  rec(r[0], bi, r[tile_dim], row, bo, d, step + 1) = value;
  Stage &rec_stage = c.add_stage(rec, StageKind::Recurrence, 5);
  rec_stage.batch = B;
  rec_stage.directions = D;
  rec_stage.phases_within_tiles = phases_within_tiles;
  // One direction's threads share its step's tiles (in two halves, one a
  // thread, x86_recurrent_schedule.cc) where a step pays for its forks and
  // joins many times over:
  // - where its products (2 G H^2 B flops) reach parallel_step_flops: with a
  //   fork and join a phase (2G + 2 a step), 16 MFLOP, about 100 us a step
  //   on one core (GRU, H 512: batch 16 1.5x faster on 2 threads; LSTM,
  //   H 128: batch 16, 2 MFLOP a step, 1.6x slower,
  //   recurrent-matmul-2026-12-06.md); with one a step (phases within
  //   tiles), 0.5 MFLOP (LSTM, H 128: 1.4x faster at batch 16, 0.26 MFLOP a
  //   step at batch 1 1.1-1.2x slower; H 256 at batch 1, 0.52 MFLOP, 1.5x
  //   faster, recurrent-threads-2026-12-06.md);
  // - at any batch where R (4 G H^2 bytes) reaches kParallelStepBytes, more
  //   than most of a core's L2 (2 MiB here): a step then streams R from the
  //   L3, and with two threads each core's L2 holds its half (GRU, H 384 and
  //   512, batch 1 to 8: 1.4-2.4x faster on 2 threads; LSTM, H 256, R 1 MiB,
  //   held in one core's L2, at batch 2 with a fork and join a phase: 1.7x
  //   slower, recurrent-threads-2026-12-06.md).
  const double parallel_step_flops = phases_within_tiles ? 0.5e6 : 16e6;
  constexpr double kParallelStepBytes = 1.5 * (1 << 20);
  if (D == 1 && Hd.is_const()) {
    rec_stage.parallel_tiles_batch =
        r_bytes >= kParallelStepBytes
            ? 1
            : static_cast<int>(std::ceil(parallel_step_flops / std::max(row_step_flops, 1.0)));
    rec_stage.tiles = static_cast<int>((Hd.as_const() + Lj - 1) / Lj);
  }

  // Outputs.
  auto rec_row = [&](const Expr &oh, int row, const Expr &at) {
    return rec(oh % Lj, b % Lb, oh / Lj, row, b / Lb, d, at);
  };
  if (c.has_output(0)) {
    Var ot("t"), oh("h");
    Expr len = seq_len(b);
    Expr so = Halide::select(reversed_dir(d), len - 1 - ot, ot);
    Expr y = Halide::select(ot < len, rec_row(oh, h_row, clamp_to(so, T) + 1), f(0));
    if (batch_first)
      c.define_output(0, {b, ot, d, oh}, y);
    else
      c.define_output(0, {ot, d, b, oh}, y);
  }
  auto state_out = [&](int out, int row) {
    if (!c.has_output(out)) return;
    Var oh("h");
    Expr v = rec_row(oh, row, T);
    if (batch_first)
      c.define_output(out, {b, d, oh}, v);
    else
      c.define_output(out, {d, b, oh}, v);
  };
  state_out(1, h_row);
  if (kind == Cell::Lstm) state_out(2, c_row);
}

}  // namespace

void register_recurrent_ops(OpRegistry &r) {
  for (const char *op : {"RNN", "GRU", "LSTM"}) r.add(op, 7, OpKind::Opaque, infer_recurrent, lower_recurrent);
}

}  // namespace disco
