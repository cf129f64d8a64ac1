// onednn.recurrence (targets/onednn/onednn_recurrence.cc, recurrent_cell.h):
// RNN, GRU (linear_before_reset) and LSTM nodes compiled with the oneDNN
// backend first run as its steps, and give the numbers of a double-precision
// recurrence written here from the ONNX spec, for every direction, both
// layouts, given initial states and all three outputs, at hidden sizes that
// are and are not whole vectors, and batches of one row, of whole and of
// partial chunks (AVX-512: LSTM chunks of up to 6 rows, GRU of 8). Forms the
// kernel does not compute stay with the host's recurrence. The ISA forms
// the CPU has (AVX2, scalar) are checked step by step against AVX-512's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "driver/session.h"
#include "frontend/graph_builder.h"
#include "targets/onednn/panel_gemm.h"
#include "targets/onednn/recurrent_cell.h"
#include "tests/support/model_references.h"
#include "tests/support/onednn_cases.h"
#include "tests/support/plan_steps.h"
#include "tests/support/tensors.h"

namespace disco {
namespace {

using namespace testing;

struct Form {
  std::string op = "LSTM";
  std::string direction = "bidirectional";
  int64_t layout = 0, hidden = 20;
  bool states = false;  // initial_h (and initial_c) given as graph inputs
};

Attribute attr_strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Strings;
  a.strings = std::move(v);
  return a;
}

int64_t gates_of(const std::string &op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

struct Outputs {
  std::vector<double> y, yh, yc;
};

// ONNX's recurrence in double: x [T, B, I] (layout 0) or [B, T, I].
Outputs reference(const Form &f, int64_t T, int64_t B, int64_t I, const std::vector<float> &x,
                  const std::vector<float> &w, const std::vector<float> &r, const std::vector<float> &bias,
                  const std::vector<float> &h0, const std::vector<float> &c0) {
  const int64_t H = f.hidden, G = gates_of(f.op), D = f.direction == "bidirectional" ? 2 : 1;
  const bool bf = f.layout != 0;
  Outputs o;
  o.y.assign(static_cast<size_t>(T * D * B * H), 0.0);
  o.yh.assign(static_cast<size_t>(D * B * H), 0.0);
  o.yc = o.yh;
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  auto state = [&](int64_t d, int64_t b) { return static_cast<size_t>((bf ? b * D + d : d * B + b) * H); };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!h0.empty()) h[j] = h0[state(d, b) + j];
        if (!c0.empty()) c[j] = c0[state(d, b) + j];
      }
      const bool rev = D == 2 ? d == 1 : f.direction == "reverse";
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = rev ? T - 1 - s : s;
        auto xw = [&](int64_t row) {
          double v = bias[d * 2 * G * H + row];
          for (int64_t i = 0; i < I; ++i) v += x[(bf ? b * T + t : t * B + b) * I + i] * w[(d * G * H + row) * I + i];
          return v;
        };
        auto hr = [&](int64_t row) {
          double v = bias[d * 2 * G * H + G * H + row];
          for (int64_t k = 0; k < H; ++k) v += h[k] * r[(d * G * H + row) * H + k];
          return v;
        };
        std::vector<double> next(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          if (f.op == "RNN") {
            next[j] = std::tanh(xw(j) + hr(j));
          } else if (f.op == "GRU") {
            const double z = sig(xw(j) + hr(j)), rr = sig(xw(H + j) + hr(H + j));
            const double hh = std::tanh(xw(2 * H + j) + rr * hr(2 * H + j));
            next[j] = (1 - z) * hh + z * h[j];
          } else {
            const double i = sig(xw(j) + hr(j)), oo = sig(xw(H + j) + hr(H + j));
            const double fg = sig(xw(2 * H + j) + hr(2 * H + j)), cc = std::tanh(xw(3 * H + j) + hr(3 * H + j));
            c[j] = fg * c[j] + i * cc;
            next[j] = oo * std::tanh(c[j]);
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) o.y[((bf ? (b * T + t) * D + d : (t * D + d) * B + b) * H + j)] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) o.yh[state(d, b) + j] = h[j], o.yc[state(d, b) + j] = c[j];
    }
  return o;
}

TensorData from_double(const std::vector<double> &v, std::vector<int64_t> shape) {
  TensorData t(DType::F32, shape);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_as<float>()[i] = static_cast<float>(v[i]);
  return t;
}

// The node with every output, compiled once; run at each batch.
void check_form(const Form &f, bool want_step = true) {
  const int64_t H = f.hidden, G = gates_of(f.op), D = f.direction == "bidirectional" ? 2 : 1, I = 5;
  const bool bf = f.layout != 0, lstm = f.op == "LSTM";
  const std::vector<float> w = sine_wave(D * G * H * I, 0.7f, 0.1f, 0.5f),
                           r = sine_wave(D * G * H * H, 1.3f, 0.2f, 0.3f),
                           bias = sine_wave(D * 2 * G * H, 0.9f, 0.3f, 0.5f);
  GraphBuilder g;
  auto x = g.input("x", DType::F32, bf ? Shape{sym("batch"), sym("seq"), I} : Shape{sym("seq"), sym("batch"), I});
  const Shape states = bf ? Shape{sym("batch"), D, H} : Shape{D, sym("batch"), H};
  std::vector<std::string> in = {x, g.constant("W", f32({D, G * H, I}, w)), g.constant("R", f32({D, G * H, H}, r)),
                                 g.constant("B", f32({D, 2 * G * H}, bias))};
  if (f.states) {
    in.push_back("");  // sequence_lens omitted
    in.push_back(g.input("h0", DType::F32, states));
    if (lstm) in.push_back(g.input("c0", DType::F32, states));
  }
  Attributes a = testing::attrs(
      {{"hidden_size", attr_int(H)}, {"direction", attr_string(f.direction)}, {"layout", attr_int(f.layout)}});
  if (f.op == "GRU") a["linear_before_reset"] = attr_int(1);
  auto outs = g.op_n(f.op, in, lstm ? 3 : 2, a);
  for (auto &o : outs) g.output(o);
  Session sess(g.build(), "recurrence", "", onednn_first());
  const std::string what = f.op + " " + f.direction + " layout " + std::to_string(f.layout) + " H " + std::to_string(H);
  const PlanStep *step = find_step(sess.last_compile().plan, "onednn.recurrence");
  ASSERT_EQ(step != nullptr, want_step) << what;
  for (int64_t B : {1, 3, 7, 11}) {
    const int64_t T = 4;
    const std::vector<float> xs = sine_wave(T * B * I, 0.37f, 0.5f);
    const std::vector<float> h0 = f.states ? sine_wave(D * B * H, 0.61f, 0.2f, 0.8f) : std::vector<float>{},
                             c0 = f.states && lstm ? sine_wave(D * B * H, 0.43f, 0.7f, 0.9f) : std::vector<float>{};
    std::vector<TensorData> feeds = {f32(bf ? std::vector<int64_t>{B, T, I} : std::vector<int64_t>{T, B, I}, xs)};
    const std::vector<int64_t> ss = bf ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
    if (f.states) {
      feeds.push_back(f32(ss, h0));
      if (lstm) feeds.push_back(f32(ss, c0));
    }
    auto got = sess.run(feeds);
    const Outputs want = reference(f, T, B, I, xs, w, r, bias, h0, c0);
    const std::string at = what + " batch " + std::to_string(B);
    expect_close(got.at(0),
                 from_double(want.y, bf ? std::vector<int64_t>{B, T, D, H} : std::vector<int64_t>{T, D, B, H}),
                 at + " Y");
    expect_close(got.at(1), from_double(want.yh, ss), at + " Y_h");
    if (lstm) expect_close(got.at(2), from_double(want.yc, ss), at + " Y_c");
  }
}

TEST(OnednnRecurrence, CellsMatchTheSpecInEveryDirectionAndLayout) {
  for (const char *op : {"LSTM", "GRU", "RNN"})
    for (const char *dir : {"forward", "reverse", "bidirectional"})
      for (int64_t layout : {0, 1}) check_form({op, dir, layout, 20, false});
}

TEST(OnednnRecurrence, WholeVectorsOfUnitsAndGivenStatesMatchTheSpec) {
  for (const char *op : {"LSTM", "GRU", "RNN"}) {
    check_form({op, "bidirectional", 0, 32, true});
    check_form({op, "forward", 1, 48, true});
  }
}

// A step split between two threads (one direction whose step is worth it)
// meets at a barrier each step: the numbers are those of one thread.
TEST(OnednnRecurrence, OneDirectionSplitBetweenTwoThreadsMatchesTheSpec) {
  check_form({"LSTM", "forward", 0, 200, false});
  check_form({"GRU", "reverse", 1, 260, true});
}

// Forms the kernel does not compute stay with the host's recurrence.
TEST(OnednnRecurrence, OtherFormsStayWithTheHost) {
  auto step_of = [](const std::string &op, Attributes a) {
    GraphBuilder g;
    auto x = g.input("x", DType::F32, {sym("seq"), sym("batch"), 3});
    const int64_t G = gates_of(op), H = 4;
    a["hidden_size"] = attr_int(H);
    auto y = g.op(op,
                  {x, g.constant("W", f32({1, G * H, 3}, sine_wave(G * H * 3, 0.3f, 0.1f))),
                   g.constant("R", f32({1, G * H, H}, sine_wave(G * H * H, 0.5f, 0.2f)))},
                  a);
    g.output(y);
    Session sess(g.build(), "recurrence", "", onednn_first());
    return find_step(sess.last_compile().plan, "onednn.recurrence") != nullptr;
  };
  EXPECT_TRUE(step_of("LSTM", {}));
  EXPECT_TRUE(step_of("GRU", testing::attrs({{"linear_before_reset", attr_int(1)}})));
  EXPECT_FALSE(step_of("GRU", {})) << "without linear_before_reset";
  EXPECT_FALSE(step_of("LSTM", testing::attrs({{"clip", attr_float(3.0f)}})));
  EXPECT_FALSE(step_of("LSTM", testing::attrs({{"input_forget", attr_int(1)}})));
  EXPECT_FALSE(step_of("RNN", testing::attrs({{"activations", attr_strings({"Relu"})}})));
  EXPECT_TRUE(step_of("RNN", testing::attrs({{"activations", attr_strings({"Tanh"})}})));
}

// The AVX2 and scalar forms (where the CPU has them) step for step against
// the AVX-512 one (where it has that), on a random-looking LSTM and GRU step.
TEST(OnednnRecurrence, IsaFormsAgreeWithEachOther) {
  struct Isa {
    int lanes;
    void (*step)(const RecurrentCell &, int64_t, int64_t, int64_t, int64_t, const float *, float *, float *);
    bool available;
  };
  const std::vector<Isa> isas = {{16, recurrent_step_avx512, panel_gemm_cpu()},
                                 {8, recurrent_step_avx2, panel_gemm_avx2_cpu()},
                                 {1, recurrent_step_scalar, true}};
  for (RecurrentCellKind kind : {RecurrentCellKind::Lstm, RecurrentCellKind::Gru, RecurrentCellKind::Rnn}) {
    const int64_t H = 37, B = 5, G = recurrent_gates(kind);
    const std::vector<float> r = sine_wave(G * H * H, 0.77f, 0.3f, 0.2f), proj = sine_wave(B * G * H, 0.41f, 0.1f),
                             h = sine_wave(B * H, 0.29f, 0.6f), cs = sine_wave(B * H, 0.53f, 0.4f),
                             rbh = sine_wave(H, 0.9f, 0.0f);
    std::vector<std::vector<float>> results;
    for (const Isa &isa : isas) {
      if (!isa.available) continue;
      RecurrentCell c;
      c.kind = kind, c.steps = 1, c.batch = B, c.hidden = H, c.lanes = isa.lanes;
      c.projections = proj.data();
      const int64_t P = c.padded(), W = isa.lanes;
      std::vector<float> packed(static_cast<size_t>(c.packed_r_floats()), 0.0f), hp(B * P, 0.0f), hn(B * P),
          cell(B * P, 0.0f), rb(P, 0.0f), y(B * H);
      for (int64_t tile = 0; tile < c.tiles(); ++tile)
        for (int64_t k = 0; k < H; ++k)
          for (int64_t g = 0; g < G; ++g)
            for (int64_t l = 0; l < W && tile * W + l < H; ++l)
              packed[((tile * H + k) * G + g) * W + l] = r[(g * H + tile * W + l) * H + k];
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) hp[b * P + j] = h[b * H + j], cell[b * P + j] = cs[b * H + j];
      for (int64_t j = 0; j < H; ++j) rb[j] = rbh[j];
      c.packed_r = packed.data(), c.gru_rbh = rb.data(), c.y = y.data();
      isa.step(c, 0, 0, 0, c.tiles(), hp.data(), hn.data(), cell.data());
      std::vector<float> out = y;
      if (kind == RecurrentCellKind::Lstm)
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < H; ++j) out.push_back(cell[b * P + j]);
      results.push_back(out);
    }
    for (size_t i = 1; i < results.size(); ++i)
      for (size_t e = 0; e < results[0].size(); ++e)
        ASSERT_NEAR(results[i][e], results[0][e], 2e-6 + 2e-6 * std::fabs(results[0][e]))
            << "kind " << static_cast<int>(kind) << " form " << i << " element " << e;
  }
}

}  // namespace
}  // namespace disco
